"""Explain a cosine model's scores: TWEAK's learned feature weights, and the terms that make up
`sim(a, b)` for TWEAK and S2Net, where the cosine is a sum over terms."""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import numpy
from scipy.sparse import csr_matrix
from spacy.language import Language
from spacy.tokens import Doc
from thinc.api import Model

from .component import get_similarity_pipe
from .layers.hashed_tfidf import hash_columns
from .layers.heads import predicting_head
from .layers.tweak import feature_weights, term_features, term_weights

KINDS = ("tweak", "s2net")


@dataclass
class PairExplanation:
    """`score == offset + sum(contributions) + rest` (up to float32 rounding): the pipe's similarity
    of a and b as a sum over terms. `rest` is what no single term explains (TWEAK: products of
    different terms hashed into one column, usually 0; S2Net: 0)."""

    kind: str
    score: float
    contributions: List[Tuple[str, float]] = field(default_factory=list)
    rest: float = 0.0
    offset: float = 0.0

    def top(self, n: int = 10) -> List[Tuple[str, float]]:
        """The n terms with the largest absolute contribution."""
        return sorted(self.contributions, key=lambda item: -abs(item[1]))[:n]

    def to_dict(self, n: Optional[int] = None) -> Dict[str, Any]:
        terms = self.top(n) if n else self.contributions
        return {
            "kind": self.kind,
            "score": self.score,
            "offset": self.offset,
            "rest": self.rest,
            "terms": [{"term": t, "contribution": c} for t, c in terms],
        }


def model_kind(pipe: Any) -> str:
    """The kind of encoder ("tweak" or "s2net") of a pipe this module can explain; else a ValueError."""
    encoder = pipe.encoder
    comparison = predicting_head(pipe.comparison)
    if comparison.name != "cosine_similarity":
        raise ValueError(f"explain: needs a CosineSimilarity comparison, the pipe has {comparison.name!r}")
    if encoder.name == "tweak":
        return "tweak"
    if [layer.name for layer in encoder.layers] == ["tfidf", "projection"]:
        return "s2net"
    raise ValueError(f"explain: supports the TWEAK and S2Net encoders, not {encoder.name!r}")


def tweak_weights(nlp: Language, name: Optional[str] = None) -> Dict[str, float]:
    """The learned TWEAK feature weights of the pipeline's similarity pipe, by feature name."""
    pipe = _pipe(nlp, name)
    if model_kind(pipe) != "tweak":
        raise ValueError("explain: feature weights exist only for a TWEAK encoder")
    return feature_weights(pipe.encoder)


def explain_pair(nlp: Language, text_a: str, text_b: str, name: Optional[str] = None) -> PairExplanation:
    """`text_a.similarity(text_b)` under the pipeline, as a sum of per-term contributions.

    TWEAK: term t shared by a and b adds tw(t, a) tw(t, b) / (|a| |b|), with |a| the norm of a's
    (hashed) doc vector; `rest` holds the products of different terms hashed into one column.
    S2Net: with v = A^T f, term t adds (f_a[t] A_t . v_b + f_b[t] A_t . v_a) / (2 |v_a| |v_b|),
    the mean of the two exact one-sided sums, so a term found on one side only can count too.
    Both decompositions are exact: they sum to the pipe's cosine up to float rounding.
    """
    pipe = _pipe(nlp, name)
    kind = model_kind(pipe)
    doc_a, doc_b = nlp(text_a), nlp(text_b)
    score = float(doc_a.similarity(doc_b))
    if kind == "tweak":
        terms, cos = _tweak_terms(pipe.encoder, doc_a, doc_b)
    else:
        terms, cos = _s2net_terms(pipe.encoder, doc_a, doc_b)
    offset, scale = (0.5, 0.5) if predicting_head(pipe.comparison).attrs.get("rescale") else (0.0, 1.0)
    contributions = [(term, scale * value) for term, value in terms]
    rest = scale * cos - sum(value for _, value in contributions)
    return PairExplanation(kind, score, contributions, float(rest), offset)


def _tweak_terms(encoder: Model, doc_a: Doc, doc_b: Doc) -> Tuple[List[Tuple[str, float]], float]:
    terms = term_features(encoder, [doc_a, doc_b])
    _, tw = term_weights(terms, encoder.ops.to_numpy(encoder.get_param("w")))
    cols, signs = hash_columns(terms.keys, encoder.get_dim("nO"))
    Y = numpy.zeros((2, encoder.get_dim("nO")))
    numpy.add.at(Y, (terms.doc_ids, cols), signs * tw)
    norms = numpy.linalg.norm(Y, axis=1)
    if not (norms > 0).all():
        return [], 0.0
    side = {key: weight for key, weight, i in zip(terms.keys, tw, terms.doc_ids) if i == 1}
    out = [
        (doc_a.vocab.strings[int(key)], float(weight * side[key] / (norms[0] * norms[1])))
        for key, weight, i in zip(terms.keys, tw, terms.doc_ids)
        if i == 0 and key in side
    ]
    return out, float(Y[0] @ Y[1] / (norms[0] * norms[1]))


def _s2net_terms(encoder: Model, doc_a: Doc, doc_b: Doc) -> Tuple[List[Tuple[str, float]], float]:
    tfidf, projection = encoder.layers
    F = csr_matrix(tfidf.predict([doc_a, doc_b]), dtype="f8")
    A = numpy.asarray(projection.ops.to_numpy(projection.get_param("W")), dtype="f8")
    V = numpy.asarray(F @ A)
    norms = numpy.linalg.norm(V, axis=1)
    if not (norms > 0).all():
        return [], 0.0
    fa, fb = F[0].toarray()[0], F[1].toarray()[0]
    used = numpy.flatnonzero((fa != 0) | (fb != 0))
    values = (fa[used] * (A[used] @ V[1]) + fb[used] * (A[used] @ V[0])) / (2 * norms[0] * norms[1])
    terms = tfidf.attrs["table"].terms
    return [(terms[i], float(v)) for i, v in zip(used, values)], float(V[0] @ V[1] / (norms[0] * norms[1]))


def _pipe(nlp: Language, name: Optional[str]) -> Any:
    return get_similarity_pipe(nlp) if name is None else get_similarity_pipe(nlp, name)
