import re

import pytest

from spacy_siamese.corpora import (
    DocRecord,
    DocumentFormatError,
    EmptyTextWarning,
    PairFormatError,
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
    with pytest.warns(EmptyTextWarning, match=rf"1 of the 3 pair\(s\) read from {re.escape(str(path))} .*\(line 3\)"):
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
        ('{"text": 5, "labels": ["x"]}', "'text' must be a string, found number"),
        ('{"labels": ["x"]}', "missing key 'text'"),
        ('{"text": "t"}', "missing key 'labels'"),
        ('{"text": "t", "labels": []}', r"'labels' must be a non-empty string or a non-empty list of them, found \[\]"),
        ('{"text": "t", "label": 1}', "'label' must be a non-empty string or a non-empty list of them, found 1"),
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


def test_jsonl_lone_surrogates_are_errors_not_tracebacks_from_spacy(tmp_path):
    """JSON may escape half a surrogate pair ("\\ud800"); spaCy's tokenizer cannot hash such a
    string (UnicodeEncodeError deep inside), so the reader names the line and the key."""
    path = write(tmp_path, "p.jsonl", '{"text1": "a \\ud800", "text2": "b", "label": 1}\n')
    with pytest.raises(PairFormatError, match=r"p.jsonl:1: 'text1' holds '\\ud800', an unpaired surrogate"):
        list(read_pairs(path))
    good = '{"text1": "\\ud83d\\ude00", "text2": "b", "label": 1}\n'  # a whole pair is an emoji
    assert next(read_pairs(write(tmp_path, "ok.jsonl", good))).text1 == "\U0001f600"
    for line, key in [
        ('{"text": "\\udfff", "labels": ["x"]}', "text"),
        ('{"text": "t", "labels": ["x\\ud800"]}', "labels"),
        ('{"text": "t", "label": "x", "group": "\\ud800"}', "group"),
    ]:
        path = write(tmp_path, "docs.jsonl", line + "\n")
        with pytest.raises(DocumentFormatError, match=f"docs.jsonl:1: '{key}' holds .* unpaired surrogate"):
            read_documents("jsonl", path)


def test_jsonl_label_given_as_a_string_shows_it(tmp_path):
    path = write(tmp_path, "p.jsonl", '{"text1": "a", "text2": "b", "label": "1"}\n')
    with pytest.raises(PairFormatError, match=r"p.jsonl:1: 'label' must be a number or boolean, found string '1'"):
        list(read_pairs(path))
