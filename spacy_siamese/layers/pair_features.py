from typing import Callable, Optional, Tuple

from thinc.api import Model, registry
from thinc.types import Floats2d

InT = Tuple[Floats2d, Floats2d]


@registry.layers("spacy-siamese.pair_features.v1")
def pair_features(*, nI: Optional[int] = None) -> Model[InT, Floats2d]:
    """Symmetric features of a vector pair: concat(|a - b|, a * b), shape (n, 2 * nI)."""
    return Model("pair_features", forward, init=init, dims={"nI": nI, "nO": 2 * nI if nI is not None else None})


def init(model: Model, X: Optional[InT] = None, Y=None) -> None:
    if X is not None:
        model.set_dim("nI", X[0].shape[1])
        model.set_dim("nO", 2 * X[0].shape[1])


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    xp = model.ops.xp
    A, B = X
    diff = A - B
    Y = xp.hstack([xp.abs(diff), A * B])

    def backprop(dY: Floats2d) -> InT:
        width = A.shape[1]
        d_abs = dY[:, :width] * xp.sign(diff)
        d_prod = dY[:, width:]
        return d_abs + d_prod * B, d_prod * A - d_abs

    return Y, backprop
