from typing import Callable, List, Tuple

from thinc.api import Model, registry
from thinc.types import Floats2d

POOLINGS = ("last", "mean", "max")


@registry.layers("spacy-siamese.sequence_pool.v1")
def sequence_pool(*, mode: str = "last", bidirectional: bool = False) -> Model[List[Floats2d], Floats2d]:
    """One vector per sequence of RNN outputs, (n_seqs, width): the final hidden state ("last";
    bidirectional: forward half at the end, backward half at the start), "mean" or "max"."""
    if mode not in POOLINGS:
        raise ValueError(f"sequence_pool: mode must be one of {', '.join(map(repr, POOLINGS))}, got {mode!r}")
    return Model(
        "sequence_pool",
        forward,
        init=init,
        dims={"nI": None, "nO": None},
        attrs={"mode": mode, "bidirectional": bidirectional},
    )


def init(model: Model, X=None, Y=None) -> None:
    if X is not None and len(X):
        model.set_dim("nI", X[0].shape[1], force=True)
        model.set_dim("nO", X[0].shape[1], force=True)


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[Floats2d, Callable]:
    ops = model.ops
    xp = ops.xp
    mode = model.attrs["mode"]
    width = X[0].shape[1] if len(X) else model.get_dim("nO")
    half = width // 2 if model.attrs["bidirectional"] else width
    Y = ops.alloc2f(len(X), width, dtype=X[0].dtype if len(X) else "float32")
    argmaxes: List = [None] * len(X)  # per sequence: the argmax of each column (max pooling only)
    for i, x in enumerate(X):
        n = x.shape[0]
        if n == 0:
            continue
        if mode == "last":
            Y[i, :half] = x[n - 1, :half]
            Y[i, half:] = x[0, half:]
        elif mode == "mean":
            Y[i] = x.mean(axis=0)
        else:
            argmaxes[i] = x.argmax(axis=0)
            Y[i] = x[argmaxes[i], xp.arange(width)]

    def backprop(dY: Floats2d) -> List[Floats2d]:
        dX = []
        for i, x in enumerate(X):
            n = x.shape[0]
            dx = ops.alloc2f(n, width, dtype=dY.dtype)
            if n:
                if mode == "last":
                    dx[n - 1, :half] += dY[i, :half]
                    dx[0, half:] += dY[i, half:]
                elif mode == "mean":
                    dx += dY[i] / n
                else:
                    dx[argmaxes[i], xp.arange(width)] = dY[i]
            dX.append(dx)
        return dX

    return Y, backprop
