from typing import Callable, Optional, Tuple, Union, cast

import numpy
from scipy.sparse import csr_matrix, issparse
from sklearn.decomposition import TruncatedSVD
from thinc.api import Model, registry
from thinc.types import Floats2d, Ints1d

from ..util import scatter_grad, unique_rows

InT = Union[csr_matrix, Floats2d]
INITS = ("lsa", "random")


@registry.layers("spacy-siamese.projection.v1")
def projection(
    *, nO: Optional[int] = None, nI: Optional[int] = None, init: str = "lsa", seed: int = 0
) -> Model[InT, Floats2d]:
    """Y = X @ W without bias (S2Net's A^T f) for CSR or dense X; W starts as the LSA
    projection of the initialization matrix (`init="lsa"`) or at random."""
    if init not in INITS:
        raise ValueError(f"projection: init must be one of {', '.join(INITS)}, got {init!r}")
    return Model(
        "projection",
        forward,
        init=_init,
        dims={"nO": nO, "nI": nI},
        params={"W": None},
        attrs={"init": init, "seed": seed},
    )


def _init(model: Model, X: Optional[InT] = None, Y=None) -> None:
    if X is not None:
        model.set_dim("nI", X.shape[1], force=True)
    nI, nO = model.get_dim("nI"), model.get_dim("nO")
    rng = numpy.random.default_rng(model.attrs["seed"])
    W = rng.normal(scale=1.0 / numpy.sqrt(nI), size=(nI, nO)).astype("float32")
    if model.attrs["init"] == "lsa":
        if X is None:
            raise ValueError("projection: init='lsa' needs the initialization matrix (X)")
        F = unique_rows(csr_matrix(X))
        k = min(nO, nI - 1, F.shape[0] - 1)
        if k >= 1:
            # Columns past k (more dims than the data has) keep small random values.
            W[:, :k] = TruncatedSVD(n_components=k, random_state=model.attrs["seed"]).fit(F).components_.T
            W[:, k:] *= 1e-3
    model.set_param("W", model.ops.asarray2f(cast(Floats2d, W)))


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    W = model.get_param("W")
    if X.shape[1] != W.shape[0]:
        raise ValueError(f"projection: input has {X.shape[1]} columns, expected nI={W.shape[0]}")
    Y = model.ops.xp.asarray(X @ W)

    def backprop(dY: Floats2d) -> Optional[InT]:
        if not issparse(X):
            model.inc_grad("W", X.T @ dY)
            return dY @ W.T
        # dW = X^T dY, computed on the columns present in the batch only.
        X_csr = csr_matrix(X)
        rows, cols = numpy.unique(X_csr.indices, return_inverse=True)
        X_used = csr_matrix((X_csr.data, cols.ravel(), X_csr.indptr), shape=(X_csr.shape[0], len(rows)))
        dW_used = model.ops.asarray2f(cast(Floats2d, X_used.T @ dY), dtype=W.dtype)
        scatter_grad(model, "W", model.ops.asarray1i(cast(Ints1d, rows)), dW_used)
        return None  # the featuriser upstream has no parameters

    return Y, backprop
