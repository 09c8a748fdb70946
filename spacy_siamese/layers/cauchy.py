from typing import Callable, Optional, Tuple

import numpy
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.CauchySimilarity.v1")
def cauchy_similarity(*, nI: Optional[int] = None) -> Model[InT, Floats2d]:
    """Cauchy similarity 1 / (1 + sum_i w_i (a_i - b_i)^2), w = softplus(v) > 0; (n_pairs, 1)."""
    return Model("cauchy_similarity", forward, init=init, dims={"nI": nI, "nO": 1}, params={"v": None})


def init(model: Model, X: Optional[InT] = None, Y=None) -> None:
    if X is not None and not model.has_dim("nI"):
        model.set_dim("nI", X[0].shape[1])
    nI = model.get_dim("nI")
    # Start with equal weights scaled so the distance term is about 1 on the sample pairs (a score near 0.5, where
    # the gradient is largest). Adam moves the weights only ~learn_rate per step, so a badly scaled start would last.
    w0 = 1.0 / nI
    if X is not None and len(X[0]):
        diff = model.ops.to_numpy(X[0] - X[1]).astype("float64")  # float32 squares of huge entries overflow
        mean_sq = float((diff * diff).sum(axis=1).mean())
        if mean_sq > 1e-8:
            w0 = 1.0 / mean_sq
    v = model.ops.alloc1f(nI)
    # softplus^-1(w0) = log(expm1(w0)), in a form that does not overflow for a large w0
    v += float(w0 + numpy.log(-numpy.expm1(-w0)))
    model.set_param("v", v)


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    xp = model.ops.xp
    A, B = X
    v = model.get_param("v")
    w = xp.logaddexp(0, v)  # softplus
    d = A - B
    y = 1.0 / (1.0 + (d * d) @ w)

    def backprop(dY: Floats2d) -> InT:
        # dy/ds = -y^2, written with y * d: d * d overflows where y is 0 (inf * 0 would be NaN)
        yd = y[:, None] * d
        dw = -(yd * yd).T @ dY[:, 0]
        model.inc_grad("v", (dw / (1.0 + xp.exp(-v))).astype(v.dtype))  # d softplus = sigmoid
        dA = ((-2.0 * dY[:, 0] * y)[:, None] * w[None, :] * yd).astype(A.dtype)
        return dA, -dA

    return y[:, None].astype(A.dtype), backprop
