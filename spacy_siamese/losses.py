"""Pair losses. Each returns (d_scores, loss) for scores of shape (n, 1)."""

from typing import Any, Callable, Optional, Tuple

import numpy
from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d


class PairLogLoss:
    """Binary cross-entropy on similarity scores in [0, 1] (0/1 labels), summed over the score
    columns (one per head, see WithAuxiliary.v1). `label_smoothing` moves the targets from
    0 and 1 to ls / 2 and 1 - ls / 2. With `distill` > 0 and two heads, the first (main) head's
    target mixes in the second head's score, held constant: (1 - distill) * label + distill * p_aux
    (online distillation)."""

    def __init__(self, eps: float = 1e-5, label_smoothing: float = 0.0, distill: float = 0.0):
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(f"LogLoss: label_smoothing must be in [0, 1), got {label_smoothing}")
        if not 0.0 <= distill <= 1.0:
            raise ValueError(f"LogLoss: distill must be in [0, 1], got {distill}")
        self.eps = eps
        self.label_smoothing = label_smoothing
        self.distill = distill

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        p = xp.clip(scores, self.eps, 1.0 - self.eps)
        y = xp.asarray(truths, dtype=p.dtype)[:, None] * xp.ones_like(p)
        y = y * (1.0 - self.label_smoothing) + self.label_smoothing / 2
        if self.distill > 0 and p.shape[1] > 1:
            y[:, 0] = (1.0 - self.distill) * y[:, 0] + self.distill * p[:, 1]
        n = max(len(y), 1)
        loss = -(y * xp.log(p) + (1 - y) * xp.log(1 - p)).sum() / n
        d = (p - y) / (p * (1 - p)) / n
        return d.astype(scores.dtype), float(loss)


class PairSquaredError:
    """Mean squared error against graded labels in [0, 1], summed over the score columns."""

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        y = get_array_module(scores).asarray(truths, dtype=scores.dtype)[:, None]
        diff = scores - y
        n = max(len(y), 1)
        return (2 * diff / n).astype(scores.dtype), float((diff * diff).sum() / n)


@registry.losses("spacy-siamese.LogLoss.v2")
def make_log_loss(*, eps: float = 1e-5, label_smoothing: float = 0.0, distill: float = 0.0) -> PairLogLoss:
    """Binary cross-entropy on the pair scores, with optional label smoothing and distillation."""
    return PairLogLoss(eps=eps, label_smoothing=label_smoothing, distill=distill)


@registry.losses("spacy-siamese.LogLoss.v1")
def make_log_loss_v1(*, eps: float = 1e-5, label_smoothing: float = 0.0, distill: float = 0.0) -> PairLogLoss:
    """The same loss as LogLoss.v2: kept for pipelines trained with it."""
    return PairLogLoss(eps=eps, label_smoothing=label_smoothing, distill=distill)


@registry.losses("spacy-siamese.SquaredError.v1")
def make_squared_error() -> PairSquaredError:
    """Mean squared error against graded labels in [0, 1]."""
    return PairSquaredError()


class PairwiseLogisticLoss:
    """Pairwise logistic (RankNet-style) loss of S2Net: for every two pairs i, j in the
    batch with label_i > label_j, delta = score_i - score_j and the loss is
    log(1 + exp(-gamma * delta)), averaged over those (i, j). 0 when no such (i, j)."""

    def __init__(self, gamma: float = 10.0):
        self.gamma = gamma

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        if scores.shape[1] != 1:
            raise ValueError(
                f"PairwiseLogisticLoss takes one score column, got {scores.shape[1]} "
                "(an auxiliary head needs LogLoss.v2 or SquaredError.v1)"
            )
        xp = get_array_module(scores)
        s = xp.asarray(scores[:, 0], dtype="float64")
        y = xp.asarray(truths, dtype="float64")
        ordered = y[:, None] > y[None, :]  # (i, j): pair i should score above pair j
        m = int(ordered.sum())
        if m == 0:
            return xp.zeros_like(scores), 0.0
        z = -self.gamma * (s[:, None] - s[None, :])
        loss = float(xp.logaddexp(0.0, z)[ordered].sum() / m)
        # d/d delta of log(1 + exp(-gamma delta)) = -gamma * sigmoid(z)
        g = xp.where(ordered, -self.gamma / (1.0 + xp.exp(-z)), 0.0) / m
        d = g.sum(axis=1) - g.sum(axis=0)
        return d[:, None].astype(scores.dtype), loss


@registry.losses("spacy-siamese.PairwiseLogisticLoss.v1")
def make_pairwise_logistic_loss(*, gamma: float = 10.0) -> PairwiseLogisticLoss:
    """S2Net's pairwise logistic loss over the pairs of a batch with different labels."""
    return PairwiseLogisticLoss(gamma=gamma)


class InBatchNegativesLoss:
    """Multiple-negatives ranking loss over a batch, plus a pair loss (multi-task). Takes the
    training output of `spacy-siamese.WithInBatchScores.v1`: n rows, the comparison's k pair
    score columns, then the n x n matrix M[i, j] = score(A_i, B_j).

    The pair loss (default: LogLoss.v2) sees the k pair columns. For each labelled duplicate
    pair i, a softmax cross-entropy over row i (B_i against every other B_j of the batch) and
    over column i (A_i against every other A_j), on logits z = scale * M ("scaled") or
    z = scale * logit(M) ("logit"; for Cauchy logit(s) = -log d, a negative log distance).
    The sides of labelled non-duplicates take part as further negatives. The ranking part is
    averaged over the duplicate pairs and both directions and weighted by `weight`.
    """

    def __init__(
        self,
        pair_loss: Optional[Callable] = None,
        *,
        scale: float = 20.0,
        logits: str = "scaled",
        weight: float = 1.0,
        eps: float = 1e-6,
    ) -> None:
        if logits not in LOGITS:
            raise ValueError(f"InBatchNegatives: logits must be one of {', '.join(LOGITS)}, got {logits!r}")
        if scale <= 0 or weight < 0:
            raise ValueError(f"InBatchNegatives: need scale > 0 and weight >= 0, got {scale} and {weight}")
        self.pair_loss = pair_loss if pair_loss is not None else PairLogLoss()
        self.scale = scale
        self.logits = logits
        self.weight = weight
        self.eps = eps

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        pair_scores, M = in_batch_columns(scores, len(truths), "InBatchNegatives")
        d_pair, loss = self.pair_loss(pair_scores, truths)
        dZ, rank_loss = ranking_loss(self.logit_map(M), xp.asarray(truths) >= 0.5)
        d_matrix = self.weight * dZ * self.logit_grad(M)
        d = xp.hstack([xp.asarray(d_pair, dtype="float64"), d_matrix])
        return d.astype(scores.dtype), float(loss) + self.weight * rank_loss

    def logit_map(self, M: Floats2d) -> Floats2d:
        xp = get_array_module(M)
        M = xp.asarray(M, dtype="float64")
        if self.logits == "scaled":
            return self.scale * M
        s = xp.clip(M, self.eps, 1.0 - self.eps)
        return self.scale * (xp.log(s) - xp.log1p(-s))

    def logit_grad(self, M: Floats2d) -> Floats2d:
        xp = get_array_module(M)
        M = xp.asarray(M, dtype="float64")
        if self.logits == "scaled":
            return xp.full_like(M, self.scale)
        inside = (M > self.eps) & (M < 1.0 - self.eps)
        s = xp.clip(M, self.eps, 1.0 - self.eps)
        return self.scale * inside / (s * (1.0 - s))


LOGITS = ("scaled", "logit")


def in_batch_columns(scores: Floats2d, n: int, loss: str, hint: str = "") -> Tuple[Floats2d, Floats2d]:
    """Split the training output of `spacy-siamese.WithInBatchScores.v1` for n pairs into the
    comparison's pair score columns and the n x n in-batch score matrix."""
    k = scores.shape[1] - n
    if k < 1:
        raise ValueError(
            f"{loss}: got {scores.shape[1]} score columns for {n} pairs; the comparison must be wrapped "
            f"in spacy-siamese.WithInBatchScores.v1{hint}"
        )
    xp = get_array_module(scores)
    return xp.ascontiguousarray(scores[:, :k]), scores[:, k:]


def ranking_loss(Z: Floats2d, positive: numpy.ndarray) -> Tuple[Floats2d, float]:
    """Symmetric softmax cross-entropy with targets on the diagonal, over the rows and the
    columns of the positive pairs, averaged over 2 * n_positive; (dZ, loss)."""
    xp = get_array_module(Z)
    m = int(positive.sum())
    if m == 0:
        return xp.zeros_like(Z), 0.0
    eye = xp.eye(len(Z), dtype=Z.dtype)
    log_rows = Z - xp.logaddexp.reduce(Z, axis=1, keepdims=True)
    log_cols = Z - xp.logaddexp.reduce(Z, axis=0, keepdims=True)
    diag = xp.arange(len(Z))
    loss = -(log_rows[diag, diag][positive].sum() + log_cols[diag, diag][positive].sum()) / (2 * m)
    d_rows = (xp.exp(log_rows) - eye) * positive[:, None]
    d_cols = (xp.exp(log_cols) - eye) * positive[None, :]
    return (d_rows + d_cols) / (2 * m), float(loss)


@registry.losses("spacy-siamese.InBatchNegatives.v1")
def make_in_batch_negatives(
    *,
    pair_loss: Optional[Callable] = None,
    scale: float = 20.0,
    logits: str = "scaled",
    weight: float = 1.0,
    eps: float = 1e-6,
) -> InBatchNegativesLoss:
    """In-batch negatives (multiple-negatives ranking, symmetric) plus a pair loss, for a
    comparison wrapped in WithInBatchScores.v1."""
    return InBatchNegativesLoss(pair_loss, scale=scale, logits=logits, weight=weight, eps=eps)


TRIPLET_FORMS = ("logistic", "margin")
MINING = ("all", "hard")


class TripletLoss:
    """Triplet loss with in-batch mining: for an anchor a, a positive p (similar to a) and a
    negative q (not), a penalty on x = s(a, q) - s(a, p): `form="logistic"`,
    log(1 + exp(scale * x)) (Tajima et al. 2016 with scale 1 and inner products), or
    `form="margin"`, max(0, margin + x). `mining="all"` averages over every valid triplet
    of the batch, `mining="hard"` over the anchors, each with its hardest positive (lowest
    score) and hardest negative (highest score). The loss is scaled by `weight` (alpha).

    From labelled docs (`from_labels`, called by the pipe for `spacy-siamese.LabelledDocuments.v1`
    examples): the triplets of the batch's score matrix M[i, j] = s(doc_i, doc_j), positives
    sharing a label with the anchor. From labelled pairs (`__call__`): the output of
    `spacy-siamese.WithInBatchScores.v1`, as for InBatchNegatives.v1; for each duplicate pair
    (A_i, B_i), B_i is the positive of anchor A_i and every other B_j of the batch a negative
    (and the same with the sides swapped); `pair_loss`, if given, trains the pair columns too.
    A batch without a triplet has loss 0 and a zero gradient.
    """

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
        """(dM, loss) for the (n, n) score matrix of n labelled docs; `same[i, j]`: docs i and j
        share a label."""
        xp = get_array_module(M)
        if M.ndim != 2 or M.shape[0] != M.shape[1] or same.shape != M.shape:
            raise ValueError(f"TripletLoss: need an (n, n) score matrix and label matrix, got {M.shape}, {same.shape}")
        same = xp.asarray(same, dtype=bool)
        eye = xp.eye(len(M), dtype=bool)
        dM, loss = self.mine(M, same & ~eye, ~same)
        return (self.weight * dM).astype(M.dtype), self.weight * loss

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        xp = get_array_module(scores)
        n = len(truths)
        pair_scores, M = in_batch_columns(scores, n, "TripletLoss", " (or train on labelled docs)")
        d_pair, loss = xp.zeros(pair_scores.shape), 0.0
        if self.pair_loss is not None:
            d_pair, loss = self.pair_loss(pair_scores, truths)
        M = xp.asarray(M, dtype="float64")
        eye = xp.eye(n, dtype=bool)
        positive = eye & (xp.asarray(truths) >= 0.5)[:, None]
        d_rows, loss_rows = self.mine(M, positive, ~eye)
        d_cols, loss_cols = self.mine(xp.ascontiguousarray(M.T), positive, ~eye)
        d_matrix = self.weight * (d_rows + d_cols.T) / 2
        d = xp.hstack([xp.asarray(d_pair, dtype="float64"), d_matrix])
        return d.astype(scores.dtype), float(loss) + self.weight * (loss_rows + loss_cols) / 2

    def mine(self, M: Floats2d, positive: numpy.ndarray, negative: numpy.ndarray) -> Tuple[Floats2d, float]:
        """(dM, loss) of the triplets (a, p, q) with positive[a, p] and negative[a, q], on rows
        a of the score matrix M; `mining` picks them, without `weight`."""
        if self.mining == "all":
            return batch_all_triplets(M, positive, negative, self.penalty)
        return batch_hard_triplets(M, positive, negative, self.penalty)

    def penalty(self, x: Any) -> Tuple[Any, Any]:
        """The penalty of x = s(a, q) - s(a, p) and its derivative."""
        xp = get_array_module(x)
        if self.form == "logistic":
            z = self.scale * x
            return xp.logaddexp(0.0, z), self.scale / (1.0 + xp.exp(-z))
        return xp.maximum(0.0, self.margin + x), (self.margin + x > 0).astype(x.dtype)


Penalty = Callable[[Any], Tuple[Any, Any]]


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
    X = M[anchors] - M[anchors, positives][:, None]
    value, slope = penalty(X)
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


@registry.losses("spacy-siamese.TripletLoss.v1")
def make_triplet_loss(
    *,
    form: str = "logistic",
    mining: str = "all",
    margin: float = 0.2,
    scale: float = 1.0,
    weight: float = 1.0,
    pair_loss: Optional[Callable] = None,
) -> TripletLoss:
    """Triplet loss (logistic or margin form) with batch-all or batch-hard mining, for any encoder
    and comparison: from labelled docs (LabelledDocuments.v1), or from labelled pairs with the
    comparison wrapped in WithInBatchScores.v1."""
    return TripletLoss(form=form, mining=mining, margin=margin, scale=scale, weight=weight, pair_loss=pair_loss)
