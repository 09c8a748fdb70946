from typing import Callable, Optional, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.WithAuxiliary.v1")
def with_auxiliary(
    *, main: Model[InT, Floats2d], auxiliary: Model[InT, Floats2d], weight: float = 1.0
) -> Model[InT, Floats2d]:
    """Train a second head beside `main`: in training the columns (main, auxiliary), the
    auxiliary gradient scaled by `weight`; at prediction only `main` runs."""
    if not weight >= 0:
        raise ValueError(f"WithAuxiliary: weight must be >= 0, got {weight}")
    return Model(
        "with_auxiliary",
        forward,
        init=init_heads,
        layers=[main, auxiliary],
        refs={"main": main, "auxiliary": auxiliary},
        dims={"nI": None, "nO": 1},
        attrs={"weight": float(weight)},
    )


def init_heads(model: Model, X: Optional[InT] = None, Y=None) -> None:
    """Initialize a combinator of comparison heads: its nI from the sample pair vectors, or
    passed down to heads that lack it when there is no sample (a bare `nlp.initialize()`)."""
    if X is not None and not model.has_dim("nI"):
        model.set_dim("nI", X[0].shape[1])
    for layer in model.layers:
        if X is None and layer.has_dim("nI") is None and model.has_dim("nI"):
            layer.set_dim("nI", model.get_dim("nI"))
        layer.initialize(X=X, Y=Y)


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    main = model.get_ref("main")
    if not is_train:
        return main(X, is_train)
    Y_main, backprop_main = main(X, is_train)
    Y_aux, backprop_aux = model.get_ref("auxiliary")(X, is_train)

    def backprop(dY: Floats2d) -> InT:
        dA, dB = backprop_main(dY[:, :1])
        dA_aux, dB_aux = backprop_aux(model.ops.xp.ascontiguousarray(dY[:, 1:]) * model.attrs["weight"])
        return dA + dA_aux, dB + dB_aux

    return model.ops.xp.hstack([Y_main, Y_aux]), backprop
