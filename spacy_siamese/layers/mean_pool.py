from typing import Callable, Tuple, cast

from thinc.api import Model, registry
from thinc.types import Floats2d, Ragged


@registry.layers("spacy-siamese.mean_pool.v1")
def mean_pool() -> Model[Ragged, Floats2d]:
    """The mean over each sequence, (n_docs, width); an empty one pools to zeros, a batch of empty ones too."""
    return Model("mean_pool", forward)


def forward(model: Model, Xr: Ragged, is_train: bool) -> Tuple[Floats2d, Callable]:
    ops = model.ops
    X = cast(Floats2d, Xr.dataXd)
    lengths = ops.asarray1i(Xr.lengths)
    # thinc's reduce_mean gives an empty sequence zeros, but fails when no sequence has a row
    Y = ops.reduce_mean(X, lengths) if X.shape[0] else ops.alloc2f(lengths.shape[0], X.shape[1])

    def backprop(dY: Floats2d) -> Ragged:
        dX = ops.backprop_reduce_mean(dY, lengths) if X.shape[0] else ops.alloc2f(*X.shape)
        return Ragged(dX, Xr.lengths)

    return Y, backprop
