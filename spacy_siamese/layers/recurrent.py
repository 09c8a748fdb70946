from typing import Any, Callable, List, Optional, Tuple

from thinc.api import Model, get_array_module, registry
from thinc.types import Floats2d

Array = Any  # padded (T, B, width) arrays of the model's array module
Cache = Tuple[Array, Array, Array]  # hidden states, cell states, gate activations


@registry.layers("spacy-siamese.LSTM.v1")
def lstm(
    *, nO: Optional[int] = None, nI: Optional[int] = None, bidirectional: bool = False, depth: int = 1
) -> Model[List[Floats2d], List[Floats2d]]:
    """An LSTM over each sequence of a list: (n_i, nI) -> (n_i, nO), with its own forward and
    backward pass. Gates i, f, g, o; zero initial states; the forget gate's bias starts at 1.
    Bidirectional: the forward and backward outputs, nO / 2 each, are concatenated (forward
    first). Layers are stacked `depth` times. Empty sequences give empty outputs.

    Thinc's own `LSTM` layer is not used: its CPU backward pass gives wrong gradients
    (thinc 8.3, `NumpyOps.backprop_lstm`).
    """
    if depth < 1:
        raise ValueError(f"LSTM: depth must be at least 1, got {depth}")
    if bidirectional and nO is not None and nO % 2:
        raise ValueError(f"LSTM: a bidirectional LSTM needs an even nO, got {nO}")
    return Model(
        "lstm",
        forward,
        init=init,
        dims={"nO": nO, "nI": nI},
        attrs={"bidirectional": bidirectional, "depth": depth},
    )


def _dirs(model: Model) -> int:
    return 2 if model.attrs["bidirectional"] else 1


def init(model: Model, X: Optional[List[Floats2d]] = None, Y=None) -> None:
    if X is not None and len(X) and not model.has_dim("nI"):
        model.set_dim("nI", X[0].shape[1])
    dirs = _dirs(model)
    nH = model.get_dim("nO") // dirs
    n_in = model.get_dim("nI")
    ops = model.ops
    for k in range(model.attrs["depth"]):
        for d in range(dirs):
            W: Array = ops.alloc2f(4 * nH, n_in)
            U: Array = ops.alloc2f(4 * nH, nH)
            for param, fan_in in ((W, n_in), (U, nH)):
                limit = (6.0 / (fan_in + nH)) ** 0.5
                param[...] = ops.xp.random.uniform(-limit, limit, param.shape)
            b: Array = ops.alloc1f(4 * nH)
            b[nH : 2 * nH] = 1.0
            model.set_param(f"W{k}_{d}", W)
            model.set_param(f"U{k}_{d}", U)
            model.set_param(f"b{k}_{d}", b)
        n_in = nH * dirs


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    ops = model.ops
    xp = ops.xp
    lengths = [len(x) for x in X]
    n_in = model.get_dim("nI")
    dtype = X[0].dtype if len(X) else "float32"
    # Padded (T, B, width), sequences left-aligned; positions past a length are zeros and never
    # reach a valid output (they come after it), so no mask is needed.
    T, B = max(lengths, default=0), len(X)
    H = xp.zeros((T, B, n_in), dtype=dtype)
    for j, x in enumerate(X):
        H[: len(x), j] = x
    rev = _reverse_index(xp, lengths, T)
    caches: List[List[Tuple[Cache, Array]]] = []
    for k in range(model.attrs["depth"]):
        outputs, layer_caches = [], []
        for d in range(_dirs(model)):
            inp = H if d == 0 else _flip(H, rev)
            out, cache = _run(model, k, d, inp)
            outputs.append(out if d == 0 else _flip(out, rev))
            layer_caches.append((cache, inp))
        caches.append(layer_caches)
        H = xp.concatenate(outputs, axis=2) if len(outputs) > 1 else outputs[0]
    Y = [H[:n, j] for j, n in enumerate(lengths)]

    def backprop(dY: List[Floats2d]) -> List[Floats2d]:
        dH = xp.zeros(H.shape, dtype=dtype)
        for j, dy in enumerate(dY):
            dH[: len(dy), j] = dy
        for k in reversed(range(model.attrs["depth"])):
            nH = dH.shape[2] // _dirs(model)
            d_in = None
            for d, (cache, inp) in enumerate(caches[k]):
                part = dH[:, :, d * nH : (d + 1) * nH]
                dinp = _run_backward(model, k, d, part if d == 0 else _flip(part, rev), cache, inp)
                dinp = dinp if d == 0 else _flip(dinp, rev)
                d_in = dinp if d_in is None else d_in + dinp
            dH = d_in
        return [dH[:n, j] for j, n in enumerate(lengths)]

    return Y, backprop


def _reverse_index(xp, lengths: List[int], T: int):
    """For each (t, sequence): the position that t maps to when the sequence is reversed within
    its length (positions past the length map to themselves)."""
    index = xp.tile(xp.arange(T)[:, None], (1, len(lengths)))
    for j, n in enumerate(lengths):
        index[:n, j] = xp.arange(n - 1, -1, -1)
    return index


def _flip(H: Array, index) -> Array:
    """Each sequence of a padded batch reversed within its length."""
    xp = get_array_module(H)
    return H[index, xp.arange(index.shape[1])[None, :]]


def _param(model: Model, name: str, k: int, d: int) -> Array:
    return model.get_param(f"{name}{k}_{d}")


def _sigmoid(xp, z):
    return 0.5 * (xp.tanh(0.5 * z) + 1.0)


def _run(model: Model, k: int, d: int, X: Array) -> Tuple[Array, Cache]:
    xp = model.ops.xp
    W, U, b = (_param(model, p, k, d) for p in "WUb")
    nH = U.shape[1]
    T, B = X.shape[0], X.shape[1]
    Z = (X.reshape(T * B, X.shape[2]) @ W.T + b).reshape(T, B, 4 * nH)
    Hs = xp.zeros((T + 1, B, nH), dtype=Z.dtype)  # Hs[t + 1] is h_t; Hs[0] = h_{-1} = 0
    Cs = xp.zeros((T + 1, B, nH), dtype=Z.dtype)
    G = xp.zeros((T, B, 4 * nH), dtype=Z.dtype)  # gate activations
    for t in range(T):
        z = Z[t] + Hs[t] @ U.T
        g = G[t]
        g[:, : 2 * nH] = _sigmoid(xp, z[:, : 2 * nH])
        g[:, 2 * nH : 3 * nH] = xp.tanh(z[:, 2 * nH : 3 * nH])
        g[:, 3 * nH :] = _sigmoid(xp, z[:, 3 * nH :])
        Cs[t + 1] = g[:, nH : 2 * nH] * Cs[t] + g[:, :nH] * g[:, 2 * nH : 3 * nH]
        Hs[t + 1] = g[:, 3 * nH :] * xp.tanh(Cs[t + 1])
    return Hs[1:], (Hs, Cs, G)


def _run_backward(model: Model, k: int, d: int, dY: Array, cache: Cache, X: Array) -> Array:
    xp = model.ops.xp
    W, U, _ = (_param(model, p, k, d) for p in "WUb")
    Hs, Cs, G = cache
    nH = U.shape[1]
    T, B = dY.shape[0], dY.shape[1]
    dZ = xp.zeros((T, B, 4 * nH), dtype=G.dtype)
    dh_next = xp.zeros((B, nH), dtype=G.dtype)
    dc_next = xp.zeros((B, nH), dtype=G.dtype)
    for t in reversed(range(T)):
        i, f, g, o = (G[t, :, n * nH : (n + 1) * nH] for n in range(4))
        dh = dY[t] + dh_next
        tc = xp.tanh(Cs[t + 1])
        dc = dh * o * (1.0 - tc * tc) + dc_next
        dz = dZ[t]
        dz[:, :nH] = dc * g * i * (1.0 - i)
        dz[:, nH : 2 * nH] = dc * Cs[t] * f * (1.0 - f)
        dz[:, 2 * nH : 3 * nH] = dc * i * (1.0 - g * g)
        dz[:, 3 * nH :] = dh * tc * o * (1.0 - o)
        dc_next = dc * f
        dh_next = dz @ U
    flat = dZ.reshape(T * B, 4 * nH)
    model.inc_grad(f"W{k}_{d}", (flat.T @ X.reshape(T * B, X.shape[2])).astype(W.dtype))
    model.inc_grad(f"U{k}_{d}", (flat.T @ Hs[:-1].reshape(T * B, nH)).astype(U.dtype))
    model.inc_grad(f"b{k}_{d}", flat.sum(axis=0).astype(W.dtype))
    return (flat @ W).reshape(T, B, W.shape[1])
