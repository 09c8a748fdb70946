from typing import Any, Callable, List, Optional, Tuple

import numpy
from thinc.api import Model, registry
from thinc.types import Floats2d

Array = Any  # packed (n_tokens, width) arrays of the model's array module
Cache = Tuple[Array, Array, Array]  # hidden states, cell states, gate activations


@registry.layers("spacy-siamese.LSTM.v1")
def lstm(
    *, nO: Optional[int] = None, nI: Optional[int] = None, bidirectional: bool = False, depth: int = 1
) -> Model[List[Floats2d], List[Floats2d]]:
    """An LSTM over each sequence of a list, (n_i, nI) -> (n_i, nO), `depth` layers; `bidirectional`
    concatenates forward and backward outputs (nO / 2 each). Not Thinc's `LSTM`: its CPU
    backward pass gives wrong gradients (thinc 8.3, `NumpyOps.backprop_lstm`)."""
    if depth < 1:
        raise ValueError(f"LSTM: depth must be at least 1, got {depth}")
    if bidirectional and nO is not None and nO % 2:
        raise ValueError(f"LSTM: a bidirectional LSTM needs an even nO, got {nO}")
    return Model(
        "lstm", forward, init=init, dims={"nO": nO, "nI": nI}, attrs={"bidirectional": bidirectional, "depth": depth}
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
            for name, fan_in in (("W", n_in), ("U", nH)):
                limit = (6.0 / (fan_in + nH)) ** 0.5
                model.set_param(f"{name}{k}_{d}", ops.asarray2f(ops.xp.random.uniform(-limit, limit, (4 * nH, fan_in))))
            b: Array = ops.alloc1f(4 * nH)
            b[nH : 2 * nH] = 1.0
            model.set_param(f"b{k}_{d}", b)
        n_in = nH * dirs


def forward(model: Model, X: List[Floats2d], is_train: bool) -> Tuple[List[Floats2d], Callable]:
    xp = model.ops.xp
    dtype = X[0].dtype if len(X) else "float32"
    # The sequences are packed: sorted by length (longest first) and laid out step by step, so
    # step t is the rows of the sequences still running, a prefix of the previous step's. Memory
    # and work follow the number of tokens, not the longest length times the batch size.
    pack = _Packing(xp, [len(x) for x in X])
    H = xp.zeros((pack.n_rows, model.get_dim("nI")), dtype=dtype)
    if len(X):
        H[pack.rows] = xp.concatenate(X)
    caches: List[List[Tuple[Cache, Array]]] = []
    for k in range(model.attrs["depth"]):
        outputs, layer_caches = [], []
        for d in range(_dirs(model)):
            inp = H if d == 0 else H[pack.reverse]
            out, cache = _run(model, k, d, inp, pack)
            outputs.append(out if d == 0 else out[pack.reverse])
            layer_caches.append((cache, inp))
        caches.append(layer_caches)
        H = xp.concatenate(outputs, axis=1) if len(outputs) > 1 else outputs[0]
    Y = pack.unpack(H)

    def backprop(dY: List[Floats2d]) -> List[Floats2d]:
        dH = xp.zeros(H.shape, dtype=dtype)
        if len(dY):
            dH[pack.rows] = xp.concatenate(dY)
        for k in reversed(range(model.attrs["depth"])):
            nH = dH.shape[1] // _dirs(model)
            d_in = None
            for d, (cache, inp) in enumerate(caches[k]):
                part = dH[:, d * nH : (d + 1) * nH]
                dinp = _run_backward(model, k, d, part if d == 0 else part[pack.reverse], cache, inp, pack)
                dinp = dinp if d == 0 else dinp[pack.reverse]
                d_in = dinp if d_in is None else d_in + dinp
            dH = d_in
        return pack.unpack(dH)

    return Y, backprop


class _Packing:
    """Where each position of each sequence is in the packed (n_tokens, width) layout."""

    def __init__(self, xp, lengths: List[int]) -> None:
        # each sequence's row in a step: its rank by length, longest first (ties in their order)
        rank = numpy.argsort(numpy.argsort(-numpy.asarray(lengths, dtype="int64"), kind="stable"))
        T = max(lengths, default=0)
        # step t is the rows starts[t] .. starts[t] + sizes[t]: sizes[t] sequences are longer than t
        ended = numpy.cumsum(numpy.bincount(numpy.asarray(lengths, dtype="int64"), minlength=T + 1))[:T]
        self.sizes: List[int] = (len(lengths) - ended).tolist()
        self.starts: List[int] = (numpy.cumsum(self.sizes) - self.sizes).tolist()
        self.n_rows = sum(lengths)
        self.n_steps = T
        self.n_seqs = self.sizes[0] if T else 0  # the non-empty sequences
        self.lengths = lengths
        starts = numpy.asarray(self.starts, dtype="int64")
        # the packed rows of each sequence's positions, sequences in their order; and the
        # permutation that reverses each sequence within its length
        seq_rows = [starts[:n] + rank[j] for j, n in enumerate(lengths)]
        self.rows = xp.asarray(numpy.concatenate(seq_rows) if seq_rows else numpy.zeros(0, "int64"))
        reverse = numpy.zeros(self.n_rows, dtype="int64")
        for seq in seq_rows:
            reverse[seq] = seq[::-1]
        self.reverse = xp.asarray(reverse)

    def step(self, t: int) -> slice:
        """The rows of step t."""
        return slice(self.starts[t], self.starts[t] + self.sizes[t])

    def before(self, t: int) -> slice:
        """The rows of step t - 1 of the sequences in step t (they are a prefix)."""
        return slice(self.starts[t - 1], self.starts[t - 1] + self.sizes[t])

    def unpack(self, H: Array) -> List[Array]:
        """The packed rows as a list of sequences, in their order."""
        out = H[self.rows]
        ends = numpy.cumsum(self.lengths)
        return [out[end - n : end] for n, end in zip(self.lengths, ends)]


def _param(model: Model, name: str, k: int, d: int) -> Array:
    return model.get_param(f"{name}{k}_{d}")


def _sigmoid(xp, z):
    return 0.5 * (xp.tanh(0.5 * z) + 1.0)


def _run(model: Model, k: int, d: int, X: Array, pack: _Packing) -> Tuple[Array, Cache]:
    xp = model.ops.xp
    W, U, b = (_param(model, p, k, d) for p in "WUb")
    nH = U.shape[1]
    Z = X @ W.T + b
    Hs = xp.zeros((X.shape[0], nH), dtype=Z.dtype)  # h_t of each packed row
    Cs = xp.zeros((X.shape[0], nH), dtype=Z.dtype)  # c_t
    G = xp.zeros((X.shape[0], 4 * nH), dtype=Z.dtype)  # gate activations
    for t in range(pack.n_steps):
        rows = pack.step(t)
        z = Z[rows] if t == 0 else Z[rows] + Hs[pack.before(t)] @ U.T
        g = G[rows]
        g[:, : 2 * nH] = _sigmoid(xp, z[:, : 2 * nH])
        g[:, 2 * nH : 3 * nH] = xp.tanh(z[:, 2 * nH : 3 * nH])
        g[:, 3 * nH :] = _sigmoid(xp, z[:, 3 * nH :])
        Cs[rows] = g[:, :nH] * g[:, 2 * nH : 3 * nH]
        if t:
            Cs[rows] += g[:, nH : 2 * nH] * Cs[pack.before(t)]
        Hs[rows] = g[:, 3 * nH :] * xp.tanh(Cs[rows])
    return Hs, (Hs, Cs, G)


def _run_backward(model: Model, k: int, d: int, dY: Array, cache: Cache, X: Array, pack: _Packing) -> Array:
    xp = model.ops.xp
    W, U, _ = (_param(model, p, k, d) for p in "WUb")
    Hs, Cs, G = cache
    nH = U.shape[1]
    dZ = xp.zeros((dY.shape[0], 4 * nH), dtype=G.dtype)
    H_prev = xp.zeros((dY.shape[0], nH), dtype=G.dtype)  # h_{t-1} of each packed row
    # the gradients into h_{t-1} and c_{t-1}; a sequence's rows stay zero until its last step
    dh_next = xp.zeros((pack.n_seqs, nH), dtype=G.dtype)
    dc_next = xp.zeros((pack.n_seqs, nH), dtype=G.dtype)
    for t in reversed(range(pack.n_steps)):
        rows = pack.step(t)
        size = pack.sizes[t]
        i, f, g, o = (G[rows, n * nH : (n + 1) * nH] for n in range(4))
        dh = dY[rows] + dh_next[:size]
        tc = xp.tanh(Cs[rows])
        dc = dh * o * (1.0 - tc * tc) + dc_next[:size]
        dz = dZ[rows]
        dz[:, :nH] = dc * g * i * (1.0 - i)
        dz[:, 2 * nH : 3 * nH] = dc * i * (1.0 - g * g)
        dz[:, 3 * nH :] = dh * tc * o * (1.0 - o)
        if t:
            dz[:, nH : 2 * nH] = dc * Cs[pack.before(t)] * f * (1.0 - f)
            H_prev[rows] = Hs[pack.before(t)]
        dc_next[:size] = dc * f
        dh_next[:size] = dz @ U
    model.inc_grad(f"W{k}_{d}", (dZ.T @ X).astype(W.dtype))
    model.inc_grad(f"U{k}_{d}", (dZ.T @ H_prev).astype(U.dtype))
    model.inc_grad(f"b{k}_{d}", dZ.sum(axis=0).astype(W.dtype))
    return dZ @ W
