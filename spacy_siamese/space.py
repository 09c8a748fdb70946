"""The vector space an index searches for a pipe's comparison, and what is exact in it.

Cauchy ranks like L2 between vectors scaled by sqrt(w), cosine like the inner product of normalised
vectors, exp(-scale * ||a - b||) like L2 or L1: all exact. Any other comparison (the feature head, a
custom one) gets candidates by plain L2. A hybrid over Cauchy or cosine is scored with matrix products
(`scores`); its ivf / hnsw space is the mapped learned part beside the lexical part, searched by L2.
Wrappers (`WithAuxiliary`, `TrainCalibrated`, `WithInBatchScores`) are looked through to the head."""

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy
from thinc.api import Model

from .layers.heads import predicting_head
from .layers.hybrid import is_hybrid_similarity

CAUCHY = "cauchy"
COSINE = "cosine"
EXP_L1 = "exp_l1"
EXP_L2 = "exp_l2"
HYBRID = "hybrid"
OTHER = "other"


@dataclass
class VectorSpace:
    """How to map learned vectors to a space where a faster metric ranks like the comparison."""

    kind: str
    scale: Optional[numpy.ndarray] = None  # sqrt(w) for Cauchy
    inner: Optional["VectorSpace"] = None  # hybrid: the space of the learned part
    weight: float = 0.0  # hybrid: the weight of the lexical part
    lexical_width: int = 0  # hybrid: the number of lexical columns (the last ones)
    rescale: bool = False  # cosine: (1 + cos) / 2
    exp_scale: float = 1.0  # exp(-scale * ||a - b||)

    @property
    def metric(self) -> str:
        """'l2' or 'l1' (smaller is better) or 'ip' (larger is better)."""
        return "ip" if self.kind == COSINE else "l1" if self.kind == EXP_L1 else "l2"

    @property
    def exact(self) -> bool:
        """Whether ranking in this space is ranking by the comparison."""
        return self.kind not in (HYBRID, OTHER)

    @property
    def matrix_scored(self) -> bool:
        """Whether `scores` computes the comparison: Cauchy, cosine and exp(-scale * L2), alone or in a hybrid."""
        space = self.inner if self.kind == HYBRID else self
        return space is not None and space.kind in (CAUCHY, COSINE, EXP_L2)

    @property
    def scores_exactly(self) -> bool:
        """Whether `scores` computes a hybrid comparison (which no fast metric ranks exactly)."""
        return self.kind == HYBRID and self.matrix_scored

    def transform(self, vectors: numpy.ndarray) -> numpy.ndarray:
        vectors = numpy.asarray(vectors, dtype="float32")
        if self.kind == CAUCHY:
            return vectors * self.scale
        if self.kind == COSINE:
            # Norms in float64 (in float32 the squares overflow from about 1e19 and vanish below
            # about 1e-19), computed and applied without a float64 copy of the vectors.
            norms = numpy.sqrt(numpy.einsum("ij,ij->i", vectors, vectors, dtype="float64"))[:, None]
            out = numpy.empty_like(vectors)
            return numpy.divide(vectors, numpy.where(norms > 0, norms, 1.0), out=out, casting="unsafe")
        if self.kind == HYBRID and self.inner is not None:
            learned, lexical = self.split(vectors)
            # Cauchy: 1 / (1 + d^2) falls by about d^2 / 4 near d^2 = 1, the lexical part by
            # weight * (1 - a.b) = weight * |a - b|^2 / 2; cosine: |a - b|^2 = 2 - 2 a.b exactly.
            factor = 0.5 if self.inner.kind == CAUCHY else numpy.sqrt(0.5) if self.inner.rescale else 1.0
            learned = self.inner.transform(learned) * factor * numpy.sqrt(1.0 - self.weight)
            return numpy.hstack([learned, lexical * numpy.sqrt(self.weight)]).astype("float32")
        return vectors

    def metric_learned(self, learned: numpy.ndarray) -> numpy.ndarray:
        """Learned columns (without a hybrid's lexical ones, as a vector store keeps them) mapped to the space
        where L2 distance bounds the score (`score_bound`): for a hybrid, the inner comparison's space."""
        if self.kind == HYBRID and self.inner is not None:
            return self.inner.transform(learned)
        return self.transform(learned)

    def score_bound(self, d2: numpy.ndarray) -> Optional[numpy.ndarray]:
        """An upper bound of the score of two items whose `metric_learned` vectors are at least
        sqrt(d2) apart in L2 (a hybrid's lexical part at its maximum, 1); None without one."""
        space = self.inner if self.kind == HYBRID and self.inner is not None else self
        d2 = numpy.maximum(numpy.asarray(d2, dtype="float64"), 0.0)
        if space.kind == CAUCHY:
            bound = 1.0 / (1.0 + d2)
        elif space.kind == COSINE:
            bound = space.rescaled(1.0 - d2 / 2.0)
        elif space.kind in (EXP_L1, EXP_L2):
            bound = numpy.exp(-space.exp_scale * numpy.sqrt(d2))
        else:
            return None
        if self.kind == HYBRID:
            bound = (1.0 - self.weight) * bound + self.weight
        return bound

    def bound_radius(self, threshold: float) -> Optional[float]:
        """The largest squared distance whose `score_bound` still reaches `threshold` (items farther apart
        cannot score that high); None without a bound, inf when every distance can."""
        space = self.inner if self.kind == HYBRID and self.inner is not None else self
        t = float(threshold)
        if self.kind == HYBRID:
            t = (t - self.weight) / (1.0 - self.weight) if self.weight < 1.0 else -numpy.inf
        if space.kind == OTHER:
            return None
        if space.kind == CAUCHY:  # a threshold above 1: no distance, not even 0, reaches it
            return max(0.0, float(1.0 / t - 1.0)) if t > 0 else numpy.inf
        if space.kind == COSINE:
            return max(0.0, float(4.0 * (1.0 - t) if space.rescale else 2.0 * (1.0 - t)))
        if t <= 0:
            return numpy.inf
        return float((numpy.log(1.0 / t) / space.exp_scale) ** 2) if t < 1 else 0.0

    def split(self, vectors: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """A hybrid space's (learned, lexical) columns."""
        width = vectors.shape[1] - self.lexical_width
        return vectors[:, :width], vectors[:, width:]

    def scores(self, queries: numpy.ndarray, items: numpy.ndarray) -> numpy.ndarray:
        """(n_queries, n_items) scores from matrix products (in float64), for `matrix_scored` spaces."""
        if self.kind != HYBRID:
            return self._learned_scores(*(self.transform(v).astype("float64") for v in (queries, items)))
        return self.mix(*self.score_parts(queries, items))

    def mix(self, learned: numpy.ndarray, lexical: numpy.ndarray, weight: Optional[float] = None) -> numpy.ndarray:
        """Hybrid scores from the two parts of `score_parts`, at the space's weight or at `weight`."""
        weight = self.weight if weight is None else weight
        return (1.0 - weight) * learned + weight * lexical

    def score_parts(self, queries: numpy.ndarray, items: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The learned and the lexical (n_queries, n_items) scores that `scores` mixes."""
        inner, q, q_lex, x, x_lex = self._part_vectors(queries, items)
        used = numpy.flatnonzero(q_lex.any(axis=0))  # sparse lexical vectors: other columns add exact zeros
        return inner._learned_scores(q, x), numpy.clip(q_lex[:, used] @ x_lex[:, used].T, 0.0, 1.0)

    def _learned_scores(self, q: numpy.ndarray, x: numpy.ndarray, *, paired: bool = False) -> numpy.ndarray:
        """This (not hybrid) space's scores of `transform`ed vectors, every q with every x (`paired`:
        each row with the same row): from the inner products (cosine), or from the squared distances,
        |q|^2 + |x|^2 - 2 q.x (Cauchy, exp(-L2))."""
        if self.kind == COSINE:
            return self.rescaled((q * x).sum(axis=1) if paired else q @ x.T)
        if paired:
            d2 = ((q - x) ** 2).sum(axis=1)
        else:
            d2 = numpy.maximum((q * q).sum(axis=1)[:, None] + (x * x).sum(axis=1)[None, :] - 2.0 * (q @ x.T), 0.0)
        return 1.0 / (1.0 + d2) if self.kind == CAUCHY else numpy.exp(-self.exp_scale * numpy.sqrt(d2))

    def paired_score_parts(self, a: numpy.ndarray, b: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The learned and the lexical score of each row of `a` with the same row of `b` (the
        diagonals of `score_parts(a, b)`)."""
        if len(a) != len(b):
            raise ValueError(f"Paired scores need as many rows on each side, got {len(a)} and {len(b)}")
        inner, q, q_lex, x, x_lex = self._part_vectors(a, b)
        return inner._learned_scores(q, x, paired=True), numpy.clip((q_lex * x_lex).sum(axis=1), 0.0, 1.0)

    def rescaled(self, scores: numpy.ndarray) -> numpy.ndarray:
        """Cosines mapped to [0, 1] by a rescaled cosine space; other scores as they are."""
        return (1.0 + scores) / 2.0 if self.kind == COSINE and self.rescale else scores

    def _part_vectors(
        self, a: numpy.ndarray, b: numpy.ndarray
    ) -> Tuple["VectorSpace", numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """The inner space, the learned parts of `a` and `b` in it (float64, for the distances' sums)
        and their lexical parts (float32, as the comparison takes them)."""
        if not self.scores_exactly or self.inner is None:
            raise ValueError(f"A {self.kind} space has no matrix scores")
        (q, q_lex), (x, x_lex) = self.split(a), self.split(b)
        q, x = (self.inner.transform(v).astype("float64") for v in (q, x))
        return self.inner, q, q_lex.astype("float32"), x, x_lex.astype("float32")


def vector_space(comparison: Model) -> VectorSpace:
    """The search space of a pipe's comparison (see the module docstring)."""
    head = predicting_head(comparison)
    if is_hybrid_similarity(head):
        return VectorSpace(
            HYBRID,
            inner=vector_space(head.get_ref("comparison")),
            weight=float(head.attrs["weight"]),
            lexical_width=int(head.attrs["lexical_width"]),
        )
    if head.name == "cauchy_similarity":
        v = numpy.asarray(head.ops.to_numpy(head.get_param("v")), dtype="float64")
        w = numpy.logaddexp(0.0, v)  # softplus, as in the layer
        return VectorSpace(CAUCHY, numpy.sqrt(w).astype("float32"))
    if head.name == "cosine_similarity":
        return VectorSpace(COSINE, rescale=bool(head.attrs.get("rescale", False)))
    if head.name == "exp_l1_similarity":
        kind = EXP_L1 if head.attrs.get("norm") == "l1" else EXP_L2
        return VectorSpace(kind, exp_scale=float(head.attrs.get("scale", 1.0)))
    return VectorSpace(OTHER)
