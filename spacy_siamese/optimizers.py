"""spacy-siamese.LazyAdam.v1: thinc's Adam, updating only the rows of an embedding table that a
batch touched (the lazy Adam of TensorFlow's LazyAdam and torch's SparseAdam)."""

from typing import Any, Sequence, Tuple

from thinc.api import Optimizer, registry
from thinc.backends import get_array_ops
from thinc.optimizers import ADAM_DEFAULTS, FloatOrSeq
from thinc.types import FloatsXd


@registry.optimizers("spacy-siamese.LazyAdam.v1")
def make_lazy_adam(
    *,
    learn_rate: FloatOrSeq = ADAM_DEFAULTS["learn_rate"],
    L2: FloatOrSeq = ADAM_DEFAULTS["L2"],
    beta1: FloatOrSeq = ADAM_DEFAULTS["beta1"],
    beta2: FloatOrSeq = ADAM_DEFAULTS["beta2"],
    eps: FloatOrSeq = ADAM_DEFAULTS["eps"],
    grad_clip: FloatOrSeq = ADAM_DEFAULTS["grad_clip"],
    L2_is_weight_decay: bool = True,
    use_averages: bool = True,
    tables: Sequence[str] = ("E",),
) -> Optimizer:
    """Thinc's `Adam.v1` with the same settings, except for the 2-d params named in `tables` (thinc's
    and spacy-siamese's embedding tables are `E`): there a row whose gradient is zero keeps its
    weights and moments, so a step costs the rows a batch uses, not the whole table. With L2 on,
    every row decays at every step, so every param takes thinc's dense update."""
    return LazyAdam(
        learn_rate,
        L2=L2,
        beta1=beta1,
        beta2=beta2,
        eps=eps,
        grad_clip=grad_clip,
        L2_is_weight_decay=L2_is_weight_decay,
        use_averages=use_averages,
        tables=tables,
    )


class LazyAdam(Optimizer):
    """thinc's `Optimizer` (Adam), with a lazy update of the params named in `tables`."""

    def __init__(self, learn_rate: FloatOrSeq, *, tables: Sequence[str] = ("E",), **settings: Any) -> None:
        super().__init__(learn_rate, **settings)
        self.tables = tuple(tables)

    def __call__(
        self, key: Tuple[int, str], weights: FloatsXd, gradient: FloatsXd, *, lr_scale: float = 1.0
    ) -> Tuple[FloatsXd, FloatsXd]:
        lazy = key[1] in self.tables and weights.ndim == 2 and len(gradient) > 0 and self.L2 == 0
        if not lazy or self.use_radam or not (self.b1 > 0.0 and self.b2 > 0.0):
            return super().__call__(key, weights, gradient, lr_scale=lr_scale)
        ops = get_array_ops(weights)
        self.nr_update[key] += 1
        nr_upd = self.nr_update[key]
        if self.grad_clip:  # the norm of the touched rows is the whole gradient's
            gradient = ops.clip_gradient(gradient, self.grad_clip)
        if key not in self.mom1:
            self.mom1[key] = ops.alloc1f(weights.size)
            self.mom2[key] = ops.alloc1f(weights.size)
        mom1 = self.mom1[key].reshape(weights.shape)
        mom2 = self.mom2[key].reshape(weights.shape)
        rows = ops.xp.flatnonzero(gradient.any(axis=1))
        lr = self.learn_rate * (1.0 - self.b2**nr_upd) ** 0.5 / (1.0 - self.b1**nr_upd)
        W, _, m1, m2 = ops.adam(
            ops.xp.ascontiguousarray(weights[rows]).ravel(),
            ops.xp.ascontiguousarray(gradient[rows]).ravel(),
            ops.xp.ascontiguousarray(mom1[rows]).ravel(),
            ops.xp.ascontiguousarray(mom2[rows]).ravel(),
            self.b1,
            self.b2,
            self.eps,
            lr * lr_scale,
        )
        width = weights.shape[1]
        weights[rows] = W.reshape((-1, width))
        mom1[rows] = m1.reshape((-1, width))
        mom2[rows] = m2.reshape((-1, width))
        gradient[rows] = 0
        if self.averages is not None:
            if key not in self.averages:
                self.averages[key] = ops.alloc(weights.shape, dtype="float32")
            ops.update_averages(self.averages[key], weights, nr_upd)
        return weights, gradient
