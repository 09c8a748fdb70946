from typing import Callable, Optional, Tuple, cast

from thinc.api import Model, registry
from thinc.types import Floats2d, Ints2d, Ragged


@registry.layers("spacy-siamese.mean_max_pool.v1")
def mean_max_pool() -> Model[Ragged, Floats2d]:
    """Mean and max pooling over each sequence, (n_docs, 2 * width); an empty one pools to zeros."""
    return Model("mean_max_pool", forward, init=init, dims={"nI": None, "nO": None})


def init(model: Model, X=None, Y=None) -> None:
    if X is not None:
        model.set_dim("nI", X.dataXd.shape[1])
        model.set_dim("nO", 2 * X.dataXd.shape[1])


def forward(model: Model, Xr: Ragged, is_train: bool) -> Tuple[Floats2d, Callable]:
    ops = model.ops
    X = cast(Floats2d, Xr.dataXd)
    lengths = ops.asarray1i(Xr.lengths)
    width = X.shape[1]
    keep = lengths > 0
    nz_lengths = lengths[keep]
    Y = ops.alloc2f(lengths.shape[0], 2 * width)
    which: Optional[Ints2d] = None
    if nz_lengths.shape[0]:
        # Empty sequences own no rows of X: pooling over the non-empty lengths alone covers every row.
        Y[keep, :width] = ops.reduce_mean(X, nz_lengths)
        Y_max, which = ops.reduce_max(X, nz_lengths)
        Y[keep, width:] = Y_max

    def backprop(dY: Floats2d) -> Ragged:
        dX = ops.alloc2f(*X.shape)
        if which is not None:
            dY_nz = dY[keep]
            dX += ops.backprop_reduce_mean(ops.xp.ascontiguousarray(dY_nz[:, :width]), nz_lengths)
            dX += ops.backprop_reduce_max(ops.xp.ascontiguousarray(dY_nz[:, width:]), which, nz_lengths)
        return Ragged(dX, Xr.lengths)

    return Y, backprop
