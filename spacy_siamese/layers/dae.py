from typing import Callable, Optional, Tuple, Union, cast

import numpy
from scipy.sparse import csr_matrix, issparse
from thinc.api import Model, registry
from thinc.types import Floats1d, Floats2d

InT = Union[csr_matrix, Floats2d]


@registry.layers("spacy-siamese.dae.v1")
def denoising_autoencoder(
    *,
    nO: Optional[int] = None,
    nI: Optional[int] = None,
    noise: float = 0.3,
    reconstruction_weight: float = 1.0,
    seed: int = 0,
) -> Model[InT, Floats2d]:
    """Denoising autoencoder (Tajima et al. 2016) of CSR or dense binary term vectors: h = sigmoid(xW + c) - sigmoid(c).
    In training, non-zero inputs are zeroed with probability `noise`, y = sigmoid(h V + d) reconstructs the clean input,
    and `reconstruction_weight` times its cross-entropy joins the loss on h."""
    if not 0.0 <= noise < 1.0:
        raise ValueError(f"dae: noise must be in [0, 1), got {noise}")
    if reconstruction_weight < 0:
        raise ValueError(f"dae: reconstruction_weight must be >= 0, got {reconstruction_weight}")
    return Model(
        "dae",
        forward,
        init=init,
        dims={"nO": nO, "nI": nI},
        params={"W": None, "c": None, "V": None, "d": None},
        attrs={"noise": float(noise), "reconstruction_weight": float(reconstruction_weight), "seed": seed},
    )


def init(model: Model, X: Optional[InT] = None, Y=None) -> None:
    if X is not None:
        model.set_dim("nI", X.shape[1], force=True)
    nI, nO = model.get_dim("nI"), model.get_dim("nO")
    rng = numpy.random.default_rng(model.attrs["seed"])
    # Scale W so a doc of average length starts with pre-activations of about unit variance;
    # the decoder bias starts at the logit of each term's rate, the best reconstruction from h = 0.
    per_doc = float(abs(X).sum(axis=1).mean()) if X is not None and X.shape[0] else 1.0
    W = rng.normal(scale=1.0 / numpy.sqrt(max(per_doc, 1.0)), size=(nI, nO))
    V = rng.normal(scale=1.0 / numpy.sqrt(nO), size=(nO, nI))
    d = numpy.zeros(nI)
    if X is not None and X.shape[0]:
        rate = numpy.clip(numpy.asarray(abs(X).mean(axis=0)).ravel(), 1e-4, 1.0 - 1e-4)
        d = numpy.log(rate) - numpy.log1p(-rate)
    ops = model.ops
    model.set_param("W", ops.asarray2f(cast(Floats2d, W.astype("float32"))))
    model.set_param("c", ops.alloc1f(nO))
    model.set_param("V", ops.asarray2f(cast(Floats2d, V.astype("float32"))))
    model.set_param("d", ops.asarray1f(cast(Floats1d, d.astype("float32"))))


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    W, c = model.get_param("W"), model.get_param("c")
    if X.shape[1] != W.shape[0]:
        raise ValueError(f"dae: input has {X.shape[1]} columns, expected nI={W.shape[0]}")
    xp = model.ops.xp
    noisy = _mask(model, X) if is_train else X
    s = model.ops.sigmoid(cast(Floats2d, xp.asarray(noisy @ W, dtype=W.dtype) + c))
    s0 = model.ops.sigmoid(cast(Floats1d, c))
    H = s - s0
    if not is_train:
        return H, lambda dH: None
    V, d = model.get_param("V"), model.get_param("d")
    target = xp.asarray(_dense(X), dtype=W.dtype)
    # Cross-entropy of sigmoid(Z) against the clean input; its gradient in Z is sigmoid(Z) - x.
    Z = H @ V + d
    dZ = (model.ops.sigmoid(Z) - target) * (model.attrs["reconstruction_weight"] / max(X.shape[0], 1))

    def backprop(dH: Floats2d) -> Optional[InT]:
        model.inc_grad("V", H.T @ dZ)
        model.inc_grad("d", dZ.sum(axis=0))
        dH_total = dH + dZ @ V.T
        dA = dH_total * s * (1.0 - s)
        model.inc_grad("W", xp.asarray(noisy.T @ dA, dtype=W.dtype))
        # h = sigmoid(xW + c) - sigmoid(c): c also enters through the subtracted term.
        model.inc_grad("c", dA.sum(axis=0) - dH_total.sum(axis=0) * s0 * (1.0 - s0))
        return None if issparse(X) else dA @ W.T  # a sparse input's featuriser has no parameters

    return H, backprop


def reconstruction_loss(model: Model, X: InT) -> float:
    """The reconstruction cross-entropy of X through the noise-free autoencoder, summed over the
    input elements and averaged over the rows (for monitoring)."""
    xp = model.ops.xp
    Z = model.predict(X) @ model.get_param("V") + model.get_param("d")
    target = xp.asarray(_dense(X), dtype=Z.dtype)
    return float((xp.logaddexp(0.0, Z) - target * Z).sum() / max(X.shape[0], 1))


def _mask(model: Model, X: InT) -> InT:
    """X with each non-zero element zeroed with probability `noise`."""
    p = model.attrs["noise"]
    if p == 0.0:
        return X
    if issparse(X):
        noisy = csr_matrix(X, copy=True)
        noisy.data = noisy.data * (numpy.random.random(noisy.data.shape) >= p)
        noisy.eliminate_zeros()
        return noisy
    return X * (model.ops.xp.random.random(X.shape) >= p)


def _dense(X: InT) -> Floats2d:
    return cast(csr_matrix, X).toarray() if issparse(X) else cast(Floats2d, X)
