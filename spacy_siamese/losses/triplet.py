from functools import partial
from typing import Any, Callable, Optional, Sequence, Tuple

import numpy
from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d

from ._util import Loss, check_truths, in_batch_columns, known_duplicates, softplus_sigmoid

TRIPLET_FORMS = ("logistic", "margin")
MINING = ("all", "hard")
Penalty = Callable[[Any], Tuple[Any, Any]]


@registry.losses("spacy-siamese.TripletLoss.v1")
class TripletLoss:
    """Triplet loss with in-batch mining. With x = s(a, q) - s(a, p) for anchor a, positive p
    and negative q, the penalty is log(1 + exp(scale * x)) ("logistic", Tajima et al. 2016) or
    max(0, margin + x) ("margin"), averaged over every triplet (`mining="all"`) or over each
    anchor's hardest positive and negative ("hard", Hermans et al. 2017), times `weight`.

    From labelled docs (`from_labels`; LabelledDocuments.v1, batch_by_labels.v1): positives share
    a label with the anchor. From pairs (`__call__`, scores (n, k + n) as for InBatchNegatives.v1):
    B_i is A_i's positive and every other B_j a negative, both directions averaged; a known
    duplicate (`for_texts`) is no negative; `pair_loss`, if given, trains the k pair columns."""

    uses_in_batch_scores = True  # on pairs, takes WithInBatchScores.v1's in-batch columns (DatasetLosses.v1)

    def __init__(
        self,
        *,
        form: str = "logistic",
        mining: str = "all",
        margin: float = 0.2,
        scale: float = 1.0,
        weight: float = 1.0,
        pair_loss: Optional[Callable] = None,
    ) -> None:
        if form not in TRIPLET_FORMS:
            raise ValueError(f"TripletLoss: form must be one of {', '.join(TRIPLET_FORMS)}, got {form!r}")
        if mining not in MINING:
            raise ValueError(f"TripletLoss: mining must be one of {', '.join(MINING)}, got {mining!r}")
        if scale <= 0 or weight < 0 or margin < 0:
            raise ValueError(f"TripletLoss: need scale > 0, weight >= 0, margin >= 0, got {scale}, {weight}, {margin}")
        self.form = form
        self.mining = mining
        self.margin = margin
        self.scale = scale
        self.weight = weight
        self.pair_loss = pair_loss

    def from_labels(self, M: Floats2d, same: numpy.ndarray) -> Tuple[Floats2d, float]:
        """(dM, loss) for the (n, n) score matrix of n labelled docs; `same[i, j]`: docs i and j share a label."""
        xp = get_array_module(M)
        if M.ndim != 2 or M.shape[0] != M.shape[1] or same.shape != M.shape:
            raise ValueError(f"TripletLoss: need an (n, n) score matrix and label matrix, got {M.shape}, {same.shape}")
        same = xp.asarray(same, dtype=bool)
        dM, loss = self.mine(M, same & ~xp.eye(len(M), dtype=bool), ~same)
        return (self.weight * dM).astype(M.dtype), self.weight * loss

    def __call__(
        self, scores: Floats2d, truths: Floats1d, texts: Optional[Tuple[Sequence[str], Sequence[str]]] = None
    ) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        n = len(scores)
        y = check_truths(truths, n, "TripletLoss")
        pair_scores, M = in_batch_columns(scores, n, "TripletLoss", " (or train on labelled docs)")
        d_pair, loss = xp.zeros(pair_scores.shape), 0.0
        if self.pair_loss is not None:
            d_pair, loss = self.pair_loss(pair_scores, truths)
        eye = xp.eye(n, dtype=bool)
        positive = eye & (y >= 0.5)[:, None]
        negative = ~eye
        if texts is not None:
            negative = negative & ~xp.asarray(known_duplicates(*texts, y >= 0.5))
        d_rows, loss_rows = self.mine(M, positive, negative)
        d_cols, loss_cols = self.mine(xp.ascontiguousarray(M.T), positive, xp.ascontiguousarray(negative.T))
        d = xp.hstack([xp.asarray(d_pair, dtype="float64"), self.weight * (d_rows + d_cols.T) / 2])
        return d.astype(scores.dtype), float(loss) + self.weight * (loss_rows + loss_cols) / 2

    def for_texts(self, texts_a: Sequence[str], texts_b: Sequence[str]) -> Loss:
        """The loss of a batch of labelled pairs with these texts: known duplicates are no negatives."""
        return partial(self, texts=(texts_a, texts_b))

    def mine(self, M: Floats2d, positive: numpy.ndarray, negative: numpy.ndarray) -> Tuple[Floats2d, float]:
        """(dM, loss) of the triplets (a, p, q) with positive[a, p] and negative[a, q], on rows
        a of the score matrix M; `mining` picks them, without `weight`."""
        mine = batch_all_triplets if self.mining == "all" else batch_hard_triplets
        return mine(M, positive, negative, self.penalty)

    def penalty(self, x: Any) -> Tuple[Any, Any]:
        """The penalty of x = s(a, q) - s(a, p) and its derivative."""
        xp = get_array_module(x)
        if self.form == "logistic":
            value, sigmoid = softplus_sigmoid(xp, self.scale * x)
            return value, self.scale * sigmoid
        return xp.maximum(0.0, self.margin + x), (self.margin + x > 0).astype(x.dtype)


def batch_all_triplets(M: Any, positive: Any, negative: Any, penalty: Penalty) -> Tuple[Floats2d, float]:
    """Mean penalty over every (a, p, q) with positive[a, p] and negative[a, q]; (dM, loss)."""
    xp = get_array_module(M)
    M = xp.asarray(M, dtype="float64")
    dM = xp.zeros_like(M)
    anchors, positives = xp.nonzero(positive)
    valid = negative[anchors]  # (n_positive_pairs, n_columns): the negatives of each (a, p)
    count = int(valid.sum())
    if count == 0:
        return dM, 0.0
    value, slope = penalty(M[anchors] - M[anchors, positives][:, None])
    loss = float((value * valid).sum() / count)
    G = slope * valid / count
    xp.add.at(dM, anchors, G)
    xp.add.at(dM, (anchors, positives), -G.sum(axis=1))
    return dM, loss


def batch_hard_triplets(M: Any, positive: Any, negative: Any, penalty: Penalty) -> Tuple[Floats2d, float]:
    """Mean penalty over the anchors with a positive and a negative, each with its lowest-scoring
    positive and highest-scoring negative (Hermans et al. 2017); (dM, loss)."""
    xp = get_array_module(M)
    M = xp.asarray(M, dtype="float64")
    dM = xp.zeros_like(M)
    anchors = xp.nonzero(positive.any(axis=1) & negative.any(axis=1))[0]
    if not len(anchors):
        return dM, 0.0
    hardest_p = xp.where(positive[anchors], M[anchors], xp.inf).argmin(axis=1)
    hardest_q = xp.where(negative[anchors], M[anchors], -xp.inf).argmax(axis=1)
    value, slope = penalty(M[anchors, hardest_q] - M[anchors, hardest_p])
    k = len(anchors)
    xp.add.at(dM, (anchors, hardest_q), slope / k)
    xp.add.at(dM, (anchors, hardest_p), -slope / k)
    return dM, float(value.sum() / k)


make_triplet_loss = TripletLoss  # the builder of the registered name
