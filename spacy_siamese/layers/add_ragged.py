from typing import Callable, Optional, Tuple

from thinc.api import Model, registry
from thinc.types import Floats2d, Ragged


@registry.layers("spacy-siamese.add_ragged.v1")
def add_ragged(*layers: Model[Ragged, Floats2d]) -> Model[Ragged, Floats2d]:
    """The sum of layers that each read the same Ragged into one row a sequence: thinc's `add`,
    whose backprop cannot sum the layers' Ragged gradients. `nO` is the first layer's that has one."""
    return Model("add_ragged", forward, init=init, layers=list(layers), dims={"nO": None})


def init(model: Model[Ragged, Floats2d], X: Optional[Ragged] = None, Y: Optional[Floats2d] = None) -> None:
    for layer in model.layers:
        layer.initialize(X=X, Y=Y)
    widths = [layer.get_dim("nO") for layer in model.layers if layer.has_dim("nO")]
    if widths:
        model.set_dim("nO", widths[0], force=True)


def forward(model: Model[Ragged, Floats2d], X: Ragged, is_train: bool) -> Tuple[Floats2d, Callable]:
    outputs = [layer(X, is_train) for layer in model.layers]
    Y = outputs[0][0].copy()
    for out, _ in outputs[1:]:
        Y += out

    def backprop(dY: Floats2d) -> Ragged:
        dX = outputs[0][1](dY).dataXd.copy()
        for _, callback in outputs[1:]:
            dX += callback(dY).dataXd
        return Ragged(dX, X.lengths)

    return Y, backprop
