from typing import Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d

from ._util import check_truths


@registry.losses("spacy-siamese.LogLoss.v2")
class PairLogLoss:
    """Binary cross-entropy on scores in [0, 1] (n, k heads), summed over the heads; the pipe's
    default loss. Labels in [0, 1] (in between: soft targets). With p = clip(s, eps, 1 - eps):

        t = y * (1 - label_smoothing) + label_smoothing / 2
        t[:, 0] = (1 - distill) * t[:, 0] + distill * p[:, 1]    (k > 1; p[:, 1] held constant)
        loss = -1/n * sum_ic [t log p + (1 - t) log(1 - p)]
    """

    def __init__(self, eps: float = 1e-5, label_smoothing: float = 0.0, distill: float = 0.0) -> None:
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"LogLoss: label_smoothing must be in [0, 1), got {label_smoothing}")
        if not 0.0 <= distill <= 1.0:
            raise ValueError(f"LogLoss: distill must be in [0, 1], got {distill}")
        if not 0.0 < eps < 0.5:
            raise ValueError(f"LogLoss: eps must be in (0, 0.5), got {eps}")
        self.eps = eps
        self.label_smoothing = label_smoothing
        self.distill = distill

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        p = xp.clip(scores, self.eps, 1.0 - self.eps)
        y = check_truths(truths, len(p), "LogLoss").astype(p.dtype)[:, None] * xp.ones_like(p)
        y = y * (1.0 - self.label_smoothing) + self.label_smoothing / 2
        if self.distill > 0 and p.shape[1] > 1:
            y[:, 0] = (1.0 - self.distill) * y[:, 0] + self.distill * p[:, 1]
        n = max(len(y), 1)
        loss = -(y * xp.log(p) + (1 - y) * xp.log(1 - p)).sum() / n
        d = (p - y) / (p * (1 - p)) / n
        return d.astype(scores.dtype), float(loss)


@registry.losses("spacy-siamese.LogLoss.v1")
class PairLogLossV1:
    """Frozen LogLoss.v1 (new configs use v2): binary cross-entropy on the first score column."""

    def __init__(self, *, eps: float = 1e-5) -> None:
        self.eps = eps

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        p = xp.clip(scores[:, 0], self.eps, 1.0 - self.eps)
        y = check_truths(truths, len(p), "LogLoss.v1").astype(p.dtype)
        n = max(len(y), 1)
        loss = -(y * xp.log(p) + (1 - y) * xp.log(1 - p)).sum() / n
        d = (p - y) / (p * (1 - p)) / n
        return d[:, None].astype(scores.dtype), float(loss)


make_log_loss = PairLogLoss  # the builders of the registered names
make_log_loss_v1 = PairLogLossV1
