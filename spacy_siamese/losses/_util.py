from typing import Any, Callable, Sequence, Tuple

import numpy
from thinc.api import get_array_module
from thinc.types import Floats1d, Floats2d

from ..util import component_labels, distinct_pair_texts, pair_rows

Loss = Callable[[Floats2d, Floats1d], Tuple[Floats2d, float]]  # (scores, labels) -> (d_scores, loss)


def check_truths(truths: Floats1d, n: int, loss: str) -> Any:
    """The labels of a batch of n pairs as float64; raise unless there are n, each finite in [0, 1]."""
    xp = get_array_module(truths)
    y = xp.asarray(truths, dtype="float64")
    if y.ndim != 1 or len(y) != n:
        raise ValueError(
            f"{loss}: need one label for each of the {n} pairs of the batch, got labels of shape {y.shape}"
        )
    bad = ~(xp.isfinite(y) & (y >= 0.0) & (y <= 1.0))
    if bad.any():
        i = int(bad.argmax())
        raise ValueError(f"{loss}: a pair label must be a finite number in [0, 1], got {float(y[i])} (label {i})")
    return y


def in_batch_columns(scores: Floats2d, n: int, loss: str, hint: str = "") -> Tuple[Floats2d, Floats2d]:
    """Split WithInBatchScores.v1's training output for n pairs: the pair score columns (n, k), the (n, n) matrix."""
    k = scores.shape[1] - n
    if k < 1:
        raise ValueError(
            f"{loss}: got {scores.shape[1]} score columns for {n} pairs; the comparison must be wrapped "
            f"in spacy-siamese.WithInBatchScores.v1{hint}"
        )
    return get_array_module(scores).ascontiguousarray(scores[:, :k]), scores[:, k:]


def known_duplicates(texts_a: Sequence[str], texts_b: Sequence[str], positive: Any) -> numpy.ndarray:
    """(n, n) bools, True at [i, j] (i != j) when A_i and B_j are the same text or joined by the
    batch's duplicate pairs: in-batch "negatives" known to be positives."""
    flags = numpy.asarray(positive.tolist(), dtype=bool)
    if not len(texts_a) == len(texts_b) == len(flags):
        raise ValueError(f"Got {len(texts_a)} and {len(texts_b)} texts for a batch of {len(flags)} pairs")
    pairs = list(zip(texts_a, texts_b))
    texts = distinct_pair_texts(pairs)  # the nodes of the graph of duplicate pairs
    a, b = pair_rows(texts, pairs)
    component = component_labels(len(texts), a[flags], b[flags])
    known = component[a][:, None] == component[b][None, :]
    numpy.fill_diagonal(known, False)
    return known


def softplus_sigmoid(xp: Any, z: Any) -> Tuple[Any, Any]:
    """log(1 + exp(z)) and its derivative sigmoid(z) as exp(z - softplus(z)), which cannot overflow for a large |z|."""
    softplus = xp.logaddexp(0.0, z)
    return softplus, xp.exp(z - softplus)
