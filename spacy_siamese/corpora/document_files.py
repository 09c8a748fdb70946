"""Read a labelled document collection: `read_documents`."""

from pathlib import Path
from typing import Iterator, List, Union

from . import jsonl, newsgroups, reuters, uci_news
from .base import DocItem, DocRecord, DocumentFormatError, PairFormatError, skip_malformed, warn_skipped

COLLECTIONS = (newsgroups.NAME, reuters.NAME, uci_news.NAME, jsonl.NAME)


def read_documents(
    collection: str,
    path: Union[str, Path],
    *,
    split: str = "train",
    strip_headers: bool = True,
    strip_quotes: bool = True,
    strip_signatures: bool = True,
    lenient: bool = False,
) -> List[DocRecord]:
    """Read a labelled collection: "20news", "reuters", "news" (UCI) or "jsonl".

    split (str): "train", "test" (20news, Reuters ModApte) or "all"; news and jsonl are read whole.
    lenient (bool): skip malformed records and warn once, instead of raising DocumentFormatError.
    """
    if collection not in COLLECTIONS:
        raise ValueError(f"Unknown document collection {collection!r}. Choose one of: {', '.join(COLLECTIONS)}.")
    loc = Path(path)
    if not loc.exists():
        raise FileNotFoundError(f"Document collection not found: {loc}")
    if collection in (newsgroups.NAME, reuters.NAME) and split not in ("train", "test", "all"):
        raise ValueError(f"{collection} split must be 'train', 'test' or 'all', got {split!r}")
    items: Iterator[DocItem]
    if collection == newsgroups.NAME:
        strip = {"strip_headers": strip_headers, "strip_quotes": strip_quotes, "strip_signatures": strip_signatures}
        items = newsgroups.read_20news(loc, split=split, **strip)
    elif collection == reuters.NAME:
        items = reuters.read_reuters(loc, split=split)
    elif collection == uci_news.NAME:
        items = uci_news.read_news(_file(loc))
    else:
        items = jsonl.read_jsonl_documents(_file(loc))
    skipped: List[PairFormatError] = []
    docs = list(skip_malformed(items, lenient, skipped))
    warn_skipped(skipped, f"Skipped {len(skipped)} malformed record(s) in {loc} (lenient=True)")
    if not docs:
        raise DocumentFormatError(loc, None, "no documents found")
    return docs


def _file(path: Path) -> Path:
    if not path.is_file():
        raise ValueError(f"Expected a file, but {path} is a directory or special file")
    return path
