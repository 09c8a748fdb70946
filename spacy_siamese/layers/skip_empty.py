from typing import Callable, Optional, Tuple

from thinc.api import Model, registry
from thinc.types import Ragged


@registry.layers("spacy-siamese.skip_empty.v1")
def skip_empty(layer: Model[Ragged, Ragged]) -> Model[Ragged, Ragged]:
    """`layer`, one that keeps the width (e.g. a window CNN), except on a batch without a single
    row (no doc with a known token), which passes unchanged: thinc's LayerNorm fails on zero rows."""
    return Model(f"skip_empty({layer.name})", forward, init=init, layers=[layer])


def init(model: Model[Ragged, Ragged], X: Optional[Ragged] = None, Y: Optional[Ragged] = None) -> None:
    model.layers[0].initialize(X=X if X is not None and X.dataXd.shape[0] else None)


def forward(model: Model[Ragged, Ragged], X: Ragged, is_train: bool) -> Tuple[Ragged, Callable]:
    if X.dataXd.shape[0]:
        return model.layers[0](X, is_train)
    return X, lambda dY: dY
