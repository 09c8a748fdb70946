from typing import Callable, Optional, Tuple

import numpy
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .auxiliary import init_heads

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.TrainCalibrated.v1")
def train_calibrated(*, comparison: Model[InT, Floats2d], eps: float = 1e-6) -> Model[InT, Floats2d]:
    """Train `comparison` (a (0, 1) score s) through a learned Platt scaling,
    sigmoid(a + c * logit(s)) with c = softplus(b) > 0; predict with the raw, equally ranked s."""
    if not 0.0 < eps < 0.5:
        raise ValueError(f"TrainCalibrated: eps must be in (0, 0.5), got {eps}")
    return Model(
        "train_calibrated",
        forward,
        init=init,
        layers=[comparison],
        dims={"nI": None, "nO": 1},
        params={"a": None, "b": None},
        attrs={"eps": float(eps)},
    )


def init(model: Model, X: Optional[InT] = None, Y=None) -> None:
    init_heads(model, X, Y)
    model.set_param("a", model.ops.alloc1f(1))
    b = float(numpy.log(numpy.expm1(1.0)))  # softplus^-1(1): start as the identity map
    model.set_param("b", model.ops.asarray1f([b]))


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    inner = model.layers[0]
    if not is_train:
        return inner(X, is_train)
    xp = model.ops.xp
    S, backprop_inner = inner(X, is_train)
    eps = model.attrs["eps"]
    s = xp.clip(S, eps, 1.0 - eps)
    z = xp.log(s) - xp.log1p(-s)
    a, b = model.get_param("a"), model.get_param("b")
    c = xp.logaddexp(0, b)  # softplus
    P = 1.0 / (1.0 + xp.exp(-(a + c * z)))

    def backprop(dP: Floats2d) -> InT:
        dlogit = dP * P * (1.0 - P)
        model.inc_grad("a", dlogit.sum(keepdims=True).reshape((1,)).astype(a.dtype))
        dc = (dlogit * z).sum() / (1.0 + xp.exp(-b))  # d softplus = sigmoid
        model.inc_grad("b", dc.reshape((1,)).astype(b.dtype))
        inside = (S > eps) & (S < 1.0 - eps)
        dS = dlogit * c * inside / (s * (1.0 - s))
        return backprop_inner(dS.astype(S.dtype))

    return P.astype(S.dtype), backprop
