from functools import partial
from typing import Any, Callable, List, Tuple

from spacy.tokens import Doc
from thinc.api import Model
from thinc.layers.chain import forward as chain_forward
from thinc.layers.chain import init as chain_init
from thinc.types import Floats2d


def skip_features_without_tokens(chained: Model[List[Doc], Floats2d], width: int) -> Model[List[Doc], Floats2d]:
    """The chain, except that on a batch without a token its first layer (token features of
    `width`, which fail on it) is not run: each doc gets a (0, `width`) array."""
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


def encode_docs(encoder: Model[List[Doc], Floats2d], docs: List[Doc], is_train: bool) -> Tuple[Floats2d, Callable]:
    """Run any encoder on docs, checking it gives one row of its width per doc; an encoder that
    fails on a batch without a token gets it beside a one-token doc whose row is dropped."""
    width = encoder.get_dim("nO")
    if not docs:
        return encoder.ops.alloc2f(0, width), lambda dY: []
    if any(len(doc) for doc in docs):
        V, backprop = encoder(docs, is_train)
        return check_rows(encoder, V, len(docs), width), backprop
    try:
        V, backprop = encoder(docs, is_train)
        if V.shape == (len(docs), width):
            return V, backprop
    except Exception:  # e.g. blis's shape mismatch in a user's MultiHashEmbed with static vectors
        pass
    V, backprop_probe = encoder([*docs, Doc(docs[0].vocab, words=["."])], is_train)
    V = check_rows(encoder, V, len(docs) + 1, width)

    def backprop_docs(dY: Floats2d) -> Any:
        backprop_probe(encoder.ops.xp.vstack([dY, encoder.ops.alloc2f(1, width, dtype=dY.dtype)]))
        return docs

    return V[:-1], backprop_docs


def check_rows(encoder: Model, V: Any, n_docs: int, width: int) -> Floats2d:
    """V, if it is one row of the encoder's width per doc; otherwise a ValueError naming the encoder."""
    shape = getattr(V, "shape", None)
    if shape != (n_docs, width):
        got = f"an array of shape {shape}" if shape is not None else f"{type(V).__name__}"
        raise ValueError(
            f"The encoder '{encoder.name}' gave {got} for {n_docs} docs: an encoder must give one "
            f"row of its width (nO = {width}) per doc."
        )
    return V
