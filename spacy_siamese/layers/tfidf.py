from typing import Callable, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from scipy.sparse import coo_matrix, csr_matrix
from spacy.attrs import IS_PUNCT, IS_SPACE, IS_STOP, LEMMA, LOWER, NORM, ORTH
from spacy.strings import get_string_id
from spacy.tokens import Doc
from thinc.api import Model, registry
from thinc.model import deserialize_attr, serialize_attr

TERM_ATTRS = {"lower": LOWER, "lemma": LEMMA, "norm": NORM, "orth": ORTH}


class TermTable:
    """The fitted vocabulary (term -> column) and inverse document frequencies."""

    def __init__(self, terms: Sequence[str] = (), idf: Union[Sequence[float], numpy.ndarray] = ()) -> None:
        if len(terms) != len(idf):
            raise ValueError(f"TermTable: {len(terms)} terms but {len(idf)} idf values")
        self.terms = list(terms)
        self.idf = numpy.asarray(idf, dtype="float32")
        self.hashes = numpy.asarray([get_string_id(term) for term in self.terms], dtype="uint64")  # by column
        self._order = numpy.argsort(self.hashes)
        self._sorted = self.hashes[self._order]

    def __len__(self) -> int:
        return len(self.terms)

    def lookup(self, keys: numpy.ndarray) -> numpy.ndarray:
        """Columns of term hashes, -1 for unknown terms."""
        if not len(self.terms):
            return numpy.full(len(keys), -1, dtype="int64")
        pos = numpy.minimum(numpy.searchsorted(self._sorted, keys), len(self._sorted) - 1)
        return numpy.where(self._sorted[pos] == keys, self._order[pos], -1)

    def to_bytes(self) -> bytes:
        return srsly.msgpack_dumps({"terms": self.terms, "idf": self.idf.tolist()})

    @classmethod
    def from_bytes(cls, data: bytes) -> "TermTable":
        return cls(**srsly.msgpack_loads(data))  # to_bytes writes the constructor's arguments (a subclass's too)


@serialize_attr.register(TermTable)
def _serialize_table(_: TermTable, value: TermTable, name: str, model: Model) -> bytes:
    return value.to_bytes()


@deserialize_attr.register(TermTable)
def _deserialize_table(default: TermTable, value: bytes, name: str, model: Model) -> TermTable:
    return type(default).from_bytes(value)  # the layer's own kind of table (a subclass's too)


@registry.layers("spacy-siamese.tfidf.v2")
def tfidf(
    *,
    attr: str = "lower",
    drop_stop: bool = False,
    drop_punct: bool = True,
    min_df: int = 2,
    max_vocab: int = 0,
    sublinear_tf: bool = True,
    normalize: bool = True,
) -> Model[List[Doc], csr_matrix]:
    """TF-IDF vectors of docs (CSR, n_docs x n_terms) over the tokens' `attr`. The vocabulary (in >= `min_df` training
    docs, the `max_vocab` most frequent if > 0) and the smoothed idf, ln((1 + n) / (1 + df)) + 1, are fitted in
    `initialize`; tf is the count or, with `sublinear_tf`, 1 + ln(count). A doc without a known term is a zero row."""
    check_term_settings("tfidf", attr=attr, min_df=min_df, max_vocab=max_vocab)
    return Model("tfidf", forward, init=init, dims={"nO": None}, attrs={"table": TermTable(), **locals()})


@registry.layers("spacy-siamese.tfidf.v1")
def tfidf_v1(
    *,
    attr: str = "lower",
    drop_stop: bool = False,
    drop_punct: bool = True,
    min_df: int = 1,
    max_vocab: int = 0,
    sublinear_tf: bool = False,
    normalize: bool = True,
) -> Model[List[Doc], csr_matrix]:
    """The first version: raw tf and min_df 1 by default (v2 has S2NetEncoder's defaults: min_df 2, sublinear tf)."""
    return tfidf(**locals())  # every argument, as given


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    if X is None:
        if not len(model.attrs["table"]):
            raise ValueError("tfidf: initialize with training docs to fit the vocabulary and idf")
        return
    terms, df, n = fit_vocabulary(model, X)
    idf = numpy.log((1.0 + n) / (1.0 + df)) + 1.0
    model.attrs["table"] = TermTable(terms, idf)
    model.set_dim("nO", len(terms), force=True)


def forward(model: Model, X: List[Doc], is_train: bool) -> Tuple[csr_matrix, Callable]:
    tf = term_counts(model, X)
    if model.attrs["sublinear_tf"]:
        tf.data = 1.0 + numpy.log(tf.data)
    tf.data *= model.attrs["table"].idf[tf.indices]
    if model.attrs["normalize"]:
        norms = numpy.sqrt(numpy.asarray(tf.multiply(tf).sum(axis=1)).ravel())
        tf.data /= numpy.repeat(numpy.where(norms > 0, norms, 1.0), numpy.diff(tf.indptr)).astype("float32")
    return tf, lambda dY: X  # no parameters


def check_term_settings(name: str, *, attr: str, min_df: int, max_vocab: int) -> None:
    """Raise on settings a term layer cannot fit a vocabulary with."""
    if attr not in TERM_ATTRS:
        raise ValueError(f"{name}: attr must be one of {', '.join(TERM_ATTRS)}, got {attr!r}")
    if min_df < 1 or max_vocab < 0:
        raise ValueError(f"{name}: need min_df >= 1 and max_vocab >= 0, got {min_df} and {max_vocab}")


def fit_vocabulary(model: Model, X: List[Doc]) -> Tuple[List[str], numpy.ndarray, int]:
    """The vocabulary of a term layer (attrs `attr`, `drop_stop`, `drop_punct`, `min_df`, `max_vocab`), most frequent
    first: (terms, their document frequencies, number of distinct docs); raises if no term is frequent enough."""
    terms, df, n = document_frequencies(model, X)
    return (*most_frequent(model, terms, df, n), n)


def most_frequent(model: Model, terms: Sequence[str], df: numpy.ndarray, n: int) -> Tuple[List[str], numpy.ndarray]:
    """The terms and their document frequencies, most frequent first (ties by term), the
    `max_vocab` first if > 0; raises if there are none (none of the n docs' terms reached min_df)."""
    order = sorted(range(len(terms)), key=lambda i: (-df[i], terms[i]))[: model.attrs["max_vocab"] or None]
    if not order:
        raise ValueError(f"{model.name}: no term occurs in at least min_df={model.attrs['min_df']} of the {n} docs")
    return [terms[i] for i in order], df[order]


def term_counts(model: Model, X: List[Doc]) -> csr_matrix:
    """(n_docs, n_terms) counts of the docs' terms in a term layer's fitted vocabulary (its
    `table`); unknown terms are ignored, a doc without a known term is a zero row."""
    table = model.attrs["table"]
    if not len(table):
        raise ValueError(f"{model.name}: the vocabulary is empty; initialize the model on training docs first")
    keys = [term_keys(model, doc) for doc in X]
    rows = numpy.repeat(numpy.arange(len(X)), [len(k) for k in keys])
    cols = table.lookup(numpy.concatenate(keys) if keys else numpy.zeros((0,), "uint64"))
    known = cols >= 0
    # tocsr sums the duplicate (row, col) entries of ones: the term counts
    return coo_matrix(
        (numpy.ones(int(known.sum()), dtype="float32"), (rows[known], cols[known])), shape=(len(X), len(table))
    ).tocsr()


def term_keys(model: Model, doc: Doc) -> numpy.ndarray:
    """Hashes of the doc's kept terms, one per token."""
    _, keys, keep = term_array(model, doc)
    return keys[keep]


def term_array(model: Model, doc: Doc, extra: Sequence[int] = ()) -> Tuple[numpy.ndarray, ...]:
    """(arr, keys, keep) of a doc: the array of its term, LOWER, IS_STOP, IS_PUNCT, IS_SPACE and
    `extra` attributes, each token's term hash, and the mask of the tokens the layer keeps."""
    attrs = [TERM_ATTRS[model.attrs["attr"]], LOWER, IS_STOP, IS_PUNCT, IS_SPACE, *extra]
    arr = doc.to_array(attrs).astype("uint64") if len(doc) else numpy.zeros((0, len(attrs)), dtype="uint64")
    keys = arr[:, 0]
    if model.attrs["attr"] == "lemma":
        keys = numpy.where(keys == 0, arr[:, 1], keys)  # no lemmatizer: fall back to lower-case
    keep = arr[:, 4] == 0
    if model.attrs.get("drop_stop"):
        keep &= arr[:, 2] == 0
    if model.attrs["drop_punct"]:
        keep &= arr[:, 3] == 0
    return arr, keys, keep


def document_frequencies(model: Model, docs: Iterable[Doc]) -> Tuple[List[str], numpy.ndarray, int]:
    """The term layer's terms (in hash order) in at least its `min_df` distinct texts of `docs`, their document
    frequencies, and the number of distinct texts."""
    seen = set()
    unique: List[numpy.ndarray] = []
    stores = {}
    for doc in docs:
        if doc.text in seen:
            continue
        seen.add(doc.text)
        stores[id(doc.vocab)] = doc.vocab.strings
        unique.append(numpy.unique(term_keys(model, doc)))
    keys, df = numpy.unique(numpy.concatenate(unique or [numpy.zeros((0,), "uint64")]), return_counts=True)
    keep = df >= model.attrs["min_df"]
    keys, df = keys[keep], df[keep]
    return [_string(stores.values(), int(key)) for key in keys], df, len(seen)


def _string(stores, key: int) -> str:
    for strings in stores:
        if key in strings:
            return strings[key]
    raise KeyError(f"term hash {key} is in no doc's StringStore")
