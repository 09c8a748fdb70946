import warnings

import numpy
import pytest
from spacy.util import registry

from spacy_siamese.labelled import same_label_matrix
from spacy_siamese.losses import PairSquaredError, TripletLoss, make_triplet_loss

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
LABELS = [["a"], ["a"], ["b"], ["b", "c"], ["c"], ["a"]]


def reference_triplet_loss(M, positive, negative, loss):
    """The mined triplets' mean penalty by hand, anchor by anchor (rows of M), without weight."""
    if loss.form == "logistic":
        penalty = lambda x: numpy.log1p(numpy.exp(loss.scale * x))  # noqa: E731
    else:
        penalty = lambda x: max(0.0, loss.margin + x)  # noqa: E731
    values = []
    for a in range(len(M)):
        ps = [M[a, p] for p in range(M.shape[1]) if positive[a, p]]
        qs = [M[a, q] for q in range(M.shape[1]) if negative[a, q]]
        if loss.mining == "all":
            values += [penalty(q - p) for p in ps for q in qs]
        elif ps and qs:
            values.append(penalty(max(qs) - min(ps)))
    return sum(values) / len(values) if values else 0.0


@pytest.mark.parametrize("form", ["logistic", "margin"])
@pytest.mark.parametrize("mining", ["all", "hard"])
def test_triplet_loss_from_labels_value_and_gradient(form, mining):
    loss = TripletLoss(form=form, mining=mining, scale=3.0, margin=0.3, weight=2.0)
    M = rng.normal(size=(6, 6))
    M = (M + M.T) / 2
    same = same_label_matrix(LABELS)
    dM, value = loss.from_labels(M, same)
    positive = same & ~numpy.eye(6, dtype=bool)
    assert value == pytest.approx(2.0 * reference_triplet_loss(M, positive, ~same, loss), rel=1e-12)
    assert_grad_close(dM, numeric_grad(lambda: loss.from_labels(M, same)[1], M, 1e-6), rtol=1e-4, atol=1e-8)
    assert not numpy.diag(dM).any()  # a doc is never its own positive or negative


def test_triplet_loss_values():
    M = numpy.array([[1.0, 0.2, 0.5], [0.2, 1.0, 0.1], [0.5, 0.1, 1.0]])
    same = same_label_matrix([["x"], ["x"], ["y"]])
    # anchor 0: p=1, q=2 -> x = 0.3; anchor 1: p=0, q=2 -> x = -0.1
    margin = TripletLoss(form="margin", margin=0.2).from_labels(M, same)[1]
    assert margin == pytest.approx((0.5 + 0.1) / 2)
    logistic = TripletLoss(scale=1.0).from_labels(M, same)[1]
    assert logistic == pytest.approx((numpy.log1p(numpy.exp(0.3)) + numpy.log1p(numpy.exp(-0.1))) / 2)


@pytest.mark.parametrize("mining", ["all", "hard"])
def test_loss_falls_as_positives_outscore_negatives(mining):
    same = same_label_matrix(LABELS)
    M = rng.uniform(-0.5, 0.5, size=(6, 6))
    target = numpy.where(same, 1.0, -1.0)
    loss = TripletLoss(mining=mining, scale=3.0)
    values = [loss.from_labels(M + t * (target - M), same)[1] for t in (0.0, 0.5, 1.0)]
    assert values[0] > values[1] > values[2]


@pytest.mark.parametrize("mining", ["all", "hard"])
def test_one_class_or_no_shared_label_has_no_triplets(mining):
    M = rng.normal(size=(4, 4))
    for labels in (["a"] * 4, ["a", "b", "c", "d"]):
        dM, value = TripletLoss(mining=mining).from_labels(M, same_label_matrix([[x] for x in labels]))
        assert value == 0.0 and not dM.any()


@pytest.mark.parametrize("mining", ["all", "hard"])
def test_triplet_loss_from_labelled_pairs(mining):
    """The in-batch layout of WithInBatchScores: k pair columns, then M[i, j] = s(A_i, B_j)."""
    loss = TripletLoss(mining=mining, scale=2.0, weight=1.5)
    n = 4
    scores = rng.normal(size=(n, 1 + n))
    truths = numpy.array([1.0, 0.0, 1.0, 1.0])
    d, value = loss(scores, truths)
    M = scores[:, 1:]
    positive = numpy.diag(truths >= 0.5)  # the positive of A_i is B_i and the other way round
    negative = ~numpy.eye(n, dtype=bool)
    rows = reference_triplet_loss(M, positive, negative, loss)  # anchors A_i
    columns = reference_triplet_loss(M.T, positive, negative, loss)  # anchors B_i
    by_hand = (rows + columns) / 2
    assert value == pytest.approx(1.5 * by_hand, rel=1e-12)
    assert not d[:, 0].any()  # no pair loss by default
    assert_grad_close(d, numeric_grad(lambda: loss(scores, truths)[1], scores, 1e-6), rtol=1e-4, atol=1e-8)
    d, value = loss(scores, numpy.zeros(n))
    assert value == 0.0 and not d.any()
    with_pairs = TripletLoss(mining=mining, scale=2.0, weight=1.5, pair_loss=PairSquaredError())
    d_pairs, value_pairs = with_pairs(scores, truths)
    pair_d, pair_value = PairSquaredError()(scores[:, :1], truths)
    numpy.testing.assert_allclose(d_pairs[:, :1], pair_d)
    numpy.testing.assert_allclose(d_pairs[:, 1:], loss(scores, truths)[0][:, 1:])
    assert value_pairs == pytest.approx(pair_value + 1.5 * by_hand)


def test_triplet_loss_bad_settings_and_input():
    assert registry.losses.get("spacy-siamese.TripletLoss.v1") is make_triplet_loss
    with pytest.raises(ValueError, match="form must be"):
        TripletLoss(form="hinge")
    with pytest.raises(ValueError, match="mining must be"):
        TripletLoss(mining="semi")
    with pytest.raises(ValueError, match="scale > 0"):
        TripletLoss(scale=0)
    with pytest.raises(ValueError, match="WithInBatchScores"):
        TripletLoss()(numpy.zeros((3, 1)), numpy.ones(3))
    with pytest.raises(ValueError, match=r"\(n, n\)"):
        TripletLoss().from_labels(numpy.zeros((3, 2)), numpy.zeros((3, 2), dtype=bool))


@pytest.mark.parametrize("mining", ["all", "hard"])
def test_a_known_duplicate_in_the_batch_is_not_a_negative(mining):
    """Pairs (q1, d) and (q2, d): B_1 is d, the positive of q1, and q2 a labelled duplicate of d.
    Without the texts, a perfect scorer still had a loss, pushing the duplicates' scores down."""
    M = numpy.array([[0.9, 0.9, 0.1], [0.9, 0.9, 0.1], [0.1, 0.1, 0.9]])
    scores = numpy.hstack([numpy.diag(M)[:, None], M])
    truths = numpy.ones(3)
    loss = TripletLoss(form="margin", margin=0.2, mining=mining)
    d_blind, value_blind = loss(scores, truths)
    assert value_blind > 0 and d_blind[1, 1 + 0] > 0
    batch = loss.for_texts(["q1", "q2", "r"], ["d", "d", "s"])
    d, value = batch(scores, truths)
    assert value == 0.0 and not d.any()
    logistic = TripletLoss(scale=3.0, mining=mining).for_texts(["q1", "q2", "r", "t"], ["d", "d", "s", "q1"])
    scores = rng.normal(size=(4, 1 + 4))
    truths = numpy.array([1.0, 1.0, 0.0, 1.0])
    d, _ = logistic(scores, truths)
    assert_grad_close(d, numeric_grad(lambda: logistic(scores, truths)[1], scores, 1e-6), rtol=1e-4, atol=1e-8)


def test_bad_labels_are_named():
    """A nan label was silently no duplicate."""
    with pytest.raises(ValueError, match="TripletLoss: a pair label must be a finite number in \\[0, 1\\], got nan"):
        TripletLoss()(numpy.zeros((2, 3)), numpy.array([numpy.nan, 1.0]))
    with pytest.raises(ValueError, match="TripletLoss: need one label for each of the 3 pairs"):
        TripletLoss()(numpy.zeros((3, 4)), numpy.ones(2))


def test_huge_scores_give_no_overflow_warning():
    """Unbounded scores (inner products) overflowed exp in the gradient, with a RuntimeWarning."""
    scores = numpy.array([[0.0, 1000.0, -1000.0], [0.0, -1000.0, 1000.0]])  # well ordered by far
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d, value = TripletLoss(scale=1.0)(scores, numpy.ones(2))
    assert value == pytest.approx(0.0, abs=1e-12) and numpy.isfinite(d).all()
