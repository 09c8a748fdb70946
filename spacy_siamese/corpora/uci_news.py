"""UCI News Aggregator CSV: text the headline (TITLE), label the STORY, group the CATEGORY."""

import csv
from pathlib import Path
from typing import Dict, Iterator, List

from .base import DocItem, DocRecord, DocumentFormatError, numbered_lines

NAME = "news"
COLUMNS = ("ID", "TITLE", "URL", "PUBLISHER", "CATEGORY", "STORY", "HOSTNAME", "TIMESTAMP")


def read_news(path: Path) -> Iterator[DocItem]:
    bad: Dict[int, str] = {}  # line number -> decoding problem

    def feed() -> Iterator[str]:
        for line in numbered_lines(path):
            if line.error:
                bad[line.number] = line.error
            yield line.text + (line.end or "\n")

    reader = csv.reader(feed(), strict=True)
    try:
        header = next(reader, None)
    except csv.Error as err:
        header = [f"unreadable: {_csv_problem(err)}"]
    if bad and min(bad) <= reader.line_num:
        raise DocumentFormatError(path, min(bad), bad[min(bad)])  # in the header
    if header is None or [h.strip() for h in header[: len(COLUMNS)]] != list(COLUMNS):
        raise DocumentFormatError(path, 1, f"expected the header {','.join(COLUMNS)}, found {header}")
    while True:
        line = reader.line_num + 1  # the first line of the next record
        try:
            row = next(reader, None)
        except csv.Error as err:  # the reader goes on at the next line
            yield DocumentFormatError(path, line, f"not valid CSV: {_csv_problem(err)}")
            continue
        if row is None:
            return
        start = reader.line_num + 1  # the first line after the record
        undecodable = [n for n in range(line, start) if n in bad]
        if undecodable:
            yield DocumentFormatError(path, undecodable[0], bad[undecodable[0]])
        elif not row:
            continue
        elif len(row) != len(header):
            spans = f" (one quoted field runs over lines {line}-{start - 1})" if start - line > 1 else ""
            yield DocumentFormatError(path, line, f"expected {len(header)} fields, found {len(row)}{spans}")
        else:
            yield _record(path, line, row)


def _csv_problem(err: csv.Error) -> str:
    if str(err).startswith("',' expected after"):
        return (
            "a quoted field's closing double quote is followed by text, not by a comma or the line end "
            "(quote the whole field and double the quotes inside it)"
        )
    if str(err) == "unexpected end of data":
        return "a double quote opens a field that is never closed"
    if str(err).startswith("new-line character seen in unquoted field"):
        return "a carriage return (\\r) inside an unquoted field: quote the field or remove the CR"
    return str(err)


def _record(path: Path, line: int, row: List[str]) -> DocItem:
    fields = dict(zip(COLUMNS, row))
    empty = [c for c in ("TITLE", "CATEGORY", "STORY") if not fields[c].strip()]
    if empty:
        return DocumentFormatError(path, line, f"empty field(s) {', '.join(empty)}")
    return DocRecord(fields["TITLE"].strip(), (fields["STORY"],), fields["CATEGORY"], fields["ID"])
