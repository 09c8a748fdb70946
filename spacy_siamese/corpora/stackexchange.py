"""StackExchange duplicate questions (Bogdanova et al. 2015): `label<TAB>question1<TAB>question2`,
label duplicate/non-duplicate, each question a title and an HTML body (made plain text)."""

import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterator, List, Tuple

from .base import Malformed, PairItem, parse_lines, shorten, split_fields

NAME = "stackexchange"
COLUMNS = ("label", "question1", "question2")
LABELS = {"duplicate": 1.0, "non-duplicate": 0.0}


def read_stackexchange(path: Path) -> Iterator[PairItem]:
    return parse_lines(path, _parse_line)


def looks_like(fields: List[str]) -> bool:
    return len(fields) == 3 and fields[0].strip().lower() in LABELS


def _parse_line(line: str) -> Tuple[str, str, float]:
    label, text1, text2 = split_fields(line, COLUMNS)
    value = LABELS.get(label.strip().lower())
    if value is None:
        raise Malformed(f"expected label 'duplicate' or 'non-duplicate', found {shorten(label)}")
    return stackexchange_text(text1), stackexchange_text(text2), value


def stackexchange_text(field: str) -> str:
    """Title + HTML body -> plain text: the title, a newline, the body's text."""
    match = _BODY_START.search(field)
    if match is None:
        return html_to_text(field)
    title = " ".join(html.unescape(field[: match.start()]).split())
    body = html_to_text(field[match.start() :])
    return f"{title}\n{body}" if title and body else title or body


def html_to_text(markup: str) -> str:
    """Strip tags, unescape entities and collapse whitespace."""
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    return " ".join("".join(parser.parts).split())


_BODY_START = re.compile(r"<(?:p|pre|blockquote|ul|ol|h[1-6]|div|table|hr|dl)[\s/>]", re.IGNORECASE)
_BLOCK_TAGS = {
    "p", "pre", "blockquote", "ul", "ol", "li", "div", "table", "tr", "td", "th", "br",
    "hr", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
}  # fmt: skip


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: List[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCK_TAGS:
            self.parts.append(" ")
