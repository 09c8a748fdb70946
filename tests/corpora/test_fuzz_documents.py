"""Property-based tests of the document collection readers (issue 14).

Every input either raises a DocumentFormatError naming the file and the record, or
yields one document per record; in lenient mode the skipped records plus the documents
equal the records.
"""

import csv
import io
import warnings
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from spacy_siamese.corpora import (
    DocRecord,
    DocumentFormatError,
    read_documents,
    strip_header,
    strip_quoting,
    strip_signature,
    write_documents,
)

from .util import PROFILES, make_tar, skipped_count

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
LINES = st.lists(
    st.sampled_from(["", "  ", "--", "> quoted", "| piped", "In article x", "he writes:", "said: y", "a", "b c"])
    | TEXT,
    max_size=12,
)


def _read(
    collection: str, path: Path, **kwargs
) -> Tuple[Optional[List[DocRecord]], Optional[Tuple[List[DocRecord], int]]]:
    """(strict documents or None if it raised, (lenient documents, skipped) or None if it raised);
    every error names the file."""
    strict = lenient = None
    try:
        strict = read_documents(collection, path, **kwargs)
    except DocumentFormatError as err:
        assert str(path) in err.path and str(err).startswith(err.path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            lenient = (read_documents(collection, path, lenient=True, **kwargs), skipped_count(caught))
        except DocumentFormatError as err:
            assert str(path) in err.path
    if strict is not None:
        assert lenient == (strict, 0)
    return strict, lenient


@pytest.mark.parametrize("profile", PROFILES)
def test_strip_functions_match_scikit_learn(profile):
    """Our 20news stripping gives the same text as scikit-learn's reference functions."""
    reference = pytest.importorskip("sklearn.datasets._twenty_newsgroups")

    @profile
    @given(lines=LINES, end=st.sampled_from(["", "\n", "\n\n"]))
    def check(lines, end):
        text = "\n".join(lines) + end
        assert strip_header(text) == reference.strip_newsgroup_header(text)
        assert strip_quoting(text) == reference.strip_newsgroup_quoting(text)
        assert strip_signature(text) == reference.strip_newsgroup_footer(text)

    check()


MEMBER_NAME = st.one_of(
    st.builds(
        "20news-bydate-{}/{}/{}".format,
        st.sampled_from(["train", "test"]),
        st.sampled_from(["sci.space", "rec.autos"]),
        st.integers(1, 99),
    ),
    st.sampled_from(["stray", "20news-bydate-train/stray", "a/b/c/d", "20news-bydate-train//1"]),
)
MEMBER_BODY = st.one_of(
    LINES.map("\n".join),
    LINES.map("\r\n".join),
    st.binary(max_size=60),
)


@pytest.mark.parametrize("profile", PROFILES)
def test_20news_archive(tmp_path, profile):
    @profile
    @given(
        members=st.lists(st.tuples(MEMBER_NAME, MEMBER_BODY), min_size=1, max_size=8),
        split=st.sampled_from(["train", "test", "all"]),
        strip=st.booleans(),
    )
    def check(members, split, strip):
        path = make_tar(tmp_path / "20news.tar.gz", members)
        flags = {"strip_headers": strip, "strip_quotes": strip, "strip_signatures": strip}
        strict, lenient = _read("20news", path, split=split, **flags)
        named = [(n, b) for n, b in members if len(n.split("/")) == 3 and all(n.split("/"))]
        in_split = [(n, b) for n, b in named if split == "all" or n.startswith(f"20news-bydate-{split}/")]
        n_records = len(members) - len(named) + len(in_split)
        if lenient is not None:
            assert len(lenient[0]) + lenient[1] == n_records
            assert {d.id for d in lenient[0]} <= {n for n, _ in in_split}
        if strict is not None:
            assert len(strict) == n_records == len(in_split)
            if not strip:
                texts = [b.decode("utf8") if isinstance(b, bytes) else b for _, b in in_split]
                expected = [text.replace("\r\n", "\n").strip() for text in texts]
                assert [d.text for d in strict] == expected
                assert [d.labels for d in strict] == [(n.split("/")[1],) for n, _ in in_split]

    check()


SAFE = st.text(st.characters(max_codepoint=255, exclude_categories=("Cs", "Cc"), exclude_characters="<>&"), max_size=30)
TOPIC = st.text(st.sampled_from("abcdefgh-"), min_size=1, max_size=6)


@st.composite
def reuters_story(draw, newid: int) -> Tuple[str, Optional[DocRecord], dict]:
    attrs = {
        "TOPICS": draw(st.sampled_from(["YES", "NO", "BYPASS"])),
        "LEWISSPLIT": draw(st.sampled_from(["TRAIN", "TEST", "NOT-USED"])),
    }
    topics = draw(st.lists(TOPIC, max_size=3))
    title, body = draw(SAFE), draw(SAFE)
    text = f"<TITLE>{title}</TITLE><BODY>{body}</BODY>" if draw(st.booleans()) else f"\n{title}\n"
    sgm = (
        f'<REUTERS TOPICS="{attrs["TOPICS"]}" LEWISSPLIT="{attrs["LEWISSPLIT"]}" NEWID="{newid}">\n'
        f"<TOPICS>{''.join(f'<D>{t}</D>' for t in topics)}</TOPICS>\n<TEXT>{text}</TEXT>\n</REUTERS>\n"
    )
    content = ("\n".join([title, body]) if "<TITLE>" in text else f" \n{title}\n ").strip()
    record = DocRecord(content, tuple(topics), topics[0], f"NEWID={newid}") if topics else None
    return sgm, record, attrs


@pytest.mark.parametrize("profile", PROFILES)
def test_reuters_stories(tmp_path, profile):
    @profile
    @given(data=st.data(), split=st.sampled_from(["train", "test", "all"]), n=st.integers(1, 6), bad=st.booleans())
    def check(data, split, n, bad):
        stories = [data.draw(reuters_story(newid)) for newid in range(1, n + 1)]
        sgm = "".join(s[0] for s in stories)
        if bad:
            sgm += '<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN">\n<TOPICS><D>x</D></TOPICS><TEXT>t</TEXT>\n</REUTERS>\n'
        (tmp_path / "reut2-000.sgm").write_text(sgm, encoding="latin-1")
        kept = [
            record
            for _, record, attrs in stories
            if record is not None
            and (split == "all" or (attrs["TOPICS"] == "YES" and attrs["LEWISSPLIT"] == split.upper()))
        ]
        strict, lenient = _read("reuters", tmp_path, split=split)
        with_text = [r for r in kept if r.text]
        if lenient is not None:
            assert lenient[0] == with_text and lenient[1] == len(kept) - len(with_text) + bad
        if strict is not None:
            assert strict == kept and not bad

    check()


@pytest.mark.parametrize("profile", PROFILES)
def test_reuters_random_text(tmp_path, profile):
    pieces = st.sampled_from(
        list('<>/ "=\nREUTSOPICDXBYLWNA') + ["<REUTERS ", "</REUTERS>", "<D>", "<TEXT>", 'NEWID="1"']
    )

    @profile
    @given(text=st.lists(pieces, max_size=80).map("".join))
    def check(text):
        (tmp_path / "reut2-000.sgm").write_text(text, encoding="latin-1")
        _read("reuters", tmp_path, split="all")

    check()


NEWS_HEADER = ["ID", "TITLE", "URL", "PUBLISHER", "CATEGORY", "STORY", "HOSTNAME", "TIMESTAMP"]


@pytest.mark.parametrize("profile", PROFILES)
def test_news_csv(tmp_path, profile):
    title = st.text(st.sampled_from(list('ab ,"\r\né')), max_size=12) | TEXT

    @profile
    @given(
        rows=st.lists(st.tuples(title, st.sampled_from(["good", "good", "short", "empty"])), min_size=1, max_size=8),
        end=st.sampled_from(["\n", "\r\n"]),
        quote_all=st.booleans(),
        bom=st.booleans(),
    )
    def check(rows, end, quote_all, bom):
        out = io.StringIO()
        writer = csv.writer(out, lineterminator=end, quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
        writer.writerow(NEWS_HEADER)
        good, n_bad = [], 0
        for k, (text, kind) in enumerate(rows):
            if not quote_all and end == "\n":
                text = text.replace("\r", "")  # the csv module leaves a lone CR unquoted here
            if kind == "good" and text.strip():
                writer.writerow([k, text, "http://x", "P", "b", f"s{k % 2}", "x.com", k])
                good.append(DocRecord(text.strip(), (f"s{k % 2}",), "b", str(k)))
            else:
                writer.writerow([k, text, "http://x"] if kind == "short" else [k, " ", "u", "P", "b", "s", "x", k])
                n_bad += 1
        path = tmp_path / "news.csv"
        path.write_bytes((("\ufeff" if bom else "") + out.getvalue()).encode("utf8"))
        strict, lenient = _read("news", path)
        if good:
            assert lenient == (good, n_bad)
        assert (strict is not None) == bool(good and not n_bad)

    check()


# JSON lines of documents, blank lines, and malformed lines, so that some files read (in whole or in part).
GOOD_LINE = st.sampled_from(['{"text": "t", "labels": ["x"]}', '{"text": "u", "label": "y", "id": 3}', "", " \t"])
BAD_LINE = st.sampled_from(['{"text": "t"}', "[1]"]) | st.text(st.sampled_from(list('{}[]":, \tab1')), max_size=10)
DOC_LINES = st.lists(GOOD_LINE | BAD_LINE, max_size=8) | st.lists(GOOD_LINE, max_size=5)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("collection", ["news", "jsonl"])
def test_random_bytes(tmp_path, profile, collection):
    @profile
    @given(
        raw=st.binary(max_size=300)
        | st.text(st.sampled_from(list('{}[]":,\t\r\n ab1')), max_size=80).map(str.encode)
        | st.tuples(DOC_LINES, st.sampled_from(["\n", "\r\n", "\r"])).map(lambda t: t[1].join(t[0]).encode())
    )
    def check(raw):
        path = tmp_path / "docs.txt"
        path.write_bytes(raw)
        strict, lenient = _read(collection, path)
        if collection == "jsonl" and lenient is not None:
            lines = raw.decode("utf8", errors="replace").replace("\r\n", "\n").replace("\r", "\n").split("\n")
            assert len(lenient[0]) + lenient[1] == sum(1 for line in lines if line.lstrip("\ufeff").strip())

    check()


@pytest.mark.parametrize("profile", PROFILES)
def test_jsonl_documents_round_trip(tmp_path, profile):
    doc = st.builds(DocRecord, TEXT, st.lists(TEXT.filter(bool), min_size=1, max_size=3).map(tuple), TEXT, TEXT)

    @profile
    @given(docs=st.lists(doc, min_size=1, max_size=8))
    def check(docs):
        path = tmp_path / "docs.jsonl"
        write_documents(docs, path)
        assert read_documents("jsonl", path) == docs

    check()
