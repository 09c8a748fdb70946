"""Reuters-21578 (`reut2-*.sgm` in a directory or tar archive): labels are the TOPICS, group the
first; "train" / "test" is the ModApte split; only stories with a topic are kept."""

import html
import re
import tarfile
from pathlib import Path
from typing import Iterator, Optional, Tuple

from .base import DocItem, DocRecord, DocumentFormatError, not_text

NAME = "reuters"
_BLOCK = re.compile(r"<REUTERS\b([^>]*)>(.*?)</REUTERS>", re.DOTALL)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_TOPICS = re.compile(r"<TOPICS>(.*?)</TOPICS>", re.DOTALL)
_D = re.compile(r"<D>(.*?)</D>", re.DOTALL)
_TITLE = re.compile(r"<TITLE>(.*?)</TITLE>", re.DOTALL)
_BODY = re.compile(r"<BODY>(.*?)</BODY>", re.DOTALL)
_TEXT = re.compile(r"<TEXT\b[^>]*>(.*?)</TEXT>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")
_FILE_NAME = re.compile(r"reut2-\d+\.sgm")


def read_reuters(path: Path, *, split: str = "train") -> Iterator[DocItem]:
    for file_, text in _sgm_files(path):
        n_open = len(re.findall(r"<REUTERS\b", text))
        blocks = list(_BLOCK.finditer(text))
        line, pos = 1, 0
        for match in blocks:
            line += text.count("\n", pos, match.start())
            pos = match.start()
            item = _story(file_, line, match, split)
            if item is not None:
                yield item
        if n_open != len(blocks):
            yield DocumentFormatError(file_, None, f"{n_open - len(blocks)} <REUTERS> element(s) not closed")


def _story(file_: str, line: int, match: "re.Match[str]", split: str) -> Optional[DocItem]:
    attrs = dict(_ATTR.findall(match.group(1)))
    missing = [a for a in ("TOPICS", "LEWISSPLIT", "NEWID") if a not in attrs]
    if missing:
        return DocumentFormatError(file_, line, f"<REUTERS> tag lacks attribute(s) {', '.join(missing)}")
    newid = attrs["NEWID"]
    body = match.group(2)
    topics_match = _TOPICS.search(body)
    if topics_match is None:
        return DocumentFormatError(file_, line, f"NEWID={newid}: no <TOPICS> element")
    topics = tuple(html.unescape(t).strip() for t in _D.findall(topics_match.group(1)))
    if not topics or (split != "all" and (attrs["TOPICS"] != "YES" or attrs["LEWISSPLIT"] != split.upper())):
        return None  # ModApte keeps the stories of its split with at least one topic
    text_match = _TEXT.search(body)
    if text_match is None:
        return DocumentFormatError(file_, line, f"NEWID={newid}: no <TEXT> element")
    parts = [m.group(1) for m in (_TITLE.search(body), _BODY.search(body)) if m is not None]
    if not parts:  # TYPE="UNPROC" / "BRIEF": the text is not marked up
        parts = [_TAG.sub(" ", text_match.group(1))]
    text = _CONTROL.sub(" ", html.unescape("\n".join(parts))).strip()
    if not text:
        return DocumentFormatError(file_, line, f"NEWID={newid}: empty <TEXT>")
    return DocRecord(text, topics, topics[0], f"NEWID={newid}")


def _sgm_files(path: Path) -> Iterator[Tuple[str, str]]:
    """(name, text) of each reut2-*.sgm file in a directory or a tar archive, or of `path`."""
    if path.is_dir():
        files = sorted(path.glob("reut2-*.sgm"))
        if not files:
            raise DocumentFormatError(path, None, "no reut2-*.sgm files in this directory")
        for file_ in files:
            yield str(file_), file_.read_text(encoding="latin-1")
    elif tarfile.is_tarfile(path):
        with tarfile.open(path, "r:*") as archive:
            members = sorted(
                (m for m in archive if m.isfile() and _FILE_NAME.fullmatch(m.name.rsplit("/", 1)[-1])),
                key=lambda m: m.name,
            )
            if not members:
                raise DocumentFormatError(path, None, "no reut2-*.sgm files in this archive")
            for member in members:
                raw = archive.extractfile(member).read()  # type: ignore[union-attr]
                yield f"{path}:{member.name}", raw.decode("latin-1")
    else:
        raw = path.read_bytes()
        problem = not_text(raw[:16])
        if problem is not None:
            raise DocumentFormatError(path, None, problem)
        yield str(path), raw.decode("latin-1")
