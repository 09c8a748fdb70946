"""Tab-separated pairs under a header naming the columns (question1/2, text1/2 or sentence1/2,
and is_duplicate or label): the Quora release (CSV quoting, fields over several lines) and QQP
mirrors (raw text). A quoted field may span lines but never swallows a line that reads as a
record of its own; an unclosed quote is raw text when the line has the header's field count."""

import csv
from collections import deque
from itertools import islice
from pathlib import Path
from typing import Callable, Deque, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from .base import (
    Line,
    Malformed,
    PairFormatError,
    PairItem,
    PairRecord,
    check_header,
    header_columns,
    is_blank,
    numbered_lines,
    scaled_label,
)

NAME = "tsv"
TEXT_COLUMNS = (("question1", "question2"), ("text1", "text2"), ("sentence1", "sentence2"))
LABEL_COLUMNS = ("is_duplicate", "label")
MAX_RECORD_LINES = 1000  # lines a quoted field may span


def find_columns(names: Sequence[str]) -> Optional[Tuple[int, int, int]]:
    """Indices of (text1, text2, label) in a header, or None. Raises Malformed if a needed column is named twice."""
    for c1, c2 in TEXT_COLUMNS:
        found = header_columns(names, [(c1,), (c2,), LABEL_COLUMNS])
        if found is not None:
            return found[0], found[1], found[2]
    return None


def looks_like(fields: List[str]) -> bool:
    try:
        return find_columns([f.strip().strip('"') for f in fields]) is not None
    except Malformed:  # a column named twice: a header if it names a label column (the reader says so)
        return bool({f.strip().strip('"').lower() for f in fields} & set(LABEL_COLUMNS))


def is_quoted(field: str) -> bool:
    """The whole field is CSV-quoted: `"..."` with every inner quote doubled."""
    return len(field) >= 2 and field[0] == field[-1] == '"' and '"' not in field[1:-1].replace('""', "")


def unquote(field: str) -> str:
    """Undo CSV quoting of a whole field (`"a ""b"" c"` -> `a "b" c`); else return it as is."""
    return field[1:-1].replace('""', '"') if is_quoted(field) else field


def opens_quote(field: str) -> bool:
    """The field starts with a double quote that does not close at its end."""
    return field.startswith('"') and not is_quoted(field)


class _Attempt(NamedTuple):
    row: Optional[List[str]]  # the CSV record, if the CSV reading succeeded
    taken: List[Line]  # continuation lines read
    problem: str  # why the CSV reading failed
    quoting: bool  # it failed on the quoting itself, so the quote may be raw text


def read_tsv(path: Path) -> Iterator[PairItem]:
    lines = numbered_lines(path)
    pending: Deque[Line] = deque()  # lines read ahead and given back

    def take() -> Optional[Line]:
        return pending.popleft() if pending else next(lines, None)

    header: Optional[List[str]] = None
    cols = (0, 0, 0)
    for line in iter(take, None):
        if line.error:
            error = PairFormatError(path, line.number, line.error)
            if header is None:
                raise error
            yield error
            continue
        if is_blank(line.text):
            continue
        fields = line.text.split("\t")
        if header is None:
            header = [unquote(name).strip() for name in fields]
            missing = (
                "the header must name two text columns (question1/question2, text1/text2 or sentence1/sentence2) and "
                f"a label column (is_duplicate or label); columns found: {', '.join(header)}. For a file without a "
                "header pass format='bimpm' or 'stackexchange'."
            )
            cols = check_header(path, line.number, header, find_columns, missing)
            continue
        n = len(header)
        if len(fields) == n and '"' not in line.text:
            row: List[str] = fields
        elif len(fields) == n and not any(opens_quote(f) for f in fields):
            row = [unquote(f) for f in fields]
        else:
            parsed, unused = _quoted_record(path, line, fields, header, cols[2], take)
            pending.extendleft(reversed(unused))  # lines read ahead that the record does not use
            if isinstance(parsed, PairFormatError):
                yield parsed
                continue
            row = parsed
        try:
            label = scaled_label(row[cols[2]])
        except Malformed as err:
            yield PairFormatError(path, line.number, str(err))
        else:
            yield PairRecord(row[cols[0]], row[cols[1]], label, line.number)


def _quoted_record(
    path: Path, line: Line, fields: List[str], header: List[str], label_col: int, take: Callable[[], Optional[Line]]
) -> Tuple[Union[List[str], PairFormatError], List[Line]]:
    """Read the record starting at `line` as CSV (a quoted field may span lines).
    Returns (the row or an error for `line`, the lines read ahead but not used)."""
    n = len(header)
    k = next((i for i, f in enumerate(fields) if opens_quote(f)), len(fields) - 1)  # the field opening a quote
    attempt = _read_csv(line, take)
    if attempt.row is not None and len(attempt.row) == n:
        own = next((t for t in attempt.taken if _is_record(t, n, label_col)), None)
        if own is None:
            bad = next((t for t in attempt.taken if t.error), None)
            if bad is not None:
                return PairFormatError(path, bad.number, bad.error or ""), []
            return attempt.row, []
        return PairFormatError(
            path,
            line.number,
            f"{_field(k, header)} opens a double quote that closes on line {attempt.taken[-1].number}, but line "
            f"{own.number} reads as a record of its own, so the lines cannot be told apart: quote the whole field with "
            "its inner quotes doubled, or remove the stray quote",
        ), attempt.taken
    if len(fields) == n and attempt.quoting:  # an unbalanced quote in raw text
        return [unquote(f) for f in fields], attempt.taken
    reason = f"expected {n} tab-separated fields ({', '.join(header)}), found {len(fields)}"
    if attempt.row is not None and attempt.taken:
        reason += (
            f"; read as CSV with a quoted field over lines {line.number}-{attempt.taken[-1].number}, "
            f"the record has {len(attempt.row)} fields"
        )
    elif not attempt.quoting:
        reason = f"{_field(k, header)} opens a double quote that {attempt.problem}"
    elif attempt.problem:
        reason += f"; field {k + 1} opens a double quote that {attempt.problem}"
    return PairFormatError(path, line.number, reason), attempt.taken


def _field(k: int, header: List[str]) -> str:
    """Field `k` by number and name, for a message."""
    return f"field {k + 1} ({header[k] if k < len(header) else '?'})"


def _read_csv(first: Line, take: Callable[[], Optional[Line]]) -> _Attempt:
    taken: List[Line] = []

    def feed() -> Iterator[str]:
        yield first.text + (first.end or "\n")
        for item in islice(iter(take, None), MAX_RECORD_LINES):
            taken.append(item)
            yield item.text + (item.end or "\n")

    reader = csv.reader(feed(), delimiter="\t", quotechar='"', doublequote=True, strict=True)
    try:
        row = next(reader, None)
    except csv.Error as err:
        where = taken[-1].number if taken else first.number
        if str(err) == "unexpected end of data":
            limit = len(taken) >= MAX_RECORD_LINES
            problem = f"is not closed within {MAX_RECORD_LINES} lines" if limit else "is never closed"
        elif "expected after" in str(err):
            problem = (
                f"is not closed: the next double quote (line {where}) is followed by text, "
                "not by a tab or the end of the line"
            )
        else:  # e.g. a field longer than csv.field_size_limit()
            return _Attempt(None, taken, f"cannot be read as CSV (line {where}: {err})", False)
        return _Attempt(None, taken, problem, True)
    return _Attempt(row, taken, "", True)


def _is_record(line: Line, n: int, label_col: int) -> bool:
    """The line alone has the header's number of fields and a valid label."""
    fields = line.text.split("\t")
    if line.error or len(fields) != n:
        return False
    try:
        scaled_label(unquote(fields[label_col]))
    except Malformed:
        return False
    return True
