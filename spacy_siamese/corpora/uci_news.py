"""UCI News Aggregator: a comma-separated CSV with RFC-4180 quoting and the header
`ID,TITLE,URL,PUBLISHER,CATEGORY,STORY,HOSTNAME,TIMESTAMP`. Text: the headline; label:
STORY (headlines of one story are near-paraphrases); group: CATEGORY, so a headline of
the same category but another story is a hard negative."""

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

    reader = csv.reader(feed())
    try:
        header = next(reader, None)
        if header is None or [h.strip() for h in header[: len(COLUMNS)]] != list(COLUMNS):
            raise DocumentFormatError(path, 1, f"expected the header {','.join(COLUMNS)}, found {header}")
        if bad:
            raise DocumentFormatError(path, min(bad), bad[min(bad)])  # in the header
        start = reader.line_num + 1
        for row in reader:
            line, start = start, reader.line_num + 1
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
    except csv.Error as err:
        raise DocumentFormatError(path, reader.line_num, f"not valid CSV ({err})") from None


def _record(path: Path, line: int, row: List[str]) -> DocItem:
    fields = dict(zip(COLUMNS, row))
    empty = [c for c in ("TITLE", "CATEGORY", "STORY") if not fields[c].strip()]
    if empty:
        return DocumentFormatError(path, line, f"empty field(s) {', '.join(empty)}")
    return DocRecord(fields["TITLE"].strip(), (fields["STORY"],), fields["CATEGORY"], fields["ID"])
