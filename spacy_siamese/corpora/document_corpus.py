"""Labelled document collections (`read_documents`) as Examples for `spacy train`: seeded document pairs
(`DocumentPairs`, `HierarchyPairs`) and labelled single docs (`LabelledDocuments`)."""

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import ensure_path

from ..labelled import labelled_doc_example
from . import jsonl, newsgroups, reuters, uci_news
from .base import DocItem, DocRecord, DocumentFormatError, PairFormatError, check_path, skip_malformed, warn_skipped
from .hierarchy import group_of, group_path, sample_hierarchy_pairs
from .sampling import PairIndex, doc_pair_examples, sample_pairs, split_documents

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
    """Read a labelled collection: "20news", "reuters", "news" (UCI) or "jsonl". split (str): "train", "test" (20news,
    Reuters ModApte) or "all"; news and jsonl are read whole. lenient (bool): skip malformed records and warn once,
    instead of raising DocumentFormatError."""
    if collection not in COLLECTIONS:
        raise ValueError(f"Unknown document collection {collection!r}. Choose one of: {', '.join(COLLECTIONS)}.")
    loc = check_path(path, what="document collection", allow_dir=collection in (newsgroups.NAME, reuters.NAME))
    if collection in (newsgroups.NAME, reuters.NAME) and split not in ("train", "test", "all"):
        raise ValueError(f"{collection} split must be 'train', 'test' or 'all', got {split!r}")
    items: Iterator[DocItem]
    if collection == newsgroups.NAME:
        strip = {"strip_headers": strip_headers, "strip_quotes": strip_quotes, "strip_signatures": strip_signatures}
        items = newsgroups.read_20news(loc, split=split, **strip)
    elif collection == reuters.NAME:
        items = reuters.read_reuters(loc, split=split)
    elif collection == uci_news.NAME:
        items = uci_news.read_news(loc)
    else:
        items = jsonl.read_jsonl_documents(loc)
    skipped: List[PairFormatError] = []
    docs = list(skip_malformed(items, lenient, skipped))
    warn_skipped(skipped, f"Skipped {len(skipped)} malformed record(s) in {loc} (lenient=True)")
    if not docs:
        raise DocumentFormatError(loc, None, "no documents found")
    return docs


SPLITS = ("train", "dev", "all", "test")
LABEL_FIELDS = ("labels", "group")


@dataclass(frozen=True)
class Collection:
    """The documents of a labelled collection that a reader takes. split: "train" / "dev" = a
    seeded split of the training part, "all" = the training part, "test" = the test part
    (20news, Reuters only); with `test_fraction`, the test part is a seeded fraction instead."""

    path: Path
    collection: str
    split: str = "train"
    dev_fraction: float = 0.2
    seed: int = 0
    strip_headers: bool = True
    strip_quotes: bool = True
    strip_signatures: bool = True
    max_chars: int = 0
    lenient: bool = False
    test_fraction: Optional[float] = None

    @classmethod
    def of(cls, reader: type, settings: Dict[str, Any]) -> "Collection":
        """The collection a reader's arguments name; a ValueError names the reader."""
        if settings["path"] is None:
            raise ValueError(
                f"spacy-siamese.{reader.__name__}.v1: the collection path is None. Set it in the config or on "
                "the command line, e.g. `python -m spacy train config.cfg --paths.collection documents.jsonl`."
            )
        if settings["split"] not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {settings['split']!r}")
        known = {field.name: settings[field.name] for field in fields(cls) if field.name in settings}
        return cls(**{**known, "path": ensure_path(settings["path"])})

    def documents(self) -> List[DocRecord]:
        """The documents of the split, in collection order."""
        test_part = self.split == "test" and self.test_fraction is None
        if test_part and self.collection in (jsonl.NAME, uci_news.NAME):  # read whole, no test part
            raise ValueError(
                f"split 'test': the {self.collection} collection has no test part (only 20news or reuters have "
                "one); use 'train' / 'dev' (a seeded split) or 'all', and keep test documents in their own file"
            )
        docs = read_documents(
            self.collection,
            self.path,
            split="test" if test_part else "train",
            strip_headers=self.strip_headers,
            strip_quotes=self.strip_quotes,
            strip_signatures=self.strip_signatures,
            lenient=self.lenient,
        )
        if self.test_fraction is not None and self.split != "all":  # the test part: a seeded fraction
            docs, test = split_documents(docs, dev_fraction=self.test_fraction, seed=self.seed)
            if self.split == "test":
                return test
        if self.split in ("train", "dev"):
            train, dev = split_documents(docs, dev_fraction=self.dev_fraction, seed=self.seed)
            return train if self.split == "train" else dev
        return docs

    def texts(self, docs: List[DocRecord]) -> List[str]:
        """The documents' texts, truncated to `max_chars` if > 0."""
        cut = self.max_chars if self.max_chars > 0 else None
        return [doc.text[:cut] for doc in docs]


class DocumentPairs:
    """Seeded pairs of a labelled collection as pair Examples (1.0: the two share a label),
    sampled once, on the first call, so every epoch has the same pairs. split: see `Collection`."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
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
    ) -> None:
        self.source = Collection.of(DocumentPairs, locals())  # the collection settings among the arguments
        self.n_pairs = n_pairs
        self.positive_ratio = positive_ratio
        self.hard_negative_ratio = hard_negative_ratio
        self._pairs: Optional[Tuple[List[str], List[PairIndex]]] = None

    def documents(self) -> List[DocRecord]:
        return self.source.documents()

    def sample(self, docs: List[DocRecord]) -> List[PairIndex]:
        """The seeded pairs of indices into `docs`."""
        return sample_pairs(
            docs,
            n_pairs=self.n_pairs,
            positive_ratio=self.positive_ratio,
            hard_negative_ratio=self.hard_negative_ratio,
            seed=self.source.seed,
        )

    def pairs(self) -> Tuple[List[str], List[PairIndex]]:
        """(texts, sampled pairs of indices into texts), computed once."""
        if self._pairs is None:
            docs = self.documents()
            self._pairs = (self.source.texts(docs), self.sample(docs))
        return self._pairs

    def __call__(self, nlp: Language) -> Iterator[Example]:
        texts, sampled = self.pairs()
        used = sorted({p.i for p in sampled} | {p.j for p in sampled})
        tokenized = dict(zip(used, tokenize(nlp, (texts[i] for i in used))))  # each document once
        yield from doc_pair_examples(tokenized, sampled)


class HierarchyPairs(DocumentPairs):
    """Seeded document pairs graded by the lowest common ancestor of their dotted groups
    (`corpora.hierarchy`), about equally many per score; `depth` 0 = from the groups."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        collection: str = "jsonl",
        split: str = "train",
        test_fraction: float = 0.2,
        dev_fraction: float = 0.1,
        n_pairs: int = 5000,
        depth: int = 0,
        seed: int = 0,
        max_chars: int = 0,
        lenient: bool = False,
    ) -> None:
        self.source = Collection.of(HierarchyPairs, locals())
        self.n_pairs = n_pairs
        self.depth = depth
        self._pairs = None

    def documents(self) -> List[DocRecord]:
        docs = self.source.documents()
        for doc in docs:
            try:
                group_path(group_of(doc))
            except ValueError as err:
                raise DocumentFormatError(self.source.path, doc.id or None, str(err)) from None
        return docs

    def sample(self, docs: List[DocRecord]) -> List[PairIndex]:
        return sample_hierarchy_pairs(docs, n_pairs=self.n_pairs, depth=self.depth, seed=self.source.seed)[0]


class LabelledDocuments:
    """A labelled collection's documents as labelled single-doc Examples, for TripletLoss.v1.
    label: "labels" or "group"; at most `limit` documents if > 0; split: see `Collection`."""

    def __init__(
        self,
        path: Optional[Union[str, Path]],
        *,
        collection: str,
        split: str = "train",
        dev_fraction: float = 0.2,
        seed: int = 0,
        label: str = "labels",
        strip_headers: bool = True,
        strip_quotes: bool = True,
        strip_signatures: bool = True,
        max_chars: int = 0,
        limit: int = 0,
        lenient: bool = False,
    ) -> None:
        self.source = Collection.of(LabelledDocuments, locals())
        if label not in LABEL_FIELDS:
            raise ValueError(f"label must be one of {', '.join(LABEL_FIELDS)}, got {label!r}")
        self.label = label
        self.limit = limit
        self._docs: Optional[List[Tuple[str, Tuple[str, ...]]]] = None

    def documents(self) -> List[Tuple[str, Tuple[str, ...]]]:
        """(text, labels) of each document, read once."""
        if self._docs is None:
            docs = self.source.documents()
            if self.limit > 0:
                docs = docs[: self.limit]
            out = []
            for doc, text in zip(docs, self.source.texts(docs)):
                labels = doc.labels if self.label == "labels" else ((doc.group,) if doc.group else ())
                if not labels or not all(labels):
                    raise DocumentFormatError(self.source.path, doc.id or None, f"the document has no {self.label}")
                out.append((text, tuple(labels)))
            self._docs = out
        return self._docs

    def __call__(self, nlp: Language) -> Iterator[Example]:
        docs = self.documents()
        for doc, (_, labels) in zip(tokenize(nlp, (text for text, _ in docs)), docs):
            yield labelled_doc_example(doc, labels)


def tokenize(nlp: Language, texts: Iterable[str]) -> Iterator[Doc]:
    """The texts through the pipeline's tokenizer, batched where it can."""
    tokenizer = nlp.tokenizer
    return tokenizer.pipe(texts) if hasattr(tokenizer, "pipe") else map(tokenizer, texts)
