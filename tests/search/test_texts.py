"""Collection files: ids (one convention for Python and the command line), blank lines, errors."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_siamese.search.texts import scan_collection


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf8")
    return path


def read_texts(path, **settings):
    collection = scan_collection(path, **settings)
    return list(collection.texts()), collection.ids


def test_text_files_are_identified_by_position_without_blank_lines(tmp_path):
    path = write(tmp_path / "a.txt", ["first", "", "second", "   ", "third"])
    collection = scan_collection(path)
    assert collection.ids == [0, 1, 2] and collection.n == 3
    assert list(collection.texts()) == ["first", "second", "third"]
    assert collection.blank_lines == [2, 4]
    assert "2 blank line(s)" in collection.blank_note() and "line 2, 4" in collection.blank_note()
    assert collection.texts_at([2, 0]) == {0: "first", 2: "third"}


def test_jsonl_keeps_its_ids_or_uses_positions(tmp_path):
    with_ids = write(tmp_path / "a.jsonl", [json.dumps({"id": f"q{i}", "text": f"t{i}"}) for i in range(3)])
    assert read_texts(with_ids) == (["t0", "t1", "t2"], ["q0", "q1", "q2"])
    without = write(tmp_path / "b.jsonl", [json.dumps({"text": f"t{i}"}) for i in range(3)])
    assert read_texts(without) == (["t0", "t1", "t2"], [0, 1, 2])


def test_duplicate_ids_are_an_error_naming_both_lines(tmp_path):
    path = write(tmp_path / "a.jsonl", [json.dumps({"id": 7, "text": "a"}), "", json.dumps({"id": 7, "text": "b"})])
    with pytest.raises(ValueError, match=r"a.jsonl:3: id 7 was already used on line 1"):
        scan_collection(path)


def test_ids_on_some_records_only_are_an_error(tmp_path):
    path = write(tmp_path / "a.jsonl", [json.dumps({"id": "x", "text": "a"}), json.dumps({"text": "b"})])
    with pytest.raises(ValueError, match=r"a.jsonl:2: no 'id' field"):
        scan_collection(path)


@pytest.mark.parametrize(
    "line,message",
    [
        ("{not json", "not a JSON object"),
        ('{"body": "x"}', "no 'text' field"),
        ("[1, 2]", r"not a JSON object \(a list\)"),
        ("[" * 100_000 + "]" * 100_000, "not a JSON object"),  # nesting too deep for json.loads
    ],
)
def test_bad_lines_name_file_and_line(tmp_path, line, message):
    path = write(tmp_path / "a.jsonl", [json.dumps({"text": "fine"}), line])
    with pytest.raises(ValueError, match=f"a.jsonl:2: {message}"):
        scan_collection(path)


def test_lines_are_read_as_pair_files_are(tmp_path):
    """A BOM at the start is dropped and LF and CRLF end a line, in both formats; a CR elsewhere is text."""
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_bytes(b'\xef\xbb\xbf{"id": 1, "text": "a"}\r\n{"id": 2, "text": "b"}\r{"id": 3, "text": "c"}\n')
    with pytest.raises(ValueError, match=r"a\.jsonl:2: not a JSON object"):
        read_texts(jsonl)
    text = tmp_path / "a.txt"
    text.write_bytes(b"\xef\xbb\xbffirst\r\n\r\nsecond\rthird")
    collection = scan_collection(text)
    assert list(collection.texts()) == ["first", "second\rthird"] and collection.blank_lines == [2]


@pytest.mark.parametrize("name", ["a.txt", "a.jsonl"])
def test_a_line_that_is_not_utf8_is_an_error_naming_it(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(b'{"text": "fine"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(ValueError, match=rf"{name}:2: invalid UTF-8 \(byte 0xe9 at column 14\)"):
        scan_collection(path)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(["c.txt", "c.jsonl"]))
def test_any_bytes_read_or_raise_a_value_error_naming_the_file(data, name):
    """Whatever a file holds, reading it gives texts or a ValueError that names the file, never
    a bare decoding error."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            collection = scan_collection(path)
        except ValueError as err:
            assert not isinstance(err, UnicodeError) and str(err).startswith(("No texts in", str(path)))
            return
        texts = list(collection.texts())
        assert len(texts) == collection.n == len(collection.ids) and all(t.strip() for t in texts)


def test_an_empty_collection_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="the file is empty"):
        scan_collection(write(tmp_path / "a.txt", ["", " "]))
    with pytest.raises(ValueError, match="format must be"):
        scan_collection(write(tmp_path / "b.txt", ["x"]), format="csv")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.text(min_size=0, max_size=12), st.just(""), st.just("  ")), min_size=1, max_size=30))
def test_positions_count_texts_and_every_line_is_accounted_for(lines):
    """Any lines: texts + blank lines = lines, and ids are 0..n-1 in file order."""
    import tempfile
    from pathlib import Path

    lines = [line.replace("\n", " ").replace("\r", " ") for line in lines]
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp) / "c.jsonl", [json.dumps({"text": t}) if t.strip() else t for t in lines])
        texts = [t for t in lines if t.strip()]
        if not texts:
            with pytest.raises(ValueError):
                scan_collection(path)
            return
        collection = scan_collection(path)
        assert list(collection.texts()) == texts and collection.ids == list(range(len(texts)))
        assert collection.n + len(collection.blank_lines) == len(lines)


def test_a_json_file_of_records_is_read_as_jsonl(tmp_path):
    """`.json` is what `datasets.Dataset.to_json` and `pandas.to_json(lines=True)` call JSON lines:
    its texts are the records' text fields, not the raw lines; a JSON array is an error, not texts."""
    path = write(tmp_path / "a.json", [json.dumps({"text": f"t{i}", "id": f"q{i}"}) for i in range(2)])
    assert read_texts(path) == (["t0", "t1"], ["q0", "q1"])
    array = write(tmp_path / "b.json", ["[", '  {"text": "t0"}', "]"])
    with pytest.raises(ValueError, match=r"b.json:1: not a JSON object"):
        scan_collection(array)
    assert read_texts(array, format="text")[0] == ["[", '  {"text": "t0"}', "]"]
