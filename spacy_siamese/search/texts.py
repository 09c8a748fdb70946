"""Collections for the command line: a text file (one doc a line) or JSONL with a text field.

Ids, the same in Python and on the command line: a JSONL collection whose records all have the
id field keeps those ids (they must be unique); any other collection is identified by position,
0 for the first text, counting texts only (blank lines are skipped, counted and reported), which
is the index `find_duplicates` and `SimilarityIndex` use in Python.
"""

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..corpora.base import Malformed, json_value, numbered_lines
from ..defaults import JSONL_SUFFIXES
from ..files import sha256_file

FORMATS = ("auto", "text", "jsonl")


@dataclass
class Collection:
    """A first pass over a collection file: the number of texts, their ids and the skipped blank lines (1-based)."""

    path: Path
    format: str
    text_field: str
    n: int = 0
    ids: List[Any] = field(default_factory=list)
    keyed: bool = False  # the records carry their own ids (else ids are positions)
    blank_lines: List[int] = field(default_factory=list)

    def texts(self) -> Iterator[str]:
        """The texts, read lazily from the file again."""
        return (text for _, _, text, _ in _records(self.path, self.format, self.text_field, "id"))

    def texts_at(self, positions: Any) -> Dict[int, str]:
        """{position: text} for some positions, in one pass over the file."""
        wanted = {int(p) for p in positions}
        texts = itertools.islice(self.texts(), max(wanted, default=-1) + 1)  # read up to the last one wanted
        return {i: text for i, text in enumerate(texts) if i in wanted}

    def source(self) -> Dict[str, Any]:
        """What identifies the input for a restart: a hash of its bytes, how they were read."""
        return {"sha256": sha256_file(self.path), "format": self.format, "field": self.text_field}

    def blank_note(self) -> Optional[str]:
        if not self.blank_lines:
            return None
        shown = ", ".join(map(str, self.blank_lines[:5])) + (", ..." if len(self.blank_lines) > 5 else "")
        return f"Skipped {len(self.blank_lines):,} blank line(s) of {self.path} (line {shown})."


def scan_collection(path: Path, *, format: str = "auto", field: str = "text", id_field: str = "id") -> Collection:
    """Read a collection file once, checking every line: a JSONL line that is not an object with a string
    `field`, ids on some records but not all, or an id seen twice raises a ValueError naming file and line."""
    path = Path(path)
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    if format == "auto":
        format = "jsonl" if path.suffix.lower() in JSONL_SUFFIXES else "text"
    collection = Collection(path, format, field)
    seen: Dict[Any, int] = {}
    for number, blank, _, record_id in _records(path, format, field, id_field, blanks=True):
        if blank:
            collection.blank_lines.append(number)
            continue
        has_id = record_id is not None
        if not collection.n:
            collection.keyed = has_id
        elif has_id != collection.keyed:
            raise ValueError(
                f"{path}:{number}: {'an' if has_id else 'no'} '{id_field}' field, unlike the first record: "
                f"give every record an id or none (then ids are positions, 0 for the first text)"
            )
        if has_id:
            key = json.dumps(record_id, sort_keys=True)
            if key in seen:
                raise ValueError(f"{path}:{number}: id {record_id!r} was already used on line {seen[key]}")
            seen[key] = number
        collection.ids.append(record_id if has_id else collection.n)
        collection.n += 1
    if not collection.n:
        raise ValueError(f"No texts in {path}: the file is empty")
    return collection


def _records(
    path: Path, format: str, field: str, id_field: str, *, blanks: bool = False
) -> Iterator[Tuple[int, bool, str, Any]]:
    """(line number, is blank, text, id or None) for each line; blank lines only with `blanks`. Lines are
    read as pair files are (LF or CRLF, no BOM); one that is not UTF-8 raises a ValueError naming it."""
    for line in numbered_lines(Path(path)):
        number = line.number
        if line.error:
            raise ValueError(f"{path}:{number}: {line.error}")
        if not line.text.strip():
            if blanks:
                yield number, True, "", None
            continue
        if format == "text":
            yield number, False, line.text, None
            continue
        try:
            record = json_value(line.text)
        except Malformed as err:
            raise ValueError(f"{path}:{number}: not a JSON object ({err})") from None
        if not isinstance(record, dict):
            raise ValueError(f"{path}:{number}: not a JSON object (a {type(record).__name__})")
        if not isinstance(record.get(field), str):
            raise ValueError(
                f"{path}:{number}: no '{field}' field with a string (keys: {', '.join(map(repr, record))})"
            )
        yield number, False, record[field], record.get(id_field)
