"""The registered corpus readers for `spacy train`: pair files (one, or several datasets
tagged by name) and seeded pairs of labelled documents, as pair Examples (see
`spacy_siamese.pair_examples`)."""

from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import ensure_path, registry

from ..labelled import labelled_doc_example
from ..pair_examples import make_pair_example
from ..validation import check_dataset_name
from . import jsonl, uci_news
from .base import DocRecord, DocumentFormatError, check_path
from .document_files import read_documents
from .hierarchy import group_of, group_path, sample_hierarchy_pairs
from .pair_files import PAIR_FORMATS, read_pairs
from .sampling import PairIndex, doc_pair_examples, sample_pairs, split_documents

SPLITS = ("train", "dev", "all", "test")


@registry.readers("spacy-siamese.PairCorpus.v1")
def create_pair_corpus(
    path: Optional[Path], *, format: str = "auto", limit: int = 0, lenient: bool = False, dataset: Optional[str] = None
) -> Callable[[Language], Iterator[Example]]:
    """Read a pair file as pair Examples, re-reading it on every call (epoch).

    dataset: tag every Example with this dataset name, as `spacy-siamese.MultiPairCorpus.v1`
    does, so that a pipe trained on several datasets (`spacy-siamese.DatasetLosses.v1`) is
    fine-tuned on one of them with that dataset's loss (null: untagged, the default loss).
    """
    if dataset is not None:
        check_dataset_name(dataset)
    if path is None:
        raise ValueError(
            "spacy-siamese.PairCorpus.v1: the corpus path is None. Set paths.train and "
            "paths.dev in the config, or on the command line, e.g. "
            "`python -m spacy train config.cfg --paths.train train.tsv --paths.dev dev.tsv`."
        )
    return PairCorpus(path, format=format, limit=limit, lenient=lenient, dataset=dataset)


class PairCorpus:
    """Callable corpus like spacy.training.Corpus: `corpus(nlp)` yields one pair
    Example per record in the file, at most `limit` if limit > 0, tagged with `dataset` if given."""

    def __init__(
        self,
        path: Union[str, Path],
        *,
        format: str = "auto",
        limit: int = 0,
        lenient: bool = False,
        dataset: Optional[str] = None,
    ) -> None:
        self.path = ensure_path(path)
        self.format = format
        self.limit = limit
        self.lenient = lenient
        self.dataset = dataset

    def __call__(self, nlp: Language) -> Iterator[Example]:
        records = read_pairs(self.path, format=self.format, lenient=self.lenient)
        try:
            for i, record in enumerate(records):
                if self.limit > 0 and i >= self.limit:
                    break
                yield make_pair_example(nlp, record.text1, record.text2, record.label, dataset=self.dataset)
        finally:
            records.close()  # emit the lenient-mode warning now, not at garbage collection


DATASET_FIELDS = {"path": None, "format": "auto", "limit": 0, "lenient": False}


@registry.readers("spacy-siamese.MultiPairCorpus.v1")
def create_multi_pair_corpus(
    *, datasets: Dict[str, Dict[str, Any]], root: Optional[Path] = None
) -> Callable[[Language], Iterator[Example]]:
    """Read several pair files as pair Examples tagged with their dataset's name, one dataset
    after the other in config order, re-reading them on every call (epoch).

    datasets: name -> {path, format ("auto"), limit (0 = all), lenient (false)}, as for
    `spacy-siamese.PairCorpus.v1`. A name (lower-case letters, digits, "_") is what
    `spacy-siamese.DatasetLosses.v1`, `spacy-siamese.batch_by_dataset.v1` (weights) and the
    metrics of `spacy-siamese.dataset_scorer.v1` (sim_<name>_auc) call the dataset.
    root: the directory relative paths are read from (default: the working directory).

        [corpora.train]
        @readers = "spacy-siamese.MultiPairCorpus.v1"
        root = ${paths.corpus}

        [corpora.train.datasets.quora]
        path = "quora/train.jsonl"
        limit = 0

        [corpora.train.datasets.sts]
        path = "sts/train.jsonl"
    """
    return MultiPairCorpus(datasets, root=root)


class MultiPairCorpus:
    """Callable corpus: `corpus(nlp)` yields the pair Examples of every dataset, each tagged with
    its name (`spacy_siamese.pair_examples.get_dataset`), dataset after dataset. Every file is
    checked to exist when the corpus is made."""

    def __init__(self, datasets: Mapping[str, Mapping[str, Any]], *, root: Optional[Union[str, Path]] = None) -> None:
        where = "spacy-siamese.MultiPairCorpus.v1"
        if not datasets:
            raise ValueError(f"{where}: no datasets; give them as [corpora.NAME.datasets.DATASET] sections.")
        base = ensure_path(root) if root is not None else None
        self.corpora: Dict[str, PairCorpus] = {}
        for name, settings in datasets.items():
            check_dataset_name(name)
            if not isinstance(settings, Mapping):
                raise ValueError(f"{where}: dataset '{name}' must be a section with a path, got {settings!r}")
            unknown = sorted(set(settings) - set(DATASET_FIELDS))
            if unknown:
                hint = " (weights belong to spacy-siamese.batch_by_dataset.v1)" if "weight" in unknown else ""
                raise ValueError(
                    f"{where}: dataset '{name}' has unknown setting(s) {', '.join(unknown)}; "
                    f"it takes {', '.join(DATASET_FIELDS)}{hint}."
                )
            opts = {**DATASET_FIELDS, **settings}
            if opts["path"] is None:
                raise ValueError(f"{where}: dataset '{name}' has no path.")
            if opts["format"] not in ("auto",) + PAIR_FORMATS:
                raise ValueError(
                    f"{where}: dataset '{name}': unknown format {opts['format']!r} "
                    f"(choose one of {', '.join(('auto',) + PAIR_FORMATS)})."
                )
            limit, lenient = opts["limit"], opts["lenient"]
            whole = isinstance(limit, int) or (isinstance(limit, float) and limit.is_integer())
            if isinstance(limit, bool) or not whole:
                raise ValueError(f"{where}: dataset '{name}': limit must be a whole number (0 = all), got {limit!r}.")
            if not isinstance(lenient, bool):
                raise ValueError(f"{where}: dataset '{name}': lenient must be true or false, got {lenient!r}.")
            path = ensure_path(opts["path"])
            if base is not None and not path.is_absolute():
                path = base / path
            try:
                check_path(path, allow_dir=True)
            except (FileNotFoundError, ValueError) as err:
                hint = "" if base is not None else " Relative paths are read from `root` (not set)."
                raise type(err)(f"{where}: dataset '{name}': {err}.{hint}") from None
            self.corpora[name] = PairCorpus(
                path, format=opts["format"], limit=int(limit), lenient=lenient, dataset=name
            )

    @property
    def names(self) -> List[str]:
        return list(self.corpora)

    def __call__(self, nlp: Language) -> Iterator[Example]:
        for corpus in self.corpora.values():
            yield from corpus(nlp)


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
    "test" = the test part (Reuters: ModApte test; 20news: the archive's `*-test` root; a
    jsonl or news collection has none and raises). The same seed gives the same pairs on every epoch.
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
        if self.split == "test" and self.collection in (jsonl.NAME, uci_news.NAME):  # read whole, no test part
            raise ValueError(
                f"split 'test': the {self.collection} collection has no test part (only 20news or reuters have "
                "one); use 'train' / 'dev' (a seeded split) or 'all', and keep test documents in their own file"
            )
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

    def sample(self, docs: List[DocRecord]) -> List[PairIndex]:
        """The seeded pairs of indices into `docs`."""
        return sample_pairs(
            docs,
            n_pairs=self.n_pairs,
            positive_ratio=self.positive_ratio,
            hard_negative_ratio=self.hard_negative_ratio,
            seed=self.seed,
        )

    def pairs(self) -> Tuple[List[str], List[PairIndex]]:
        """(texts, sampled pairs of indices into texts), computed once."""
        if self._pairs is None:
            docs = self.documents()
            sampled = self.sample(docs)
            cut = self.max_chars if self.max_chars > 0 else None
            self._pairs = ([doc.text[:cut] for doc in docs], sampled)
        return self._pairs

    def __call__(self, nlp: Language) -> Iterator[Example]:
        texts, sampled = self.pairs()
        used = sorted({p.i for p in sampled} | {p.j for p in sampled})
        tokenized = dict(zip(used, tokenize(nlp, (texts[i] for i in used))))  # each document once
        yield from doc_pair_examples(tokenized, sampled)


def tokenize(nlp: Language, texts: Iterable[str]) -> Iterator[Doc]:
    """The texts through the pipeline's tokenizer, batched where it can."""
    tokenizer = nlp.tokenizer
    return tokenizer.pipe(texts) if hasattr(tokenizer, "pipe") else map(tokenizer, texts)


LABEL_FIELDS = ("labels", "group")


@registry.readers("spacy-siamese.LabelledDocuments.v1")
def create_labelled_documents(
    path: Optional[Path],
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
) -> Callable[[Language], Iterator[Example]]:
    """The documents of a labelled collection as labelled single-doc Examples
    (`spacy_siamese.labelled`), for losses that mine triplets in each batch
    (`spacy-siamese.TripletLoss.v1`).

    split: as in `spacy-siamese.DocumentPairs.v1` (the same `dev_fraction` and `seed` give the
    same documents). label: "labels" (20news: the newsgroup; UCI news: the story; Reuters: the
    topics) or "group" (UCI news: the category). At most `limit` documents if > 0.
    """
    if path is None:
        raise ValueError(
            "spacy-siamese.LabelledDocuments.v1: the collection path is None. Set it in the config or on "
            "the command line, e.g. `--paths.collection corpus/20news/documents.jsonl`."
        )
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    if label not in LABEL_FIELDS:
        raise ValueError(f"label must be one of {', '.join(LABEL_FIELDS)}, got {label!r}")
    return LabelledDocuments(
        path,
        collection=collection,
        split=split,
        dev_fraction=dev_fraction,
        seed=seed,
        label=label,
        strip=(strip_headers, strip_quotes, strip_signatures),
        max_chars=max_chars,
        limit=limit,
        lenient=lenient,
    )


class LabelledDocuments:
    """Callable corpus: `corpus(nlp)` yields one labelled-doc Example per document, in
    collection order. The collection is read once, on the first call."""

    def __init__(
        self,
        path: Union[str, Path],
        *,
        collection: str,
        split: str = "train",
        dev_fraction: float = 0.2,
        seed: int = 0,
        label: str = "labels",
        strip: Tuple[bool, bool, bool] = (True, True, True),
        max_chars: int = 0,
        limit: int = 0,
        lenient: bool = False,
    ) -> None:
        self.source = DocumentPairs(
            path, collection=collection, split=split, dev_fraction=dev_fraction, seed=seed, strip=strip, lenient=lenient
        )
        self.label = label
        self.max_chars = max_chars
        self.limit = limit
        self._docs: Optional[List[Tuple[str, Tuple[str, ...]]]] = None

    def documents(self) -> List[Tuple[str, Tuple[str, ...]]]:
        """(text, labels) of each document, read once."""
        if self._docs is None:
            docs = self.source.documents()
            if self.limit > 0:
                docs = docs[: self.limit]
            cut = self.max_chars if self.max_chars > 0 else None
            out = []
            for doc in docs:
                labels = doc.labels if self.label == "labels" else ((doc.group,) if doc.group else ())
                if not labels or not all(labels):
                    raise DocumentFormatError(self.source.path, doc.id or None, f"the document has no {self.label}")
                out.append((doc.text[:cut], tuple(labels)))
            self._docs = out
        return self._docs

    def __call__(self, nlp: Language) -> Iterator[Example]:
        docs = self.documents()
        for doc, (_, labels) in zip(tokenize(nlp, (text for text, _ in docs)), docs):
            yield labelled_doc_example(doc, labels)


@registry.readers("spacy-siamese.HierarchyPairs.v1")
def create_hierarchy_pairs(
    path: Optional[Path],
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
) -> Callable[[Language], Iterator[Example]]:
    """Seeded document pairs graded by the lowest common ancestor of their dotted group names
    (Patel 2017; see `spacy_siamese.corpora.hierarchy`), about equally many per score value. A
    document without a group is placed by its first label.

    split: "test" = a seeded `test_fraction` of the collection, "train" / "dev" = the two parts
    (`dev_fraction`) of the rest, "all" = everything. `depth` is the tree depth d (0 = from
    the groups). `max_chars` > 0 truncates every document.
    """
    if path is None:
        raise ValueError(
            "spacy-siamese.HierarchyPairs.v1: the collection path is None. Set it in the config or on "
            "the command line, e.g. `python -m spacy train config.cfg --paths.collection documents.jsonl`."
        )
    if split not in ("train", "dev", "test", "all"):
        raise ValueError(f"split must be one of train, dev, test, all, got {split!r}")
    return HierarchyPairs(
        path,
        collection=collection,
        split=split,
        test_fraction=test_fraction,
        dev_fraction=dev_fraction,
        n_pairs=n_pairs,
        depth=depth,
        seed=seed,
        max_chars=max_chars,
        lenient=lenient,
    )


class HierarchyPairs(DocumentPairs):
    """Callable corpus of hierarchy-graded pairs (label = LCA score); sampled once."""

    def __init__(
        self,
        path: Union[str, Path],
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
        super().__init__(
            path,
            collection=collection,
            split=split,
            dev_fraction=dev_fraction,
            n_pairs=n_pairs,
            seed=seed,
            max_chars=max_chars,
            lenient=lenient,
        )
        self.test_fraction = test_fraction
        self.depth = depth

    def documents(self) -> List[DocRecord]:
        docs = read_documents(self.collection, self.path, split="train", lenient=self.lenient)
        for doc in docs:
            try:
                group_path(group_of(doc))
            except ValueError as err:
                raise DocumentFormatError(self.path, doc.id or None, str(err)) from None
        if self.split == "all":
            return docs
        rest, test = split_documents(docs, dev_fraction=self.test_fraction, seed=self.seed)
        if self.split == "test":
            return test
        train, dev = split_documents(rest, dev_fraction=self.dev_fraction, seed=self.seed)
        return train if self.split == "train" else dev

    def sample(self, docs: List[DocRecord]) -> List[PairIndex]:
        return sample_hierarchy_pairs(docs, n_pairs=self.n_pairs, depth=self.depth, seed=self.seed)[0]
