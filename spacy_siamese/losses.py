"""Pair losses. Each returns (d_scores, loss) for scores of shape (n, 1)."""
from typing import Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d


class PairLogLoss:
    """Binary cross-entropy on similarity scores in [0, 1] (0/1 labels)."""

    def __init__(self, eps: float = 1e-5):
        self.eps = eps

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        p = xp.clip(scores[:, 0], self.eps, 1.0 - self.eps)
        y = xp.asarray(truths, dtype=p.dtype)
        n = max(len(y), 1)
        loss = -(y * xp.log(p) + (1 - y) * xp.log(1 - p)).sum() / n
        d = (p - y) / (p * (1 - p)) / n
        return d[:, None].astype(scores.dtype), float(loss)


class PairSquaredError:
    """Mean squared error against graded labels in [0, 1]."""

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        y = get_array_module(scores).asarray(truths, dtype=scores.dtype)
        diff = scores[:, 0] - y
        n = max(len(y), 1)
        return (2 * diff / n)[:, None].astype(scores.dtype), float((diff * diff).sum() / n)


@registry.losses("spacy-siamese.LogLoss.v1")
def make_log_loss(eps: float = 1e-5) -> PairLogLoss:
    return PairLogLoss(eps=eps)


@registry.losses("spacy-siamese.SquaredError.v1")
def make_squared_error() -> PairSquaredError:
    return PairSquaredError()
