from typing import Tuple

from thinc.api import registry
from thinc.types import Floats1d, Floats2d

from ._util import check_truths


@registry.losses("spacy-siamese.SquaredError.v1")
class PairSquaredError:
    """Mean squared error against graded labels in [0, 1], summed over the score columns: 1/n sum_ic (s_ic - y_i)^2."""

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        y = check_truths(truths, len(scores), "SquaredError").astype(scores.dtype)[:, None]
        diff = scores - y
        n = max(len(y), 1)
        return (2 * diff / n).astype(scores.dtype), float((diff * diff).sum() / n)


make_squared_error = PairSquaredError  # the builder of the registered name
