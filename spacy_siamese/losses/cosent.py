from typing import Tuple

from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d

from ._util import check_truths


@registry.losses("spacy-siamese.CoSENTLoss.v1")
class CoSENTLoss:
    """CoSENT loss (Su 2022) for graded or 0/1 labels: only their order matters. Per score
    column s, summed: log(1 + sum over y_i > y_j of exp(scale * (s_j - s_i))); 0 if no such pair.
    `scale` 20 suits cosine in [-1, 1]; a score in [0, 1] needs about twice that."""

    def __init__(self, scale: float = 20.0) -> None:
        if not scale > 0:
            raise ValueError(f"CoSENTLoss: scale must be > 0, got {scale}")
        self.scale = scale

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        S = xp.asarray(scores, dtype="float64")
        if S.ndim != 2 or len(S) != len(truths):
            raise ValueError(f"CoSENTLoss: need (n, k) scores for n labels, got {S.shape} for {len(truths)}")
        y = check_truths(truths, len(S), "CoSENTLoss")
        ordered = y[:, None] > y[None, :]  # (i, j): pair i should score above pair j
        d = xp.zeros_like(S)
        if not ordered.any():
            return d.astype(scores.dtype), 0.0
        total = 0.0
        for c in range(S.shape[1]):
            s = S[:, c]
            Z = self.scale * (s[None, :] - s[:, None])  # Z[i, j] = scale * (s_j - s_i)
            top = max(float(Z[ordered].max()), 0.0)
            # log(1 + sum exp(z)) = top + log(exp(-top) + sum exp(z - top))
            E = xp.where(ordered, xp.exp(xp.where(ordered, Z, top) - top), 0.0)
            loss = top + float(xp.log(xp.exp(-top) + E.sum()))
            P = E * float(xp.exp(top - loss))  # d loss / d Z[i, j]
            # dZ[i, j] / ds_j = scale, dZ[i, j] / ds_i = -scale
            d[:, c] = self.scale * (P.sum(axis=0) - P.sum(axis=1))
            total += loss
        return d.astype(scores.dtype), total


make_cosent_loss = CoSENTLoss  # the builder of spacy-siamese.CoSENTLoss.v1
