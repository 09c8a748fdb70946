from functools import partial
from typing import Callable, Optional, Sequence, Tuple

import numpy
from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d

from ._util import Loss, check_truths, in_batch_columns, known_duplicates
from .log_loss import PairLogLoss

LOGITS = ("scaled", "logit")


@registry.losses("spacy-siamese.InBatchNegatives.v1")
class InBatchNegativesLoss:
    """Multiple-negatives ranking loss plus a pair loss, to train for retrieval. Wrap the
    comparison in WithInBatchScores.v1 and batch with batch_by_clusters.v1.

    Scores (n, k + n): k pair columns (for `pair_loss`, default LogLoss.v2), then
    M[i, j] = score(A_i, B_j); P = the pairs with label >= 0.5. With Z = scale * M ("scaled") or
    scale * logit(M) ("logit"), loss = pair_loss + weight * rank, where
    rank = -1/(2|P|) * sum_i in P [log softmax(Z[i, :])_i + log softmax(Z[:, i])_i].
    A known duplicate of the query (`for_texts`) is left out of the softmax."""

    uses_in_batch_scores = True  # takes WithInBatchScores.v1's in-batch columns (DatasetLosses.v1)

    def __init__(
        self,
        pair_loss: Optional[Callable] = None,
        *,
        scale: float = 20.0,
        logits: str = "scaled",
        weight: float = 1.0,
        eps: float = 1e-6,
    ) -> None:
        if logits not in LOGITS:
            raise ValueError(f"InBatchNegatives: logits must be one of {', '.join(LOGITS)}, got {logits!r}")
        if scale <= 0 or weight < 0:
            raise ValueError(f"InBatchNegatives: need scale > 0 and weight >= 0, got {scale} and {weight}")
        if not 0.0 < eps < 0.5:
            raise ValueError(f"InBatchNegatives: eps must be in (0, 0.5), got {eps}")
        self.pair_loss = pair_loss if pair_loss is not None else PairLogLoss()
        self.scale = scale
        self.logits = logits
        self.weight = weight
        self.eps = eps

    def __call__(
        self, scores: Floats2d, truths: Floats1d, texts: Optional[Tuple[Sequence[str], Sequence[str]]] = None
    ) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        positive = check_truths(truths, len(scores), "InBatchNegatives") >= 0.5
        pair_scores, M = in_batch_columns(scores, len(truths), "InBatchNegatives")
        d_pair, loss = self.pair_loss(pair_scores, truths)
        known = xp.asarray(known_duplicates(*texts, positive)) if texts is not None else None
        Z, dZ_dM = self.to_logits(M)
        dZ, rank_loss = ranking_loss(Z, positive, known)
        d = xp.hstack([xp.asarray(d_pair, dtype="float64"), self.weight * dZ * dZ_dM])
        return d.astype(scores.dtype), float(loss) + self.weight * rank_loss

    def for_texts(self, texts_a: Sequence[str], texts_b: Sequence[str]) -> Loss:
        """The loss of a batch whose pairs have these texts: known duplicates are no negatives."""
        return partial(self, texts=(texts_a, texts_b))

    def to_logits(self, M: Floats2d) -> Tuple[Floats2d, Floats2d]:
        """Z = scale * M or scale * logit(M) (M clipped to [eps, 1 - eps]), and dZ / dM elementwise."""
        xp = get_array_module(M)
        M = xp.asarray(M, dtype="float64")
        if self.logits == "scaled":
            return self.scale * M, xp.full_like(M, self.scale)
        s = xp.clip(M, self.eps, 1.0 - self.eps)
        inside = (M > self.eps) & (M < 1.0 - self.eps)
        return self.scale * (xp.log(s) - xp.log1p(-s)), self.scale * inside / (s * (1.0 - s))


def ranking_loss(Z: Floats2d, positive: numpy.ndarray, known: Optional[numpy.ndarray] = None) -> Tuple[Floats2d, float]:
    """Symmetric softmax cross-entropy with targets on the diagonal, over the rows and the
    columns of the positive pairs, averaged over 2 * n_positive; (dZ, loss). `known` (n, n):
    off-diagonal entries that are positives too, left out of both softmaxes."""
    xp = get_array_module(Z)
    m = int(positive.sum())
    if m == 0:
        return xp.zeros_like(Z), 0.0
    if known is not None:
        Z = xp.where(known & ~xp.eye(len(Z), dtype=bool), -xp.inf, Z)
    eye = xp.eye(len(Z), dtype=Z.dtype)
    log_rows = Z - xp.logaddexp.reduce(Z, axis=1, keepdims=True)
    log_cols = Z - xp.logaddexp.reduce(Z, axis=0, keepdims=True)
    loss = -(xp.diagonal(log_rows)[positive].sum() + xp.diagonal(log_cols)[positive].sum()) / (2 * m)
    d_rows = (xp.exp(log_rows) - eye) * positive[:, None]
    d_cols = (xp.exp(log_cols) - eye) * positive[None, :]
    return (d_rows + d_cols) / (2 * m), float(loss)


make_in_batch_negatives = InBatchNegativesLoss  # the builder of the registered name
