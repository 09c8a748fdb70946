"""Squared error on graded pair scores: SquaredError.v1."""

from typing import Tuple

from thinc.api import registry
from thinc.types import Floats1d, Floats2d

from ._util import check_truths


class PairSquaredError:
    """Mean squared error against graded labels, summed over the score columns.

    Scores: (n, k), one column per head.
    Labels: n values in [0, 1], e.g. STS or SICK relatedness rescaled to [0, 1].

        loss = 1/n * sum_ic (s_ic - y_i)^2,    d_scores = 2 (s - y) / n

    Returns (d_scores, loss).
    """

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        y = check_truths(truths, len(scores), "SquaredError").astype(scores.dtype)[:, None]
        diff = scores - y
        n = max(len(y), 1)
        return (2 * diff / n).astype(scores.dtype), float((diff * diff).sum() / n)


@registry.losses("spacy-siamese.SquaredError.v1")
def make_squared_error() -> PairSquaredError:
    """Squared error (PairSquaredError) for graded similarity labels.

    Use it when the labels are degrees of similarity rather than 0/1 and the score itself
    should match them (STS, SICK, the 20news hierarchy); for 0/1 labels use LogLoss.v2.

        [components.siamese_similarity.loss]
        @losses = "spacy-siamese.SquaredError.v1"
    """
    return PairSquaredError()
