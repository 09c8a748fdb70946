import pytest

from spacy_siamese.corpora import (
    DocumentFormatError,
    PairFormatError,
    read_documents,
    strip_header,
    strip_quoting,
    strip_signature,
)

from .util import make_tar

MESSAGE = """From: someone@example.com
Subject: Re: {subject}
Organization: Example University
Lines: 9

In article <1@example.com> other@example.com writes:
> a quoted line about {subject}
{body}

--
Someone, signature line
"""
GROUPS = {
    "sci.space": ["The shuttle launch was delayed by weather.", "Orbit insertion burns use fuel."],
    "rec.autos": ["My car engine needs new oil.", "The sedan has a V6 engine.", "Tires wear out fast."],
}


def newsgroups_archive(tmp_path, extra=()):
    members = [
        (f"20news-bydate-train/{group}/{100 + i}", MESSAGE.format(subject=group, body=body))
        for group, bodies in GROUPS.items()
        for i, body in enumerate(bodies)
    ]
    return make_tar(tmp_path / "20news-bydate-train.tar.gz", members + list(extra))


def test_20news_reader_and_stripping(tmp_path):
    path = newsgroups_archive(tmp_path)
    docs = read_documents("20news", path)
    assert len(docs) == 5 and {d.labels for d in docs} == {("sci.space",), ("rec.autos",)}
    assert next(d.text for d in docs if d.id.endswith("rec.autos/100")) == "My car engine needs new oil."
    raw = read_documents("20news", path, strip_headers=False, strip_quotes=False, strip_signatures=False)
    raw_text = next(d.text for d in raw if d.id.endswith("rec.autos/100"))
    assert "Subject:" in raw_text and "> a quoted line" in raw_text and "signature line" in raw_text


@pytest.mark.parametrize(
    "text,header,quoting,signature",
    [
        ("H: 1\n\nbody\n\nmore", "body\n\nmore", "H: 1\n\nbody\n\nmore", "H: 1\n\nbody"),
        ("no blank line", "", "no blank line", "no blank line"),
        ("", "", "", ""),
        ("a\n| piped\nb said: x\nIn article y\n>q", "", "a", "a\n| piped\nb said: x\nIn article y\n>q"),
        ("\n\nfirst\n----\nsig\n\n", "first\n----\nsig\n\n", "\n\nfirst\n----\nsig\n\n", "first"),
        ("only\n\n", "", "only\n\n", "only\n\n"),
    ],
)
def test_strip_functions(text, header, quoting, signature):
    assert strip_header(text) == header
    assert strip_quoting(text) == quoting
    assert strip_signature(text) == signature


def test_20news_malformed_members(tmp_path):
    path = newsgroups_archive(
        tmp_path,
        [
            ("20news-bydate-train/stray-file", "x\n\ny"),
            ("20news-bydate-train/rec.autos/999", b"Subject: x\n\n\xff\xfe bad"),
        ],
    )
    with pytest.raises(DocumentFormatError, match=r"20news-bydate-train.tar.gz:20news-bydate-train/stray-file"):
        read_documents("20news", path)
    with pytest.warns(UserWarning, match=r"Skipped 2 malformed record\(s\).*invalid UTF-8"):
        docs = read_documents("20news", path, lenient=True)
    assert len(docs) == 5
    assert issubclass(DocumentFormatError, PairFormatError)
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(b"not a tar archive")
    with pytest.raises(DocumentFormatError, match="not a readable tar archive"):
        read_documents("20news", bad)


def test_20news_official_archive_split(tmp_path):
    """The official 20news-bydate.tar.gz holds both halves: `split` picks one."""
    members = [
        (f"20news-bydate-{half}/{group}/{i}", MESSAGE.format(subject=group, body=f"{half} body {i}"))
        for half in ("train", "test")
        for i, group in enumerate(GROUPS)
    ]
    path = make_tar(tmp_path / "20news-bydate.tar.gz", members)
    train = read_documents("20news", path)  # split="train" by default
    assert {d.id.split("/")[0] for d in train} == {"20news-bydate-train"} and len(train) == 2
    test = read_documents("20news", path, split="test")
    assert {d.id.split("/")[0] for d in test} == {"20news-bydate-test"} and len(test) == 2
    assert len(read_documents("20news", path, split="all")) == 4
    with pytest.raises(DocumentFormatError, match="no documents found"):
        read_documents("20news", newsgroups_archive(tmp_path), split="test")  # the train half alone
    with pytest.raises(ValueError, match="split must be"):
        read_documents("20news", path, split="dev")


def test_20news_archive_without_a_test_root_has_no_test_split(tmp_path):
    """An archive whose root is neither `*-train` nor `*-test` (20news-18828) is training data
    only: split="test" must not return its documents as test documents."""
    members = [(f"20news-18828/{group}/{i}", MESSAGE.format(subject=group, body="b")) for i, group in enumerate(GROUPS)]
    path = make_tar(tmp_path / "20news-18828.tar.gz", members)
    assert len(read_documents("20news", path)) == len(read_documents("20news", path, split="all")) == 2
    with pytest.raises(DocumentFormatError, match="no documents found"):
        read_documents("20news", path, split="test")


def test_20news_directory_is_an_error_asking_for_the_archive(tmp_path):
    with pytest.raises(DocumentFormatError, match=r"is a directory.*20news-bydate.tar.gz"):
        read_documents("20news", tmp_path)


def test_unknown_collection_and_missing_path(tmp_path):
    with pytest.raises(ValueError, match="Unknown document collection"):
        read_documents("usenet", tmp_path)
    with pytest.raises(FileNotFoundError, match="nope"):
        read_documents("20news", tmp_path / "nope")
