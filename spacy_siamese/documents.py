"""Labelled document collections and seeded document-pair sampling.

Four formats are read into `DocRecord`s (text, similarity labels, group):

- "20news": a 20 Newsgroups bydate archive, members `<root>/<newsgroup>/<id>`: the
  official `20news-bydate.tar.gz` (roots `20news-bydate-train` and `-test`; `split`
  picks one) or its train half alone. Label: the newsgroup. Headers, quoted replies and
  signatures can be stripped (as scikit-learn's `fetch_20newsgroups(remove=...)` does).
- "reuters": Reuters-21578 `.sgm` files (latin-1) in a directory, or the official
  `reuters21578.tar.gz`. Labels: the TOPICS categories (two documents are similar when
  they share one). ModApte (Lewis) split: "train" = LEWISSPLIT TRAIN, "test" = LEWISSPLIT
  TEST, both with TOPICS="YES" and at least one topic.
- "news": the UCI News Aggregator CSV. Label: STORY; group: CATEGORY, so a document of
  the same category but another story is a hard negative.
- "jsonl": any labelled collection, one JSON object per line: `{"text": str, "labels":
  [str, ...], "group": str, "id": str}` ("label": str instead of "labels"; group and id
  optional). `write_documents` writes this format.

`split_documents` holds out a seeded part of a collection, `sample_pairs` draws seeded
positive / negative pairs, and the reader "spacy-siamese.DocumentPairs.v1" turns them into
pair Examples for `spacy train`. A malformed record raises a `DocumentFormatError` naming
the file and the record, or with `lenient=True` is skipped and reported in one warning.
"""
import csv
import html
import re
import tarfile
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy
import srsly
from sklearn.datasets._twenty_newsgroups import (  # the reference implementation of the stripping
    strip_newsgroup_footer,
    strip_newsgroup_header,
    strip_newsgroup_quoting,
)
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import ensure_path, registry

from .pairs import pair_example
from .readers import MAX_REPORTED, PairFormatError, json_object

COLLECTIONS = ("20news", "reuters", "news", "jsonl")
SPLITS = ("train", "dev", "all", "test")
NEWS_COLUMNS = ("ID", "TITLE", "URL", "PUBLISHER", "CATEGORY", "STORY", "HOSTNAME", "TIMESTAMP")


class DocumentFormatError(PairFormatError):
    """A document collection is malformed. The message reads `path:record: what was wrong`,
    where record is a line number, an archive member or a document id."""

    def __init__(self, path: Union[str, Path], record: Optional[Union[int, str]], reason: str) -> None:
        ValueError.__init__(self, f"{path}:{record}: {reason}" if record is not None else f"{path}: {reason}")
        self.path = str(path)
        self.line = record
        self.reason = reason


class DocRecord(NamedTuple):
    text: str
    labels: Tuple[str, ...]  # documents sharing a label are similar
    group: str = ""  # coarser class: same group but no shared label = hard negative
    id: str = ""  # where the record came from (member, NEWID, ID)


class PairIndex(NamedTuple):
    i: int
    j: int
    label: float


# Readers


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
    """Read a labelled collection. `split`: Reuters "train"/"test" = ModApte, "all" = every
    document with a topic; 20news "train"/"test" = the archive's `*-train`/`*-test` root
    (an archive of the train half alone has no test part), "all" = both. news and jsonl
    are read whole."""
    if collection not in COLLECTIONS:
        raise ValueError(f"Unknown document collection {collection!r}. Choose one of: {', '.join(COLLECTIONS)}.")
    loc = ensure_path(path)
    if not loc.exists():
        raise FileNotFoundError(f"Document collection not found: {loc}")
    if collection in ("20news", "reuters") and split not in ("train", "test", "all"):
        raise ValueError(f"{collection} split must be 'train', 'test' or 'all', got {split!r}")
    if collection == "20news":
        items = _iter_20news(loc, split, strip_headers, strip_quotes, strip_signatures)
    elif collection == "reuters":
        items = _iter_reuters(loc, split)
    elif collection == "news":
        items = _iter_news(loc)
    else:
        items = _iter_jsonl(loc)
    return _collect(items, loc, lenient)


def read_20news(path: Union[str, Path], **kwargs) -> List[DocRecord]:
    return read_documents("20news", path, **kwargs)


def read_reuters(path: Union[str, Path], *, split: str = "train", lenient: bool = False) -> List[DocRecord]:
    return read_documents("reuters", path, split=split, lenient=lenient)


def read_news(path: Union[str, Path], *, lenient: bool = False) -> List[DocRecord]:
    return read_documents("news", path, lenient=lenient)


Item = Union[DocRecord, DocumentFormatError]


def _collect(items: Iterator[Item], path: Path, lenient: bool) -> List[DocRecord]:
    docs: List[DocRecord] = []
    skipped: List[DocumentFormatError] = []
    for item in items:
        if isinstance(item, DocumentFormatError):
            if not lenient:
                raise item
            skipped.append(item)
        else:
            docs.append(item)
    if skipped:
        shown = "; ".join(f"{e.line}: {e.reason}" for e in skipped[:MAX_REPORTED])
        more = f"; and {len(skipped) - MAX_REPORTED} more" if len(skipped) > MAX_REPORTED else ""
        warnings.warn(f"Skipped {len(skipped)} malformed record(s) in {path} (lenient=True): {shown}{more}", UserWarning)
    if not docs:
        raise DocumentFormatError(path, None, "no documents found")
    return docs


def _iter_20news(
    path: Path, split: str, strip_headers: bool, strip_quotes: bool, strip_signatures: bool
) -> Iterator[Item]:
    other_half = {"train": "-test", "test": "-train"}.get(split)
    try:
        archive = tarfile.open(path, "r:*")
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
            if other_half and parts[0].endswith(other_half):
                continue
            raw = archive.extractfile(member).read()  # type: ignore[union-attr]
            try:
                text = raw.decode("utf8").replace("\r\n", "\n")
            except UnicodeDecodeError as err:
                yield DocumentFormatError(path, member.name, f"invalid UTF-8 (byte {raw[err.start]:#04x} at {err.start})")
                continue
            if strip_headers and "\n\n" not in text:
                yield DocumentFormatError(path, member.name, "no blank line between the headers and the body")
                continue
            if strip_headers:
                text = strip_newsgroup_header(text)
            if strip_quotes:
                text = strip_newsgroup_quoting(text)
            if strip_signatures:
                text = strip_newsgroup_footer(text)
            yield DocRecord(text.strip(), (parts[1],), parts[1], member.name)


_REUTERS_BLOCK = re.compile(r"<REUTERS\b([^>]*)>(.*?)</REUTERS>", re.DOTALL)
_REUTERS_ATTR = re.compile(r'(\w+)="([^"]*)"')
_TOPICS = re.compile(r"<TOPICS>(.*?)</TOPICS>", re.DOTALL)
_D = re.compile(r"<D>(.*?)</D>", re.DOTALL)
_TITLE = re.compile(r"<TITLE>(.*?)</TITLE>", re.DOTALL)
_BODY = re.compile(r"<BODY>(.*?)</BODY>", re.DOTALL)
_TEXT = re.compile(r"<TEXT\b[^>]*>(.*?)</TEXT>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f]")


def _reuters_files(path: Path) -> Iterator[Tuple[str, str]]:
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
                (m for m in archive if m.isfile() and re.fullmatch(r"reut2-\d+\.sgm", m.name.rsplit("/", 1)[-1])),
                key=lambda m: m.name,
            )
            if not members:
                raise DocumentFormatError(path, None, "no reut2-*.sgm files in this archive")
            for member in members:
                raw = archive.extractfile(member).read()  # type: ignore[union-attr]
                yield f"{path}:{member.name}", raw.decode("latin-1")
    else:
        yield str(path), path.read_text(encoding="latin-1")


def _iter_reuters(path: Path, split: str) -> Iterator[Item]:
    for file_, text in _reuters_files(path):
        n_open = len(re.findall(r"<REUTERS\b", text))
        blocks = list(_REUTERS_BLOCK.finditer(text))
        line, pos = 1, 0
        for match in blocks:
            line += text.count("\n", pos, match.start())
            pos = match.start()
            attrs = dict(_REUTERS_ATTR.findall(match.group(1)))
            missing = [a for a in ("TOPICS", "LEWISSPLIT", "NEWID") if a not in attrs]
            if missing:
                yield DocumentFormatError(file_, line, f"<REUTERS> tag lacks attribute(s) {', '.join(missing)}")
                continue
            body = match.group(2)
            topics_match = _TOPICS.search(body)
            if topics_match is None:
                yield DocumentFormatError(file_, line, f"NEWID={attrs['NEWID']}: no <TOPICS> element")
                continue
            topics = tuple(html.unescape(t).strip() for t in _D.findall(topics_match.group(1)))
            if split != "all" and (attrs["TOPICS"] != "YES" or attrs["LEWISSPLIT"] != split.upper()):
                continue
            if not topics:
                continue  # ModApte keeps documents with at least one topic
            text_match = _TEXT.search(body)
            if text_match is None:
                yield DocumentFormatError(file_, line, f"NEWID={attrs['NEWID']}: no <TEXT> element")
                continue
            parts = [m.group(1) for m in (_TITLE.search(body), _BODY.search(body)) if m is not None]
            if not parts:  # TYPE="UNPROC" / "BRIEF": the text is not marked up
                parts = [_TAG.sub(" ", text_match.group(1))]
            doc_text = _CONTROL.sub(" ", html.unescape("\n".join(parts))).strip()
            if not doc_text:
                yield DocumentFormatError(file_, line, f"NEWID={attrs['NEWID']}: empty <TEXT>")
                continue
            yield DocRecord(doc_text, topics, topics[0], f"NEWID={attrs['NEWID']}")
        if n_open != len(blocks):
            yield DocumentFormatError(file_, None, f"{n_open - len(blocks)} <REUTERS> element(s) not closed")


def _iter_jsonl(path: Path) -> Iterator[Item]:
    with path.open(encoding="utf8") as file_:
        for line_no, line in enumerate(file_, 1):
            if not line.strip():
                continue
            try:
                obj = json_object(line)
            except ValueError as err:
                yield DocumentFormatError(path, line_no, str(err))
                continue
            labels = obj.get("labels", [obj["label"]] if "label" in obj else None)
            if isinstance(labels, str):
                labels = [labels]
            text = obj.get("text")
            if not isinstance(text, str):  # may be empty: 20news messages can be, once stripped
                yield DocumentFormatError(path, line_no, 'field "text" is missing or not a string')
            elif not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x for x in labels):
                yield DocumentFormatError(path, line_no, 'field "labels" must be a non-empty list of strings')
            else:
                yield DocRecord(text, tuple(labels), str(obj.get("group", "")), str(obj.get("id", line_no)))


def write_documents(docs: Sequence[DocRecord], path: Union[str, Path]) -> None:
    """Write a collection in the "jsonl" format (read it back with `read_documents("jsonl", path)`)."""
    srsly.write_jsonl(path, ({"text": d.text, "labels": list(d.labels), "group": d.group, "id": d.id} for d in docs))


def _iter_news(path: Path) -> Iterator[Item]:
    with path.open(encoding="utf8", newline="") as file_:
        reader = csv.reader(file_)
        header = next(reader, None)
        if header is None or [h.strip() for h in header[: len(NEWS_COLUMNS)]] != list(NEWS_COLUMNS):
            raise DocumentFormatError(path, 1, f"expected the header {','.join(NEWS_COLUMNS)}, found {header}")
        start = reader.line_num + 1
        for row in reader:
            line, start = start, reader.line_num + 1
            if not row:
                continue
            if len(row) != len(header):
                yield DocumentFormatError(path, line, f"expected {len(header)} fields, found {len(row)}")
                continue
            fields = dict(zip(NEWS_COLUMNS, row))
            empty = [c for c in ("TITLE", "CATEGORY", "STORY") if not fields[c].strip()]
            if empty:
                yield DocumentFormatError(path, line, f"empty field(s) {', '.join(empty)}")
                continue
            yield DocRecord(fields["TITLE"].strip(), (fields["STORY"],), fields["CATEGORY"], fields["ID"])


# Splitting and sampling


def split_documents(
    docs: Sequence[DocRecord], *, dev_fraction: float = 0.2, seed: int = 0
) -> Tuple[List[DocRecord], List[DocRecord]]:
    """A seeded random (train, held-out) split of a collection."""
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be in (0, 1), got {dev_fraction}")
    order = numpy.random.default_rng(seed).permutation(len(docs))
    n_dev = int(round(dev_fraction * len(docs)))
    return [docs[i] for i in sorted(order[n_dev:])], [docs[i] for i in sorted(order[:n_dev])]


def sample_pairs(
    docs: Sequence[DocRecord],
    *,
    n_pairs: int,
    positive_ratio: float = 0.5,
    hard_negative_ratio: float = 0.0,
    seed: int = 0,
) -> List[PairIndex]:
    """Draw `n_pairs` seeded pairs of document indices: positives share a label, negatives
    share none. A `hard_negative_ratio` of the negatives come from the anchor's group
    (e.g. same news category, other story) where the group has such a document."""
    if not 0.0 <= positive_ratio <= 1.0 or not 0.0 <= hard_negative_ratio <= 1.0:
        raise ValueError("positive_ratio and hard_negative_ratio must be in [0, 1]")
    rng = numpy.random.default_rng(seed)
    by_label: Dict[str, List[int]] = defaultdict(list)
    by_group: Dict[str, List[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        for label in set(doc.labels):
            by_label[label].append(i)
        by_group[doc.group].append(i)
    anchors = [i for i, doc in enumerate(docs) if any(len(by_label[l]) > 1 for l in doc.labels)]
    if not anchors:
        raise ValueError("sample_pairs: no two documents share a label, so there are no positive pairs")
    n_pos = int(round(positive_ratio * n_pairs))
    pairs: List[PairIndex] = []
    for k in range(n_pairs):
        if k < n_pos:
            i = anchors[rng.integers(len(anchors))]
            peers = [l for l in docs[i].labels if len(by_label[l]) > 1]
            members = by_label[peers[rng.integers(len(peers))]]
            j = i
            while j == i:
                j = members[rng.integers(len(members))]
            pairs.append(PairIndex(i, j, 1.0))
        else:
            i = int(rng.integers(len(docs)))
            hard = rng.random() < hard_negative_ratio
            pool = by_group[docs[i].group] if hard else None
            j = _draw_negative(docs, i, pool, rng)
            if j is None:
                j = _draw_negative(docs, i, None, rng)
            if j is None:
                raise ValueError(f"sample_pairs: document {docs[i].id or i} shares a label with every other document")
            pairs.append(PairIndex(i, j, 0.0))
    order = rng.permutation(len(pairs))  # mix positives and negatives
    return [pairs[k] for k in order]


def _draw_negative(
    docs: Sequence[DocRecord], i: int, pool: Optional[List[int]], rng: numpy.random.Generator, tries: int = 50
) -> Optional[int]:
    labels = set(docs[i].labels)
    for _ in range(tries):
        j = pool[rng.integers(len(pool))] if pool else int(rng.integers(len(docs)))
        if j != i and labels.isdisjoint(docs[j].labels):
            return j
    return None


# The reader for spacy train


@registry.readers("spacy-siamese.DocumentPairs.v1")
def create_document_pairs(
    path: Optional[Path],
    *,
    collection: str,
    split: str = "train",
    dev_fraction: float = 0.2,
    n_pairs: int = 10000,
    positive_ratio: float = 0.5,
    hard_negative_ratio: float = 0.0,
    seed: int = 0,
    strip_headers: bool = True,
    strip_quotes: bool = True,
    strip_signatures: bool = True,
    max_chars: int = 0,
    lenient: bool = False,
) -> Callable[[Language], Iterator[Example]]:
    """Seeded pairs from a labelled document collection as pair Examples.

    split: "train" / "dev" = the two parts of a seeded split (`dev_fraction`, `seed`) of the
    collection's training part (Reuters: ModApte train), "all" = the whole training part,
    "test" = Reuters' ModApte test part. The same seed gives the same pairs on every epoch.
    """
    if path is None:
        raise ValueError(
            "spacy-siamese.DocumentPairs.v1: the collection path is None. Set it in the config or on "
            "the command line, e.g. `python -m spacy train configs/s2net_20news.cfg --paths.collection "
            "20news-bydate-train.tar.gz`."
        )
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    return DocumentPairs(
        path,
        collection=collection,
        split=split,
        dev_fraction=dev_fraction,
        n_pairs=n_pairs,
        positive_ratio=positive_ratio,
        hard_negative_ratio=hard_negative_ratio,
        seed=seed,
        strip=(strip_headers, strip_quotes, strip_signatures),
        max_chars=max_chars,
        lenient=lenient,
    )


class DocumentPairs:
    """Callable corpus: `corpus(nlp)` yields the sampled pairs as pair Examples. The
    collection is read and sampled once, on the first call."""

    def __init__(
        self,
        path: Union[str, Path],
        *,
        collection: str,
        split: str = "train",
        dev_fraction: float = 0.2,
        n_pairs: int = 10000,
        positive_ratio: float = 0.5,
        hard_negative_ratio: float = 0.0,
        seed: int = 0,
        strip: Tuple[bool, bool, bool] = (True, True, True),
        max_chars: int = 0,
        lenient: bool = False,
    ) -> None:
        self.path = ensure_path(path)
        self.collection = collection
        self.split = split
        self.dev_fraction = dev_fraction
        self.n_pairs = n_pairs
        self.positive_ratio = positive_ratio
        self.hard_negative_ratio = hard_negative_ratio
        self.seed = seed
        self.strip = strip
        self.max_chars = max_chars
        self.lenient = lenient
        self._pairs: Optional[Tuple[List[str], List[PairIndex]]] = None

    def documents(self) -> List[DocRecord]:
        docs = read_documents(
            self.collection,
            self.path,
            split="test" if self.split == "test" else "train",
            strip_headers=self.strip[0],
            strip_quotes=self.strip[1],
            strip_signatures=self.strip[2],
            lenient=self.lenient,
        )
        if self.split in ("train", "dev"):
            train, dev = split_documents(docs, dev_fraction=self.dev_fraction, seed=self.seed)
            docs = train if self.split == "train" else dev
        return docs

    def pairs(self) -> Tuple[List[str], List[PairIndex]]:
        """(texts, sampled pairs of indices into texts), computed once."""
        if self._pairs is None:
            docs = self.documents()
            sampled = sample_pairs(
                docs,
                n_pairs=self.n_pairs,
                positive_ratio=self.positive_ratio,
                hard_negative_ratio=self.hard_negative_ratio,
                seed=self.seed,
            )
            cut = self.max_chars if self.max_chars > 0 else None
            self._pairs = ([doc.text[:cut] for doc in docs], sampled)
        return self._pairs

    def __call__(self, nlp: Language) -> Iterator[Example]:
        texts, sampled = self.pairs()
        used = sorted({p.i for p in sampled} | {p.j for p in sampled})
        tokenized = dict(zip(used, nlp.tokenizer.pipe(texts[i] for i in used)))  # each document once
        yield from doc_pair_examples(tokenized, sampled)


def doc_pair_examples(docs: Union[Sequence[Doc], Dict[int, Doc]], pairs: Sequence[PairIndex]) -> Iterator[Example]:
    """Pair Examples from already tokenized docs, so a document in many pairs is
    tokenized once."""
    for i, j, label in pairs:
        yield pair_example(docs[i].copy(), docs[j], label)
