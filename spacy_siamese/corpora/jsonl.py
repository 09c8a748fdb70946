"""JSON lines, blank lines skipped. Pairs (the canonical format): `{"text1", "text2", "label"}`
and optionally "group". Documents: `{"text", "labels" (or "label"), "group", "id"}`."""

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Sequence, Tuple, Union

import srsly

from ..files import atomic_write
from .base import (
    DocItem,
    DocRecord,
    DocumentFormatError,
    Malformed,
    PairFormatError,
    PairItem,
    PairRecord,
    check_label,
    json_object,
    json_string,
    json_type,
    numbered_lines,
    shorten,
    unicode_string,
)

NAME = "jsonl"


def looks_like(fields: List[str]) -> bool:
    return "\t".join(fields).lstrip().startswith("{")


def read_jsonl_pairs(path: Path) -> Iterator[PairItem]:
    return _records(path, PairFormatError, lambda obj, number: PairRecord(*_pair(obj), number, _group(obj)))


def read_jsonl_documents(path: Path) -> Iterator[DocItem]:
    def record(obj: Dict[str, Any], number: int) -> DocRecord:
        return DocRecord(json_string(obj, "text"), _labels(obj), _group(obj), _doc_id(obj, number))

    return _records(path, DocumentFormatError, record)


def write_pairs(pairs: Iterable[PairRecord], path: Union[str, Path]) -> None:
    """Write pairs as JSON lines (read them back with `read_pairs(path, format="jsonl")`); a
    pair's group is written when it has one. The file is replaced whole or not at all."""
    with atomic_write(path) as file:
        for pair in pairs:
            obj = {"text1": pair.text1, "text2": pair.text2, "label": pair.label}
            file.write((srsly.json_dumps({**obj, "group": pair.group} if pair.group else obj) + "\n").encode("utf8"))


def write_documents(docs: Sequence[DocRecord], path: Union[str, Path]) -> None:
    """Write a collection as JSON lines (read it back with `read_documents("jsonl", path)`)."""
    srsly.write_jsonl(path, ({"text": d.text, "labels": list(d.labels), "group": d.group, "id": d.id} for d in docs))


def _records(path: Path, error: type, record: Callable[[Dict[str, Any], int], Any]) -> Iterator[Any]:
    """`record(object, line number)` of each non-blank line, or its format error (`error`)."""
    for line in numbered_lines(path):
        if line.error:
            yield error(path, line.number, line.error)
        elif line.text.strip():
            try:
                yield record(json_object(line.text), line.number)
            except Malformed as err:
                yield error(path, line.number, str(err))


def _labels(obj: Dict[str, Any]) -> Tuple[str, ...]:
    """The "labels" (a list of strings, or one string), else the "label" (one string)."""
    key = "labels" if "labels" in obj or "label" not in obj else "label"
    if key not in obj:
        raise Malformed(f"missing key 'labels' (or 'label'); keys found: {list(obj)}")
    value = obj[key]
    labels = [value] if isinstance(value, str) else value
    if not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x for x in labels):
        raise Malformed(f"{key!r} must be a non-empty string or a non-empty list of them, found {shorten(value)}")
    return tuple(unicode_string(label, key) for label in labels)


def _group(obj: Dict[str, Any]) -> str:
    return json_string(obj, "group", required=False)


def _doc_id(obj: Dict[str, Any], number: int) -> str:
    """A document's "id" (a string or an integer, as a string), or its line number."""
    doc_id = obj.get("id", number)
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        raise Malformed(f"'id' must be a string or an integer, found {json_type(doc_id)}")
    return unicode_string(str(doc_id), "id")


def _pair(obj: Dict[str, Any]) -> Tuple[str, str, float]:
    missing = [key for key in ("text1", "text2", "label") if key not in obj]
    if missing:
        raise Malformed(f"missing key(s) {', '.join(map(repr, missing))}; keys found: {list(obj)}")
    text1, text2 = json_string(obj, "text1"), json_string(obj, "text2")
    label = obj["label"]
    if not isinstance(label, (bool, int, float)):
        found = f"string {shorten(label)}" if isinstance(label, str) else json_type(label)
        raise Malformed(f"'label' must be a number or boolean, found {found}")
    try:
        value = float(label)
    except OverflowError:
        value = float("inf")
    return text1, text2, check_label(value, label)
