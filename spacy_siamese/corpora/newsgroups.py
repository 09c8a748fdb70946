"""20 Newsgroups "bydate": a tar archive of `<root>/<newsgroup>/<message id>` members. The strip
functions match scikit-learn's `fetch_20newsgroups(remove=("headers", "quotes", "footers"))`."""

import re
import tarfile
from pathlib import Path
from typing import Iterator

from .base import DocItem, DocRecord, DocumentFormatError

NAME = "20news"
_QUOTE_LINE = re.compile(r"(writes in|writes:|wrote:|says:|said:|^In article|^Quoted from|^\||^>)")


def strip_header(text: str) -> str:
    """Drop everything before the first blank line."""
    return text.partition("\n\n")[2]


def strip_quoting(text: str) -> str:
    """Drop quoted lines (starting with > or |) and lines that introduce a quote."""
    return "\n".join(line for line in text.split("\n") if not _QUOTE_LINE.search(line))


def strip_signature(text: str) -> str:
    """Drop everything after the last blank or all-hyphen line, if that line is not the first."""
    lines = text.strip().split("\n")
    for number in range(len(lines) - 1, 0, -1):
        if not lines[number].strip().strip("-"):
            return "\n".join(lines[:number])
    return text


def read_20news(
    path: Path,
    *,
    split: str = "train",
    strip_headers: bool = True,
    strip_quotes: bool = True,
    strip_signatures: bool = True,
) -> Iterator[DocItem]:
    """`split`: "test" = the archive's `*-test` root, "train" = every other root (an archive
    not split in halves, e.g. 20news-18828, is training data only), "all" = every root."""
    if path.is_dir():
        raise DocumentFormatError(
            path, None, "is a directory: 20news reads the tar archive itself (e.g. 20news-bydate.tar.gz)"
        )
    try:
        archive = tarfile.open(path, "r:*")  # noqa: SIM115 (closed by the with below)
    except tarfile.TarError as err:
        raise DocumentFormatError(path, None, f"not a readable tar archive ({err})") from None
    with archive:
        for member in archive:
            if not member.isfile():
                continue
            parts = member.name.strip("/").split("/")
            if len(parts) != 3 or not all(parts):
                yield DocumentFormatError(path, member.name, "expected a member <root>/<newsgroup>/<message id>")
                continue
            if split != "all" and parts[0].endswith("-test") != (split == "test"):
                continue
            raw = archive.extractfile(member).read()  # type: ignore[union-attr]
            try:
                text = raw.decode("utf8").replace("\r\n", "\n")
            except UnicodeDecodeError as err:
                yield DocumentFormatError(
                    path, member.name, f"invalid UTF-8 (byte {raw[err.start]:#04x} at {err.start})"
                )
                continue
            if strip_headers and "\n\n" not in text:
                yield DocumentFormatError(path, member.name, "no blank line between the headers and the body")
                continue
            if strip_headers:
                text = strip_header(text)
            if strip_quotes:
                text = strip_quoting(text)
            if strip_signatures:
                text = strip_signature(text)
            yield DocRecord(text.strip(), (parts[1],), parts[1], member.name)
