from typing import Callable, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .auxiliary import init_heads
from .heads import predicting_head

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.WithInBatchScores.v1")
def with_in_batch_scores(*, comparison: Model[InT, Floats2d]) -> Model[InT, Floats2d]:
    """In training, append M[i, j] = score(A_i, B_j) of the batch to the comparison's k columns,
    (n, k + n), for an in-batch loss; at prediction the comparison's score, unchanged."""
    return Model(
        "with_in_batch_scores",
        forward,
        init=init_heads,
        layers=[comparison],
        refs={"comparison": comparison, "scorer": predicting_head(comparison, training=True)},
        dims={"nI": None, "nO": 1},
    )


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    comparison = model.get_ref("comparison")
    if not is_train:
        return comparison(X, is_train)
    xp = model.ops.xp
    Y, backprop_pairs = comparison(X, is_train)
    k = Y.shape[1]
    M, backprop_matrix = cross_scores(model.get_ref("scorer"), *X, is_train)

    def backprop(dY: Floats2d) -> InT:
        dA, dB = backprop_pairs(xp.ascontiguousarray(dY[:, :k]))
        dA_rep, dB_rep = backprop_matrix(xp.ascontiguousarray(dY[:, k:]))
        return dA + dA_rep, dB + dB_rep

    return xp.hstack([Y, M]), backprop


def cross_scores(scorer: Model[InT, Floats2d], A: Floats2d, B: Floats2d, is_train: bool) -> Tuple[Floats2d, Callable]:
    """M[i, j] = score(A_i, B_j) of a comparison's first score column, (len(A), len(B)), and its
    backprop dM -> (dA, dB). Shared by in-batch negatives and the triplet mining of labelled docs."""
    xp = scorer.ops.xp
    n, width = A.shape
    m = len(B)
    # row i * m + j holds (A_i, B_j)
    A_rep = xp.ascontiguousarray(xp.repeat(A, m, axis=0))
    B_rep = xp.ascontiguousarray(xp.tile(B, (n, 1)))
    S, backprop_scores = scorer((A_rep, B_rep), is_train)

    def backprop(dM: Floats2d) -> InT:
        dS = scorer.ops.alloc2f(*S.shape, dtype=S.dtype)
        dS[:, 0] = dM.reshape((-1,))  # type: ignore[call-overload]
        dA_rep, dB_rep = backprop_scores(dS)
        return dA_rep.reshape((n, m, width)).sum(axis=1), dB_rep.reshape((n, m, width)).sum(axis=0)

    return xp.ascontiguousarray(S[:, 0].reshape((n, m))), backprop
