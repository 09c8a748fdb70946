"""The vector space an index searches for a pipe's comparison, and what is exact in it.

- Cauchy, `1 / (1 + sum_i w_i (a_i - b_i)^2)`, decreases with the L2 distance between the
  vectors scaled by sqrt(w): search L2 in the scaled space. Exact (up to the re-score).
- Cosine (rescaled or not) increases with the inner product of the L2-normalised vectors:
  search inner product in the normalised space. Exact (up to the re-score).
- exp(-scale * ||a - b||) decreases with the L2 (norm "l2") or L1 (norm "l1") distance of the
  vectors: search that metric. Exact (up to the re-score).
- Any other comparison (the feature head, a custom one) is not a function of a metric: the
  candidates come from plain L2 distance between the learned vectors, and only the re-score
  with the comparison is exact.

`WithAuxiliary`, `TrainCalibrated` and `WithInBatchScores` are looked through to the head that
predicts.
"""

from dataclasses import dataclass
from typing import Optional

import numpy
from thinc.api import Model

CAUCHY = "cauchy"
COSINE = "cosine"
EXP_L1 = "exp_l1"
EXP_L2 = "exp_l2"
OTHER = "other"


def predicting_head(comparison: Model) -> Model:
    """The comparison that scores at prediction, through WithAuxiliary/TrainCalibrated."""
    while True:
        if comparison.name == "with_auxiliary":
            comparison = comparison.get_ref("main")
        elif comparison.name == "train_calibrated":
            comparison = comparison.layers[0]
        elif comparison.name == "with_in_batch_scores":
            comparison = comparison.get_ref("comparison")
        else:
            return comparison


@dataclass
class VectorSpace:
    """How to map learned vectors to a space where a faster metric ranks like the comparison."""

    kind: str
    scale: Optional[numpy.ndarray] = None  # sqrt(w) for Cauchy

    @property
    def metric(self) -> str:
        """'l2' or 'l1' (smaller is better) or 'ip' (larger is better)."""
        return "ip" if self.kind == COSINE else "l1" if self.kind == EXP_L1 else "l2"

    @property
    def exact(self) -> bool:
        """Whether ranking in this space is ranking by the comparison."""
        return self.kind != OTHER

    def transform(self, vectors: numpy.ndarray) -> numpy.ndarray:
        vectors = numpy.asarray(vectors, dtype="float32")
        if self.kind == CAUCHY:
            return vectors * self.scale
        if self.kind == COSINE:
            norms = numpy.linalg.norm(vectors, axis=1, keepdims=True)
            return vectors / numpy.where(norms > 0, norms, 1.0)
        return vectors


def vector_space(comparison: Model) -> VectorSpace:
    """The search space of a pipe's comparison (see the module docstring)."""
    head = predicting_head(comparison)
    if head.name == "cauchy_similarity":
        v = numpy.asarray(head.ops.to_numpy(head.get_param("v")), dtype="float64")
        w = numpy.logaddexp(0.0, v)  # softplus, as in the layer
        return VectorSpace(CAUCHY, numpy.sqrt(w).astype("float32"))
    if head.name == "cosine_similarity":
        return VectorSpace(COSINE)
    if head.name == "exp_l1_similarity":
        return VectorSpace(EXP_L1 if head.attrs.get("norm") == "l1" else EXP_L2)
    return VectorSpace(OTHER)
