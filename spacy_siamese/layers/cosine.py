from typing import Callable, Optional, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.CosineSimilarity.v1")
def cosine_similarity(*, rescale: bool = False, nI: Optional[int] = None) -> Model[InT, Floats2d]:
    """Cosine of paired vectors, shape (n_pairs, 1); (1 + cos) / 2 with `rescale`, so the
    score is in [0, 1]. A pair with a zero vector has cosine 0 (and zero gradient)."""
    return Model("cosine_similarity", forward, init=init, dims={"nI": nI, "nO": 1}, attrs={"rescale": rescale})


def init(model: Model, X: Optional[InT] = None, Y=None) -> None:
    """The init of a comparison without parameters (cosine, dot, exp(-L1)): its input width."""
    if X is not None:
        model.set_dim("nI", X[0].shape[1], force=True)


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    xp = model.ops.xp
    A, B = X
    # The cosine does not depend on the vectors' lengths: dividing each row by its largest
    # |entry| first keeps the squares of huge or tiny entries from overflowing or underflowing.
    scale_a, scale_b = _row_scale(xp, A), _row_scale(xp, B)
    U, V = A / scale_a, B / scale_b
    norm_u = xp.sqrt((U * U).sum(axis=1))
    norm_v = xp.sqrt((V * V).sum(axis=1))
    defined = (norm_u > 0) & (norm_v > 0)
    inv_u = xp.where(defined, 1.0 / xp.where(defined, norm_u, 1.0), 0.0)
    inv_v = xp.where(defined, 1.0 / xp.where(defined, norm_v, 1.0), 0.0)
    cos = (U * V).sum(axis=1) * (inv_u * inv_v)
    scale = 0.5 if model.attrs["rescale"] else 1.0

    def backprop(dY: Floats2d) -> InT:
        d = dY[:, 0] * scale
        # d cos / d a = (v / (|u| |v|) - cos * u / |u|^2) / scale_a, with u = a / scale_a, v = b / scale_b
        dA = ((d * inv_u * inv_v)[:, None] * V - (d * cos * inv_u * inv_u)[:, None] * U) / scale_a
        dB = ((d * inv_u * inv_v)[:, None] * U - (d * cos * inv_v * inv_v)[:, None] * V) / scale_b
        return dA.astype(A.dtype), dB.astype(B.dtype)

    Y = (cos + 1.0) * 0.5 if model.attrs["rescale"] else cos
    return Y[:, None].astype(A.dtype), backprop


def _row_scale(xp, X: Floats2d) -> Floats2d:
    """The largest absolute entry of each row (1 for a zero row), shape (n, 1)."""
    top = xp.abs(X).max(axis=1, keepdims=True)
    return xp.where(top > 0, top, 1.0)
