"""Pair losses. Each returns (d_scores, loss) for scores of shape (n, 1)."""

from typing import Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d


class PairLogLoss:
    """Binary cross-entropy on similarity scores in [0, 1] (0/1 labels), summed over the score
    columns (one per head, see WithAuxiliary.v1). `label_smoothing` moves the targets from
    0 and 1 to ls / 2 and 1 - ls / 2. With `distill` > 0 and two heads, the first (main) head's
    target mixes in the second head's score, held constant: (1 - distill) * label + distill * p_aux
    (online distillation)."""

    def __init__(self, eps: float = 1e-5, label_smoothing: float = 0.0, distill: float = 0.0):
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"LogLoss: label_smoothing must be in [0, 1), got {label_smoothing}")
        if not 0.0 <= distill <= 1.0:
            raise ValueError(f"LogLoss: distill must be in [0, 1], got {distill}")
        self.eps = eps
        self.label_smoothing = label_smoothing
        self.distill = distill

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        p = xp.clip(scores, self.eps, 1.0 - self.eps)
        y = xp.asarray(truths, dtype=p.dtype)[:, None] * xp.ones_like(p)
        y = y * (1.0 - self.label_smoothing) + self.label_smoothing / 2
        if self.distill > 0 and p.shape[1] > 1:
            y[:, 0] = (1.0 - self.distill) * y[:, 0] + self.distill * p[:, 1]
        n = max(len(y), 1)
        loss = -(y * xp.log(p) + (1 - y) * xp.log(1 - p)).sum() / n
        d = (p - y) / (p * (1 - p)) / n
        return d.astype(scores.dtype), float(loss)


class PairSquaredError:
    """Mean squared error against graded labels in [0, 1], summed over the score columns."""

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        y = get_array_module(scores).asarray(truths, dtype=scores.dtype)[:, None]
        diff = scores - y
        n = max(len(y), 1)
        return (2 * diff / n).astype(scores.dtype), float((diff * diff).sum() / n)


@registry.losses("spacy-siamese.LogLoss.v2")
def make_log_loss(*, eps: float = 1e-5, label_smoothing: float = 0.0, distill: float = 0.0) -> PairLogLoss:
    """Binary cross-entropy on the pair scores, with optional label smoothing and distillation."""
    return PairLogLoss(eps=eps, label_smoothing=label_smoothing, distill=distill)


@registry.losses("spacy-siamese.LogLoss.v1")
def make_log_loss_v1(*, eps: float = 1e-5, label_smoothing: float = 0.0, distill: float = 0.0) -> PairLogLoss:
    """The same loss as LogLoss.v2: kept for pipelines trained with it."""
    return PairLogLoss(eps=eps, label_smoothing=label_smoothing, distill=distill)


@registry.losses("spacy-siamese.SquaredError.v1")
def make_squared_error() -> PairSquaredError:
    """Mean squared error against graded labels in [0, 1]."""
    return PairSquaredError()


class PairwiseLogisticLoss:
    """Pairwise logistic (RankNet-style) loss of S2Net: for every two pairs i, j in the
    batch with label_i > label_j, delta = score_i - score_j and the loss is
    log(1 + exp(-gamma * delta)), averaged over those (i, j). 0 when no such (i, j)."""

    def __init__(self, gamma: float = 10.0):
        self.gamma = gamma

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        if scores.shape[1] != 1:
            raise ValueError(
                f"PairwiseLogisticLoss takes one score column, got {scores.shape[1]} "
                "(an auxiliary head needs LogLoss.v2 or SquaredError.v1)"
            )
        xp = get_array_module(scores)
        s = xp.asarray(scores[:, 0], dtype="float64")
        y = xp.asarray(truths, dtype="float64")
        ordered = y[:, None] > y[None, :]  # (i, j): pair i should score above pair j
        m = int(ordered.sum())
        if m == 0:
            return xp.zeros_like(scores), 0.0
        z = -self.gamma * (s[:, None] - s[None, :])
        loss = float(xp.logaddexp(0.0, z)[ordered].sum() / m)
        # d/d delta of log(1 + exp(-gamma delta)) = -gamma * sigmoid(z)
        g = xp.where(ordered, -self.gamma / (1.0 + xp.exp(-z)), 0.0) / m
        d = g.sum(axis=1) - g.sum(axis=0)
        return d[:, None].astype(scores.dtype), loss


@registry.losses("spacy-siamese.PairwiseLogisticLoss.v1")
def make_pairwise_logistic_loss(*, gamma: float = 10.0) -> PairwiseLogisticLoss:
    """S2Net's pairwise logistic loss over the pairs of a batch with different labels."""
    return PairwiseLogisticLoss(gamma=gamma)
