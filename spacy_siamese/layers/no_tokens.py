from functools import partial
from typing import Any, Callable, List, Tuple

from spacy.tokens import Doc
from thinc.api import Model
from thinc.layers.chain import forward as chain_forward
from thinc.layers.chain import init as chain_init
from thinc.types import Floats2d


def skip_features_without_tokens(chained: Model[List[Doc], Floats2d], width: int) -> Model[List[Doc], Floats2d]:
    """The chain, except that on a batch without a single token its first layer (the token
    features, of `width`) is not run: each doc gets a (0, `width`) array instead, and the later
    layers run as usual, so an empty doc gets the same vector in any batch. spaCy's StaticVectors
    returns no sequences for such a batch and MultiHashEmbed fails inside blis. No docs give a
    (0, nO) array (Thinc's list2ragged loses the width of an empty list). The same name,
    layers and dims as `chained`, so pipelines saved with the plain chain load unchanged."""
    dims = {name: chained.maybe_get_dim(name) for name in chained.dim_names}
    forward = partial(_forward, width=width)  # a module-level function: the model still pickles
    return Model(chained.name, forward, init=chain_init, layers=chained.layers, dims=dims)


def _forward(
    model: Model[List[Doc], Floats2d], docs: List[Doc], is_train: bool, *, width: int
) -> Tuple[Floats2d, Callable]:
    if any(len(doc) for doc in docs):
        return chain_forward(model, docs, is_train)
    if not docs:
        return model.ops.alloc2f(0, model.get_dim("nO")), lambda dY: []
    X: Any = [model.ops.alloc2f(0, width) for _ in docs]
    callbacks = []
    for layer in model.layers[1:]:
        X, callback = layer(X, is_train=is_train)
        callbacks.append(callback)

    def backprop(dY: Floats2d) -> List[Doc]:
        dX: Any = dY
        for callback in reversed(callbacks):
            dX = callback(dX)
        return []

    return X, backprop
