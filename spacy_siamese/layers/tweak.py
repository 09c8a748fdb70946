from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union, cast

import numpy
import srsly
from spacy.attrs import ENT_IOB, IS_TITLE, IS_UPPER, POS, SENT_START
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc
from thinc.api import Model, registry
from thinc.types import Floats1d, Floats2d

from .hashed_tfidf import hash_columns
from .tfidf import TermTable, check_term_settings, document_frequencies, term_array

PAPER_FEATURES = ("log_tf", "log_df", "capitalized", "log_loc", "rel_loc", "log_len")
POS_TAGS: Tuple[str, ...] = tuple(
    "ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split()
)
FEATURE_GROUPS: Dict[str, Tuple[str, ...]] = {
    "paper": PAPER_FEATURES,
    "stop": ("stop",),
    "pos": tuple(f"pos_{tag}" for tag in POS_TAGS),
    "ent": ("ent",),
    "sent": ("first_sent",),
    "oov": ("oov",),
}
# Initial weights: tw = softplus(bias + log(tf+1) - log(df+1)), with bias = ln(n_docs + 1) once the
# document frequencies are fitted: close to a (log tf + idf) weighting; every other weight is 0.
INIT_WEIGHTS = {"log_tf": 1.0, "log_df": -1.0}
_POS_INDEX = numpy.full(max(int(v) for v in POS_IDS.values()) + 1, -1, dtype="int64")
for _i, _tag in enumerate(POS_TAGS):
    _POS_INDEX[int(POS_IDS[_tag])] = _i
_ATTRS = [IS_TITLE, IS_UPPER, POS, ENT_IOB, SENT_START]  # after term_array's columns 0-4


class DocFrequencies(TermTable):
    """The fitted vocabulary with each term's document frequency (`df`) and the number of distinct docs (`n_docs`)."""

    def __init__(
        self, terms: Sequence[str] = (), df: Union[Sequence[float], numpy.ndarray] = (), n_docs: int = 0
    ) -> None:
        super().__init__(terms, df)
        self.n_docs = int(n_docs)

    @property
    def df(self) -> numpy.ndarray:
        return self.idf

    def to_bytes(self) -> bytes:
        return srsly.msgpack_dumps({"terms": self.terms, "df": self.idf.tolist(), "n_docs": self.n_docs})


class TermFeatures(NamedTuple):
    """The kept terms of a batch of docs, one row per (doc, distinct term), grouped by doc."""

    phi: numpy.ndarray  # (n_rows, n_features) float32
    keys: numpy.ndarray  # (n_rows,) uint64 StringStore hashes of the terms
    doc_ids: numpy.ndarray  # (n_rows,) int64, non-decreasing
    n_docs: int


@registry.layers("spacy-siamese.tweak.v1")
def tweak(
    *,
    width: int = 4096,
    attr: str = "lower",
    features: Sequence[str] = tuple(FEATURE_GROUPS),
    drop_punct: bool = True,
    min_df: int = 2,
    max_vocab: int = 0,
) -> Model[List[Doc], Floats2d]:
    """TWEAK (Yih 2009): term t of doc D weighs softplus(sum_j w_j phi_j(t, D)) over a bias and the `features` groups:
    "paper" (log(tf+1), log(df+1), capitalised, log(loc+1), loc/len, log(len+1)), "stop", "pos" (share of each coarse
    POS), "ent", "sent" (in the first sentence), "oov". Document frequencies are fitted in `initialize`; the weighted
    term vector is signed-hashed into `width` columns, not normalised (pair it with CosineSimilarity.v1)."""
    check_term_settings("tweak", attr=attr, min_df=min_df, max_vocab=max_vocab)
    unknown = [group for group in features if group not in FEATURE_GROUPS]
    if unknown:
        raise ValueError(f"tweak: unknown feature group(s) {unknown}; choose from {', '.join(FEATURE_GROUPS)}")
    if width < 1:
        raise ValueError(f"tweak: need width >= 1, got {width}")
    groups = [group for group in FEATURE_GROUPS if group in features]
    names = ["bias"] + [name for group in groups for name in FEATURE_GROUPS[group]]
    return Model(
        "tweak",
        forward,
        init=init,
        dims={"nO": width, "nF": len(names)},
        params={"w": None},
        attrs={
            "table": DocFrequencies(),
            "attr": attr,
            "groups": groups,
            "feature_names": names,
            "drop_punct": drop_punct,
            "min_df": min_df,
            "max_vocab": max_vocab,
        },
    )


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    if X is not None:  # the document frequencies of the kept terms over the distinct texts of X
        terms, df, n_docs = document_frequencies(model, X)
        if not terms:
            raise ValueError(f"tweak: no term occurs in at least min_df={model.attrs['min_df']} of the {n_docs} docs")
        order = numpy.argsort(-df, kind="stable")[: model.attrs["max_vocab"] or None]
        model.attrs["table"] = DocFrequencies([terms[i] for i in order], df[order].astype("float32"), max(n_docs, 1))
    elif not model.attrs["table"].n_docs:
        raise ValueError("tweak: initialize with training docs to fit the document frequencies")
    w = numpy.asarray([INIT_WEIGHTS.get(name, 0.0) for name in model.attrs["feature_names"]], dtype="float32")
    w[0] = numpy.log(model.attrs["table"].n_docs + 1.0)
    model.set_param("w", model.ops.asarray1f(cast(Floats1d, w)))


def forward(model: Model, X: List[Doc], is_train: bool) -> Tuple[Floats2d, Callable]:
    Y, backprop_terms = weigh(model, term_features(model, X))

    def backprop(dY: Floats2d) -> List[Doc]:
        backprop_terms(dY)
        return X

    return Y, backprop


def weigh(model: Model, terms: TermFeatures) -> Tuple[Floats2d, Callable[[Floats2d], None]]:
    """The hashed weighted term vectors of precomputed term features, and their backprop to w."""
    w = model.ops.to_numpy(model.get_param("w"))
    if terms.phi.shape[1] != len(w):
        raise ValueError(f"tweak: got {terms.phi.shape[1]} features per term, the model has {len(w)}")
    z, tw = term_weights(terms, w)
    cols, signs = hash_columns(terms.keys, model.get_dim("nO"))
    Y = numpy.zeros((terms.n_docs, model.get_dim("nO")), dtype="float32")
    numpy.add.at(Y, (terms.doc_ids, cols), signs * tw)

    def backprop(dY: Floats2d) -> None:
        d_tw = model.ops.to_numpy(dY)[terms.doc_ids, cols] * signs
        d_z = d_tw * sigmoid(z)
        d_w = (terms.phi.T.astype("f8") @ d_z).astype("float32")
        model.inc_grad("w", model.ops.asarray1f(cast(Floats1d, d_w)))

    return model.ops.asarray2f(cast(Floats2d, Y)), backprop


def term_weights(terms: TermFeatures, w: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(z, tw): the linear scores phi @ w and the weights softplus(z), as float64."""
    z = terms.phi.astype("f8") @ numpy.asarray(w, dtype="f8")
    return z, numpy.logaddexp(0.0, z)


def term_features(model: Model, docs: Sequence[Doc]) -> TermFeatures:
    """The features of every (doc, distinct kept term) of a batch."""
    table = model.attrs["table"]
    if not table.n_docs:
        raise ValueError("tweak: the document frequencies are not fitted; initialize the model on training docs first")
    parts = [_token_rows(model, doc, i) for i, doc in enumerate(docs)]
    n_features = len(model.attrs["feature_names"])
    if not parts or not sum(len(p["key"]) for p in parts):
        empty = numpy.zeros((0,), dtype="int64")
        return TermFeatures(numpy.zeros((0, n_features), "float32"), empty.astype("uint64"), empty, len(docs))
    tok = {name: numpy.concatenate([p[name] for p in parts]) for name in parts[0]}
    order = numpy.lexsort((tok["loc"], tok["key"], tok["doc"]))
    tok = {name: values[order] for name, values in tok.items()}
    new = numpy.ones(len(order), dtype=bool)
    new[1:] = (tok["doc"][1:] != tok["doc"][:-1]) | (tok["key"][1:] != tok["key"][:-1])
    group = numpy.cumsum(new) - 1
    first = numpy.flatnonzero(new)  # the first occurrence of each term: rows are sorted by loc
    n_rows = len(first)
    tf = numpy.bincount(group, minlength=n_rows).astype("f8")
    keys = tok["key"][first]
    cols = table.lookup(keys)
    df = numpy.where(cols >= 0, table.df[numpy.maximum(cols, 0)], 0.0)
    loc, length = tok["loc"][first].astype("f8"), tok["len"][first].astype("f8")
    feats: Dict[str, numpy.ndarray] = {
        "bias": numpy.ones(n_rows),
        "log_tf": numpy.log1p(tf),
        "log_df": numpy.log1p(df),
        "capitalized": numpy.bincount(group, weights=tok["cap"], minlength=n_rows) > 0,
        "log_loc": numpy.log1p(loc),
        "rel_loc": loc / length,
        "log_len": numpy.log1p(length),
        "stop": tok["stop"][first],
        "ent": numpy.bincount(group, weights=tok["ent"], minlength=n_rows) > 0,
        "first_sent": tok["first_sent"][first],
        "oov": cols < 0,
    }
    if "pos" in model.attrs["groups"]:
        tagged = tok["pos"] >= 0
        counts = numpy.zeros((n_rows, len(POS_TAGS)))
        numpy.add.at(counts, (group[tagged], tok["pos"][tagged]), 1.0)
        for j, tag in enumerate(POS_TAGS):
            feats[f"pos_{tag}"] = counts[:, j] / tf
    phi = numpy.stack([numpy.asarray(feats[name], dtype="f8") for name in model.attrs["feature_names"]], axis=1)
    return TermFeatures(phi.astype("float32"), keys, tok["doc"][first], len(docs))


def _token_rows(model: Model, doc: Doc, doc_id: int) -> Dict[str, numpy.ndarray]:
    """The doc's kept tokens: term key, position among the kept tokens and token flags."""
    arr, keys, keep = term_array(model, doc, _ATTRS)
    n_tokens = len(doc)
    first_sent_end = n_tokens
    if n_tokens and doc.has_annotation("SENT_START"):
        starts = numpy.flatnonzero(arr[1:, 9].astype("int64") == 1)
        first_sent_end = int(starts[0]) + 1 if len(starts) else n_tokens
    pos = _POS_INDEX[numpy.minimum(arr[:, 7].astype("int64"), len(_POS_INDEX) - 1)]
    kept = numpy.flatnonzero(keep)
    n = len(kept)
    return {
        "key": keys[kept],
        "doc": numpy.full(n, doc_id, dtype="int64"),
        "loc": numpy.arange(n, dtype="int64"),
        "len": numpy.full(n, n, dtype="int64"),
        "cap": ((arr[kept, 5] | arr[kept, 6]) > 0).astype("f8"),
        "stop": (arr[kept, 2] > 0).astype("f8"),
        "pos": pos[kept],
        "ent": numpy.isin(arr[kept, 8], (1, 3)).astype("f8"),  # I or B of an entity
        "first_sent": (kept < first_sent_end).astype("f8"),
    }


def sigmoid(z: numpy.ndarray) -> numpy.ndarray:
    """The derivative of softplus."""
    return numpy.exp(-numpy.logaddexp(0.0, -z))


def feature_weights(model: Model) -> Dict[str, float]:
    """The learned weight of each feature, by name."""
    w: Floats1d = model.ops.to_numpy(model.get_param("w"))
    return {name: float(value) for name, value in zip(model.attrs["feature_names"], w)}
