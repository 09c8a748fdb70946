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
    norm_a = xp.sqrt((A * A).sum(axis=1))
    norm_b = xp.sqrt((B * B).sum(axis=1))
    defined = (norm_a > 0) & (norm_b > 0)
    inv_a = xp.where(defined, 1.0 / xp.where(defined, norm_a, 1.0), 0.0)
    inv_b = xp.where(defined, 1.0 / xp.where(defined, norm_b, 1.0), 0.0)
    cos = (A * B).sum(axis=1) * inv_a * inv_b
    scale = 0.5 if model.attrs["rescale"] else 1.0

    def backprop(dY: Floats2d) -> InT:
        d = dY[:, 0] * scale
        # d cos / d a = b / (|a| |b|) - cos * a / |a|^2
        dA = (d * inv_a * inv_b)[:, None] * B - (d * cos * inv_a * inv_a)[:, None] * A
        dB = (d * inv_a * inv_b)[:, None] * A - (d * cos * inv_b * inv_b)[:, None] * B
        return dA.astype(A.dtype), dB.astype(B.dtype)

    Y = (cos + 1.0) * 0.5 if model.attrs["rescale"] else cos
    return Y[:, None].astype(A.dtype), backprop
