import bz2
import gzip
import lzma
import warnings

import pytest

from spacy_siamese.corpora import PAIR_FORMATS, EmptyTextWarning, PairFormatError, PairRecord, detect_format, read_pairs

from .test_bimpm import BIMPM
from .test_stackexchange import STACKEXCHANGE
from .test_tsv import QUORA_MIRROR, QUORA_OFFICIAL
from .util import check_empty_text_warning, error_for, read_warned, write


@pytest.mark.parametrize(
    "name,text,expected",
    [
        ("official.tsv", QUORA_OFFICIAL, "tsv"),
        ("mirror.tsv", QUORA_MIRROR, "tsv"),
        ("dev.tsv", BIMPM, "bimpm"),
        ("askubuntu.tsv", STACKEXCHANGE, "stackexchange"),
        ("pairs.jsonl", '{"text1": "a", "text2": "b", "label": 1}\n', "jsonl"),
        ("pairs.json", '{"text1": "a", "text2": "b", "label": 1}\n', "jsonl"),
        ("pairs.txt", '\n{"text1": "a", "text2": "b", "label": 1}\n', "jsonl"),
    ],
)
def test_auto_detection(tmp_path, name, text, expected):
    path = write(tmp_path, name, text)
    assert detect_format(path) == expected
    assert list(read_pairs(path)) == list(read_pairs(path, format=expected))


def test_auto_detection_fails_clearly(tmp_path):
    path = write(tmp_path, "mystery.tsv", "\nfoo\tbar\n")
    err = error_for(path)
    assert "mystery.tsv:2:" in str(err)
    assert "could not detect" in str(err)
    for name in PAIR_FORMATS:
        assert name in str(err)


@pytest.mark.parametrize(
    "name,fmt,text,line,reason",
    [
        (
            "dev.tsv",
            "bimpm",
            "1\ta\tb\t1\n0\ta\tb\n",
            2,
            "expected 4 tab-separated fields (label, text1, text2, id), found 3",
        ),
        ("dev.tsv", "bimpm", "1\ta\tb\t1\n\n1\ta\tb\t2\t3\n", 3, "found 5"),
        ("dev.tsv", "bimpm", "1\ta\tb\t1\nyes\ta\tb\t2\n", 2, "is not a number"),
        ("dev.tsv", "bimpm", "1\ta\tb\t1\n0.5\ta\tb\t2\n", 2, "expected label 0 or 1"),
        ("mirror.tsv", "tsv", "label\tquestion1\tquestion2\tquora_id\n0\ta\tb\t1\n2\ta\tb\t1\n", 3, "outside [0, 1]"),
        ("mirror.tsv", "tsv", "label\tquestion1\tquestion2\tquora_id\n0\ta\tb\n", 2, "expected 4 tab-separated fields"),
        ("mirror.tsv", "tsv", "label\tquestion1\tquestion2\tquora_id\n-0.5\ta\tb\t1\n", 2, "outside [0, 1]"),
        ("se.tsv", "stackexchange", "duplicate\ta\tb\nmaybe\ta\tb\n", 2, "'duplicate' or 'non-duplicate'"),
        ("se.tsv", "stackexchange", "duplicate\ta<p>b</p>\n", 1, "expected 3 tab-separated fields"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": "b", "label": 1}\n{"text1": "a",\n', 2, "invalid JSON"),
        ("p.jsonl", "jsonl", '\n{"text1": "a", "label": 1}\n', 2, "missing key(s) 'text2'"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": "b", "label": "1"}\n', 1, "'label' must be a number"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": null, "label": 1}\n', 1, "'text2' must be a string"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": "b", "label": 1.5}\n', 1, "outside [0, 1]"),
        ("p.jsonl", "jsonl", '{"text1": "a", "text2": "b", "label": NaN}\n', 1, "outside [0, 1]"),
        ("p.jsonl", "jsonl", '["a", "b", 1]\n', 1, "expected a JSON object"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, name, fmt, text, line, reason):
    path = write(tmp_path, name, text)
    err = error_for(path, format=fmt)
    assert str(err).startswith(f"{path}:{line}: ")
    assert reason in str(err)
    assert err.line == line and err.path == str(path)
    assert error_for(path).line == line  # auto-detection agrees on where the error is


def test_tsv_header_missing_column(tmp_path):
    path = write(tmp_path, "bad.tsv", "\nlabel\tq1\tq2\n1\ta\tb\n")
    err = error_for(path, format="tsv", lenient=True)
    assert str(err).startswith(f"{path}:2: ")
    assert "columns found: label, q1, q2" in str(err)


def test_invalid_utf8_names_line(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_bytes(b"1\ta\tb\t1\n0\tcaf\xe9\tb\t2\n1\tc\td\t3\n")
    err = error_for(path, format="bimpm")
    assert str(err).startswith(f"{path}:2: invalid UTF-8")
    with pytest.warns(UserWarning, match="Skipped 1 malformed line"):
        assert [r.line for r in read_pairs(path, lenient=True)] == [1, 3]


def test_crlf_line_endings_and_cr_only_is_named(tmp_path):
    path = write(tmp_path, "dev.tsv", BIMPM.replace("\n", "\r\n"))
    assert list(read_pairs(path)) == list(read_pairs(write(tmp_path, "lf.tsv", BIMPM)))
    path = write(tmp_path, "mac.tsv", BIMPM.replace("\n", "\r"))
    with pytest.raises(PairFormatError, match=r"mac\.tsv:1: the file ends its lines with a bare CR"):
        list(read_pairs(path))


def test_lenient_skips_and_warns_once(tmp_path):
    path = write(tmp_path, "dev.tsv", "1\ta\tb\t1\n0\tmissing\t2\n7\tc\td\t3\n0\te\tf\t4\n1\tg\th\n")
    with pytest.warns(UserWarning) as record:
        records = list(read_pairs(path, format="bimpm", lenient=True))
    assert [(r.text1, r.line) for r in records] == [("a", 1), ("e", 4)]
    assert len(record) == 1
    message = str(record[0].message)
    assert "Skipped 3 malformed line(s)" in message and "dev.tsv" in message
    assert "line 2:" in message and "line 3:" in message and "line 5:" in message


def test_lenient_without_errors_does_not_warn(tmp_path):
    path = write(tmp_path, "dev.tsv", BIMPM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(read_pairs(path, lenient=True))) == 3


def test_empty_texts_are_kept_and_named_by_line(tmp_path):
    """Empty questions in a Quora-style file: kept, and their lines (where the record
    starts, after a question over two lines) named in one warning."""
    text = (
        QUORA_OFFICIAL
        + "3\t7\t8\t\tWhy?\t0\n"
        + '4\t9\t10\t"Is a quoted\nquestion over lines kept?"\t" "\t1\n'
        + "5\t11\t12\tGood?\tFine.\t0\n"
    )
    path = write(tmp_path, "quora_duplicate_questions.tsv", text)
    records, caught = read_warned(path)
    assert [(r.text1, r.text2, r.line) for r in records[3:5]] == [
        ("", "Why?", 6),
        ("Is a quoted\nquestion over lines kept?", " ", 7),
    ]
    assert len(records) == 6
    check_empty_text_warning(caught, path, records)
    assert [w.category for w in caught] == [EmptyTextWarning]
    assert "2 of the 6 pair(s)" in str(caught[0].message) and "(line 6, 7)" in str(caught[0].message)


def test_many_empty_texts_list_the_first_lines_and_malformed_ones_are_apart(tmp_path):
    lines = ["label\ttext1\ttext2"] + [f"1\t\t{k}" for k in range(7)] + ["x\ta\tb", "0\ta\tb"]
    path = write(tmp_path, "pairs.tsv", "\n".join(lines) + "\n")
    records, caught = read_warned(path, lenient=True)
    assert len(records) == 8 and [r.line for r in records if not r.text1] == [2, 3, 4, 5, 6, 7, 8]
    check_empty_text_warning(caught, path, records)
    messages = sorted(str(w.message) for w in caught)
    assert "(line 2, 3, 4, 5, 6 and 2 more)" in messages[0] and messages[1].startswith("Skipped 1 malformed line(s)")


def test_empty_text_warning_counts_the_pairs_read(tmp_path):
    text = "".join(f'{{"text1": "", "text2": "b", "label": {k % 2}}}\n' for k in range(4))
    path = write(tmp_path, "pairs.jsonl", text)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reader = read_pairs(path)
        assert next(reader) == PairRecord("", "b", 0.0, 1)
        reader.close()  # stopped early, e.g. by a reader's limit
    assert [str(w.message).split(" read")[0] for w in caught] == ["1 of the 1 pair(s)"]


def test_files_without_empty_texts_do_not_warn(tmp_path):
    for name, text in [("quora.tsv", QUORA_OFFICIAL), ("dev.tsv", BIMPM), ("askubuntu.tsv", STACKEXCHANGE)]:
        path = write(tmp_path, name, text)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert list(read_pairs(path))


@pytest.mark.parametrize("text", ["", "\n\n", "label\tquestion1\tquestion2\tquora_id\n"])
def test_no_pairs(tmp_path, text):
    path = write(tmp_path, "empty.tsv", text)
    err = error_for(path)
    assert f"no pairs found in {path}" in str(err)


def test_no_pairs_after_skipping(tmp_path):
    path = write(tmp_path, "dev.tsv", "1\ta\tb\n")
    with pytest.warns(UserWarning, match="Skipped 1"):
        err = error_for(path, format="bimpm", lenient=True)
    assert "no pairs found" in str(err)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.tsv"):
        read_pairs(tmp_path / "nope.tsv")
    with pytest.raises(ValueError, match="is a directory"):
        read_pairs(tmp_path, format="tsv")


def test_unknown_format(tmp_path):
    path = write(tmp_path, "dev.tsv", BIMPM)
    with pytest.raises(ValueError, match="Unknown pair format"):
        read_pairs(path, format="csv")


def test_error_pickles():
    import pickle

    err = pickle.loads(pickle.dumps(PairFormatError("a.tsv", 3, "bad")))
    assert str(err) == "a.tsv:3: bad" and err.line == 3


NOT_TEXT = [
    (gzip.compress, "gzip-compressed: decompress it first"),
    (bz2.compress, "bzip2-compressed: decompress it first"),
    (lzma.compress, "xz-compressed: decompress it first"),
    (lambda data: data.decode("utf8").encode("utf16"), "UTF-16 text: save it as UTF-8"),
]


@pytest.mark.parametrize("fmt", ["auto", *sorted(set(PAIR_FORMATS) - {"twitter_url"})])
@pytest.mark.parametrize("pack,reason", NOT_TEXT)
def test_a_compressed_or_utf16_file_is_named_as_such_in_every_format(tmp_path, fmt, pack, reason):
    """One message for every format, not "invalid UTF-8 (byte 0x8b ...)" or a header mismatch."""
    path = tmp_path / "pairs.tsv.gz"
    path.write_bytes(pack(BIMPM.encode("utf8")))
    err = error_for(path, format=fmt)
    assert str(err).startswith(f"{path}:1: the file is {reason}")


def test_long_fields_are_cut_short_in_messages(tmp_path):
    """Columns in the wrong order put a whole question where the label belongs: the message
    shows its start, not kilobytes of HTML."""
    body = "<p>" + "words " * 2000 + "</p>"
    path = write(tmp_path, "se.tsv", f"Title{body}\tOther{body}\tduplicate\n")
    err = error_for(path, format="stackexchange")
    assert str(err).startswith(f"{path}:1: expected label 'duplicate' or 'non-duplicate', found 'Title<p>words")
    assert len(err.reason) < 150
    path = write(tmp_path, "p.tsv", f"label\ttext1\ttext2\n{body}\ta\tb\n")
    assert len(error_for(path, format="tsv").reason) < 100
