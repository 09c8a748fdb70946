from typing import Callable, Optional, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .cosine import init

InT = Tuple[Floats2d, Floats2d]
NORMS = ("l1", "l2")


@registry.architectures("spacy-siamese.ExpL1Similarity.v1")
def exp_l1_similarity(*, norm: str = "l1", scale: float = 1.0, nI: Optional[int] = None) -> Model[InT, Floats2d]:
    """MaLSTM similarity exp(-scale * ||a - b||) in (0, 1], `norm` "l1" (the paper) or "l2";
    `scale` is a fixed temperature. Output shape: (n_pairs, 1)."""
    if norm not in NORMS:
        raise ValueError(f"ExpL1Similarity: norm must be one of {', '.join(map(repr, NORMS))}, got {norm!r}")
    if not 0.0 <= scale < float("inf"):  # an infinite scale made identical vectors score NaN (inf * 0)
        raise ValueError(f"ExpL1Similarity: scale must be a finite non-negative number, got {scale!r}")
    return Model(
        "exp_l1_similarity",
        forward,
        init=init,
        dims={"nI": nI, "nO": 1},
        attrs={"norm": norm, "scale": float(scale), "score_range": (0.0, 1.0)},
    )


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    xp = model.ops.xp
    A, B = X
    scale = model.attrs["scale"]
    d = A - B
    if model.attrs["norm"] == "l1":
        dist = xp.abs(d).sum(axis=1)
        ddist = xp.sign(d)
    else:
        dist = xp.sqrt((d * d).sum(axis=1))
        inv = xp.where(dist > 0, 1.0 / xp.where(dist > 0, dist, 1.0), 0.0)
        ddist = d * inv[:, None]
    y = xp.exp(-scale * dist)

    def backprop(dY: Floats2d) -> InT:
        g = -scale * dY[:, 0] * y
        dA = (g[:, None] * ddist).astype(A.dtype)
        return dA, -dA

    return y[:, None].astype(A.dtype), backprop
