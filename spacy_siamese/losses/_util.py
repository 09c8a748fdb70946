"""Helpers shared by the in-batch losses (InBatchNegatives.v1, TripletLoss.v1)."""

from typing import Tuple

from thinc.api import get_array_module
from thinc.types import Floats2d


def in_batch_columns(scores: Floats2d, n: int, loss: str, hint: str = "") -> Tuple[Floats2d, Floats2d]:
    """Split the training output of `spacy-siamese.WithInBatchScores.v1` for n pairs into the
    comparison's pair score columns (n, k) and the (n, n) in-batch score matrix."""
    k = scores.shape[1] - n
    if k < 1:
        raise ValueError(
            f"{loss}: got {scores.shape[1]} score columns for {n} pairs; the comparison must be wrapped "
            f"in spacy-siamese.WithInBatchScores.v1{hint}"
        )
    xp = get_array_module(scores)
    return xp.ascontiguousarray(scores[:, :k]), scores[:, k:]
