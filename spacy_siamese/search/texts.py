"""Collections for the command line: a text file (one doc a line) or JSONL with a text field."""

import json
from pathlib import Path
from typing import Any, List, Tuple

FORMATS = ("auto", "text", "jsonl")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


def read_texts(
    path: Path, *, format: str = "auto", field: str = "text", id_field: str = "id"
) -> Tuple[List[str], List[Any]]:
    """(texts, ids). A text file gives one doc a line (blank lines skipped; the id is the line
    number); JSONL gives `field` of each object and `id_field` when present (else the line
    number). A line without the field raises a ValueError naming file and line."""
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    if format == "auto":
        format = "jsonl" if Path(path).suffix.lower() in JSONL_SUFFIXES else "text"
    texts: List[str] = []
    ids: List[Any] = []
    with Path(path).open(encoding="utf8") as file:
        for number, line in enumerate(file, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            if format == "text":
                texts.append(line)
                ids.append(number)
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{number}: not a JSON object ({err.msg})") from err
            if not isinstance(record, dict) or not isinstance(record.get(field), str):
                raise ValueError(f"{path}:{number}: no '{field}' field with a string (keys: {_keys(record)})")
            texts.append(record[field])
            ids.append(record.get(id_field, number))
    if not texts:
        raise ValueError(f"No texts in {path}: the file is empty")
    return texts, ids


def _keys(record: Any) -> str:
    return ", ".join(map(repr, record)) if isinstance(record, dict) else type(record).__name__
