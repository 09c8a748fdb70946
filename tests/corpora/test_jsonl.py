import pytest

from spacy_siamese.corpora import (
    DocRecord,
    DocumentFormatError,
    PairRecord,
    read_documents,
    read_pairs,
    write_documents,
)

from .util import write


def test_jsonl_pairs(tmp_path):
    path = write(
        tmp_path,
        "pairs.jsonl",
        '{"text1": "a", "text2": "b", "label": 1}\n'
        "\n"
        '{"text1": "c", "text2": "", "label": 0.25, "extra": [1], "group": "forum"}\n'
        "   \n"
        '\t{"label": false, "text2": "f", "text1": "e"}\t\n'
        "\t\n",
    )
    assert list(read_pairs(path)) == [
        PairRecord("a", "b", 1.0, 1),
        PairRecord("c", "", 0.25, 3, "forum"),
        PairRecord("e", "f", 0.0, 5),
    ]


@pytest.mark.parametrize(
    "line,reason",
    [
        ('{"text1": "a", "text2": "b", "label": 1e400}', "outside [0, 1]"),
        ('{"text1": "a", "text2": "b", "label": 1, "group": 3}', "'group' must be a string, found number"),
        ('{"text1": "a", "text2": "b", "label": ' + "9" * 5000 + "}", "invalid JSON"),
        ("[" * 100000 + "]" * 100000, "invalid JSON"),
        ('{"text1": "a\tb", "text2": "b", "label": 1}', "invalid JSON: Invalid control character"),
    ],
)
def test_jsonl_pair_edge_cases(tmp_path, line, reason):
    path = write(tmp_path, "p.jsonl", line + "\n")
    with pytest.raises(Exception) as excinfo:
        list(read_pairs(path))
    assert str(excinfo.value).startswith(f"{path}:1: ") and reason in str(excinfo.value)


def test_jsonl_documents_round_trip_and_errors(tmp_path):
    docs = [DocRecord("a text", ("x",), "g", "1"), DocRecord("", ("x", "y"), "", "2")]
    path = tmp_path / "docs.jsonl"
    write_documents(docs, path)
    assert read_documents("jsonl", path) == docs
    path.write_text('{"text": "t", "label": "x"}\n\t\n{"text": "u", "labels": "y", "id": 7}\n', encoding="utf8")
    assert read_documents("jsonl", path) == [DocRecord("t", ("x",), "", "1"), DocRecord("u", ("y",), "", "7")]
    for line, message in [
        ("{not json", "invalid JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"text": 5, "labels": ["x"]}', 'field "text"'),
        ('{"labels": ["x"]}', 'field "text"'),
        ('{"text": "t"}', 'field "labels"'),
        ('{"text": "t", "labels": []}', 'field "labels"'),
        ('{"text": "t", "labels": ["x"], "group": null}', "'group' must be a string, found null"),
        ('{"text": "t", "labels": ["x"], "group": 3}', "'group' must be a string"),
        ('{"text": "t", "labels": ["x"], "id": null}', "'id' must be a string or an integer, found null"),
        ('{"text": "t", "labels": ["x"], "id": 1.5}', "'id' must be a string or an integer"),
        ('{"text": "t", "labels": ["x"], "id": true}', "'id' must be a string or an integer"),
    ]:
        path.write_text('{"text": "ok", "labels": ["x"]}\n' + line + "\n", encoding="utf8")
        with pytest.raises(DocumentFormatError, match=f"docs.jsonl:2: {message}"):
            read_documents("jsonl", path)
        with pytest.warns(UserWarning, match="Skipped 1 malformed record"):
            assert len(read_documents("jsonl", path, lenient=True)) == 1


def test_jsonl_documents_invalid_utf8_names_line(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"text": "ok", "labels": ["x"]}\n{"text": "caf\xe9", "labels": ["x"]}\n')
    with pytest.raises(DocumentFormatError, match=r"docs.jsonl:2: invalid UTF-8"):
        read_documents("jsonl", path)
