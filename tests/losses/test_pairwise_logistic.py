import warnings

import numpy
import pytest

from spacy_siamese.losses import PairwiseLogisticLoss

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
TRUTHS = numpy.array([1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0])


def reference_pairwise_loss(scores, truths, gamma):
    """Mean of log(1 + exp(-gamma * (s_i - s_j))) over every (i, j) with y_i > y_j, by hand."""
    terms = [
        numpy.log1p(numpy.exp(-gamma * (scores[i, 0] - scores[j, 0])))
        for i in range(len(truths))
        for j in range(len(truths))
        if truths[i] > truths[j]
    ]
    return sum(terms) / len(terms)


def test_pairwise_logistic_loss_value_and_gradient():
    loss = PairwiseLogisticLoss(gamma=10.0)
    _, value = loss(numpy.array([[0.9], [0.2]]), numpy.array([1.0, 0.0]))
    assert value == pytest.approx(numpy.log1p(numpy.exp(-10 * 0.7)))
    scores = rng.uniform(-1, 1, size=(7, 1))
    d, value = loss(scores, TRUTHS)
    assert value == pytest.approx(reference_pairwise_loss(scores, TRUTHS, 10.0), rel=1e-12)
    assert_grad_close(d, numeric_grad(lambda: loss(scores, TRUTHS)[1], scores, 1e-6))
    d, value = loss(scores, numpy.ones(7))  # no pair with different labels
    assert value == 0.0 and not d.any()


def test_right_order_lowers_the_loss_and_a_shift_changes_nothing():
    loss = PairwiseLogisticLoss(gamma=5.0)
    ordered = TRUTHS[:, None] * 0.8 - 0.4
    reversed_ = -ordered
    assert loss(ordered, TRUTHS)[1] < loss(numpy.zeros((7, 1)), TRUTHS)[1] < loss(reversed_, TRUTHS)[1]
    assert loss(ordered + 0.3, TRUTHS)[1] == pytest.approx(loss(ordered, TRUTHS)[1])  # a shift changes nothing


def test_pairwise_loss_refuses_two_heads():
    with pytest.raises(ValueError, match="one score column, got 2"):
        PairwiseLogisticLoss()(rng.uniform(size=(4, 2)), numpy.array([0.0, 1.0, 1.0, 0.0]))


@pytest.mark.parametrize("gamma", [0.0, -10.0])
def test_pairwise_loss_refuses_a_gamma_that_is_not_positive(gamma):
    """gamma 0 silently gave a zero gradient, a negative gamma silently trained the reverse order."""
    with pytest.raises(ValueError, match=f"gamma must be > 0, got {gamma}"):
        PairwiseLogisticLoss(gamma=gamma)


def test_bad_labels_are_named():
    """A nan label silently left the loss, and one label for three pairs gave a loss of 0."""
    scores = rng.uniform(size=(3, 1))
    with pytest.raises(ValueError, match="PairwiseLogisticLoss: .* got nan \\(label 1\\)"):
        PairwiseLogisticLoss()(scores, numpy.array([1.0, numpy.nan, 0.0]))
    with pytest.raises(ValueError, match="PairwiseLogisticLoss: need one label for each of the 3 pairs"):
        PairwiseLogisticLoss()(scores, numpy.array([1.0]))


def test_pairs_with_equal_labels_contribute_nothing():
    labels = numpy.array([1.0, 1.0, 0.0])
    scores = numpy.array([[0.3], [0.8], [0.1]])
    _, value = PairwiseLogisticLoss(gamma=4.0)(scores, labels)
    assert value == pytest.approx((numpy.log1p(numpy.exp(-4 * 0.2)) + numpy.log1p(numpy.exp(-4 * 0.7))) / 2)


def test_very_large_score_differences_give_no_overflow_warning():
    """Unbounded scores (inner products) overflowed exp in the gradient, with a RuntimeWarning."""
    scores = numpy.array([[-500.0], [500.0], [0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d, value = PairwiseLogisticLoss(gamma=10.0)(scores, numpy.array([1.0, 0.0, 0.5]))
    assert value == pytest.approx((10000 + 5000 + 5000) / 3)
    numpy.testing.assert_allclose(d[:, 0], [-20 / 3, 20 / 3, 0.0])
