from typing import Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d

from ._util import check_truths, softplus_sigmoid


@registry.losses("spacy-siamese.PairwiseLogisticLoss.v1")
class PairwiseLogisticLoss:
    """S2Net's pairwise logistic (RankNet-style) loss, where only the ranking of the scores (n, 1) matters:
    1/|O| * sum over O = {(i, j): y_i > y_j} of log(1 + exp(-gamma * (s_i - s_j))); 0 if O is empty."""

    def __init__(self, gamma: float = 10.0) -> None:
        if not gamma > 0:
            raise ValueError(f"PairwiseLogisticLoss: gamma must be > 0, got {gamma}")
        self.gamma = gamma

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        if scores.shape[1] != 1:
            raise ValueError(
                f"PairwiseLogisticLoss takes one score column, got {scores.shape[1]} "
                "(an auxiliary head needs LogLoss.v2 or SquaredError.v1)"
            )
        xp = get_array_module(scores)
        s = xp.asarray(scores[:, 0], dtype="float64")
        y = check_truths(truths, len(s), "PairwiseLogisticLoss")
        ordered = y[:, None] > y[None, :]  # (i, j): pair i should score above pair j
        m = int(ordered.sum())
        if m == 0:
            return xp.zeros_like(scores), 0.0
        softplus, sigmoid = softplus_sigmoid(xp, -self.gamma * (s[:, None] - s[None, :]))
        loss = float(softplus[ordered].sum() / m)
        # d/d delta of log(1 + exp(-gamma delta)) = -gamma * sigmoid(z)
        g = xp.where(ordered, -self.gamma * sigmoid, 0.0) / m
        d = g.sum(axis=1) - g.sum(axis=0)
        return d[:, None].astype(scores.dtype), loss


make_pairwise_logistic_loss = PairwiseLogisticLoss  # the builder of the registered name
