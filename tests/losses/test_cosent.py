import numpy
import pytest
from spacy.util import registry

from spacy_siamese.losses import CoSENTLoss, make_cosent_loss

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
GRADED = numpy.array([0.0, 0.2, 0.4, 0.4, 0.8, 1.0, 0.6])


def sentence_transformers_cosent(scores, labels, scale):
    """CoSENT as sentence-transformers computes it (losses/CoSENTLoss.py), in numpy: the score
    differences s_i - s_j of the pairs with y_i < y_j, and a 0, through one logsumexp."""
    s = scale * scores
    diff = s[:, None] - s[None, :]
    wanted = labels[:, None] < labels[None, :]
    diff = diff - (1 - wanted) * 1e12
    return numpy.logaddexp.reduce(numpy.concatenate([[0.0], diff.ravel()]))


def by_hand(scores, labels, scale):
    """log(1 + sum over (i, j) with y_i > y_j of exp(scale * (s_j - s_i))), one pair at a time."""
    total = 1.0
    for i in range(len(labels)):
        for j in range(len(labels)):
            if labels[i] > labels[j]:
                total += numpy.exp(scale * (scores[j] - scores[i]))
    return numpy.log(total)


@pytest.mark.parametrize("scale", [1.0, 20.0])
def test_loss_matches_the_reference(scale):
    scores = rng.uniform(-1, 1, size=(7, 1))
    _, loss = CoSENTLoss(scale=scale)(scores, GRADED)
    assert loss == pytest.approx(sentence_transformers_cosent(scores[:, 0], GRADED, scale), rel=1e-10)
    assert loss == pytest.approx(by_hand(scores[:, 0], GRADED, scale), rel=1e-10)


@pytest.mark.parametrize("n_heads", [1, 2])
def test_gradient(n_heads):
    loss_fn = CoSENTLoss(scale=5.0)
    scores = rng.uniform(0.05, 0.95, size=(7, n_heads))
    d, loss = loss_fn(scores, GRADED)
    assert loss == pytest.approx(sum(by_hand(scores[:, c], GRADED, 5.0) for c in range(n_heads)), rel=1e-10)
    assert_grad_close(d, numeric_grad(lambda: loss_fn(scores, GRADED)[1], scores, 1e-7), rtol=1e-4, atol=1e-8)


def test_binary_labels_rank_every_duplicate_above_every_other_pair():
    labels = numpy.array([1.0, 0.0, 1.0, 0.0])
    good = numpy.array([[0.9], [0.1], [0.8], [0.2]])
    bad = good[::-1].copy()
    loss_fn = CoSENTLoss(scale=20.0)
    assert loss_fn(good, labels)[1] < loss_fn(bad, labels)[1]


def test_shifting_every_score_changes_nothing_and_large_scores_stay_finite():
    loss_fn = CoSENTLoss(scale=1000.0)
    scores = rng.uniform(size=(7, 1))
    d, loss = loss_fn(scores, GRADED)
    assert numpy.isfinite(loss) and numpy.isfinite(d).all()
    assert loss_fn(scores + 0.3, GRADED)[1] == pytest.approx(loss)


def test_no_ordered_pair_gives_zero():
    d, loss = CoSENTLoss()(rng.uniform(size=(4, 2)), numpy.full(4, 0.5))
    assert loss == 0.0 and not d.any()


def test_registered_and_checked():
    assert registry.losses.get("spacy-siamese.CoSENTLoss.v1") is make_cosent_loss
    assert make_cosent_loss(scale=7.0).scale == 7.0
    with pytest.raises(ValueError, match="scale must be > 0"):
        CoSENTLoss(scale=0.0)
    with pytest.raises(ValueError, match=r"need \(n, k\) scores for n labels"):
        CoSENTLoss()(numpy.zeros((3, 1)), GRADED)


def test_a_nan_label_is_an_error_not_a_dropped_pair():
    """A nan label compared false with every other, so its pair silently left the loss."""
    with pytest.raises(ValueError, match="CoSENTLoss: a pair label must be a finite number in \\[0, 1\\], got nan"):
        CoSENTLoss()(rng.uniform(size=(3, 1)), numpy.array([0.2, numpy.nan, 0.9]))
    with pytest.raises(ValueError, match="CoSENTLoss: .* got 5.0 \\(label 2\\)"):
        CoSENTLoss()(rng.uniform(size=(3, 1)), numpy.array([0.2, 0.4, 5.0]))


def test_pairs_with_equal_labels_contribute_nothing():
    """Only pairs with different labels are ranked: swapping the scores of two equal labels
    changes nothing, as long as each keeps the same comparisons with the other labels."""
    labels = numpy.array([0.5, 0.5, 0.0])
    loss_fn = CoSENTLoss(scale=5.0)
    scores = numpy.array([[0.3], [0.8], [0.1]])
    d, loss = loss_fn(scores, labels)
    assert loss == pytest.approx(by_hand(scores[:, 0], labels, 5.0), rel=1e-12)
    # the pair (0, 1) has no term: the loss is the two terms of pair 2 against 0 and 1
    assert loss == pytest.approx(numpy.log(1 + numpy.exp(5 * (0.1 - 0.3)) + numpy.exp(5 * (0.1 - 0.8))), rel=1e-12)
