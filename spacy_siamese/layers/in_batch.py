from typing import Callable, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..validation import score_range
from .auxiliary import init_heads

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.WithInBatchScores.v1")
def with_in_batch_scores(*, comparison: Model[InT, Floats2d]) -> Model[InT, Floats2d]:
    """Add the scores of every side A against every side B of the batch to a comparison's
    training output, for an in-batch negatives loss (`spacy-siamese.InBatchNegatives.v1`).

    In training the output of n pairs is (n, k + n): the comparison's own k training columns
    (k = 2 with WithAuxiliary), then the n x n matrix M[i, j] = score(A_i, B_j) of its
    predicting head (the `main` head of a combinator that has one), in training mode. At
    prediction the output is the comparison's (n_pairs, 1) score, unchanged.
    """
    scorer = comparison.get_ref("main") if comparison.has_ref("main") else comparison
    return Model(
        "with_in_batch_scores",
        forward,
        init=init_heads,
        layers=[comparison],
        refs={"comparison": comparison, "scorer": scorer},
        dims={"nI": None, "nO": 1},
        attrs={"score_range": score_range(comparison)},
    )


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    comparison = model.get_ref("comparison")
    if not is_train:
        return comparison(X, is_train)
    xp = model.ops.xp
    A, B = X
    n, width = A.shape
    Y, backprop_pairs = comparison(X, is_train)
    k = Y.shape[1]
    # row i * n + j holds (A_i, B_j)
    A_rep = xp.ascontiguousarray(xp.repeat(A, n, axis=0))
    B_rep = xp.ascontiguousarray(xp.tile(B, (n, 1)))
    M, backprop_matrix = model.get_ref("scorer")((A_rep, B_rep), is_train)
    n_cols = M.shape[1]

    def backprop(dY: Floats2d) -> InT:
        dA, dB = backprop_pairs(xp.ascontiguousarray(dY[:, :k]))
        dM = model.ops.alloc2f(n * n, n_cols)
        dM[:, 0] = dY[:, k:].reshape((-1,))  # type: ignore[call-overload]
        dA_rep, dB_rep = backprop_matrix(dM)
        dA = dA + dA_rep.reshape(n, n, width).sum(axis=1)
        dB = dB + dB_rep.reshape(n, n, width).sum(axis=0)
        return dA, dB

    return xp.hstack([Y, M[:, 0].reshape(n, n)]), backprop
