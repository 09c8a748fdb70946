"""The registered corpus readers for `spacy train`: pair files and seeded pairs of
labelled documents, both as pair Examples (see `spacy_siamese.pairs`)."""

from pathlib import Path
from typing import Callable, Iterator, List, Optional, Tuple, Union

from spacy.language import Language
from spacy.training import Example
from spacy.util import ensure_path, registry

from ..pairs import make_pair_example
from .base import DocRecord
from .document_files import read_documents
from .pair_files import read_pairs
from .sampling import PairIndex, doc_pair_examples, sample_pairs, split_documents

SPLITS = ("train", "dev", "all", "test")


@registry.readers("spacy-siamese.PairCorpus.v1")
def create_pair_corpus(
    path: Optional[Path], *, format: str = "auto", limit: int = 0, lenient: bool = False
) -> Callable[[Language], Iterator[Example]]:
    """Read a pair file as pair Examples, re-reading it on every call (epoch)."""
    if path is None:
        raise ValueError(
            "spacy-siamese.PairCorpus.v1: the corpus path is None. Set paths.train and "
            "paths.dev in the config, or on the command line, e.g. "
            "`python -m spacy train config.cfg --paths.train train.tsv --paths.dev dev.tsv`."
        )
    return PairCorpus(path, format=format, limit=limit, lenient=lenient)


class PairCorpus:
    """Callable corpus like spacy.training.Corpus: `corpus(nlp)` yields one pair
    Example per record in the file, at most `limit` if limit > 0."""

    def __init__(self, path: Union[str, Path], *, format: str = "auto", limit: int = 0, lenient: bool = False) -> None:
        self.path = ensure_path(path)
        self.format = format
        self.limit = limit
        self.lenient = lenient

    def __call__(self, nlp: Language) -> Iterator[Example]:
        records = read_pairs(self.path, format=self.format, lenient=self.lenient)
        try:
            for i, record in enumerate(records):
                if self.limit > 0 and i >= self.limit:
                    break
                yield make_pair_example(nlp, record.text1, record.text2, record.label)
        finally:
            records.close()  # emit the lenient-mode warning now, not at garbage collection


def read_pair_examples(
    nlp: Language, path: Union[str, Path], *, format: str = "auto", limit: int = 0, lenient: bool = False
) -> List[Example]:
    """Read a pair file into a list of pair Examples (for scripts)."""
    return list(PairCorpus(path, format=format, limit=limit, lenient=lenient)(nlp))


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
            "the command line, e.g. `python -m spacy train config.cfg --paths.collection "
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
        tokenizer = nlp.tokenizer
        batch = (texts[i] for i in used)
        docs = tokenizer.pipe(batch) if hasattr(tokenizer, "pipe") else map(tokenizer, batch)
        tokenized = dict(zip(used, docs))  # each document once
        yield from doc_pair_examples(tokenized, sampled)
