import numpy
import pytest
from spacy.util import registry

from spacy_siamese.losses import PairLogLoss, PairSquaredError, PairwiseLogisticLoss

from .gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
TRUTHS = numpy.array([0, 1, 1, 0, 1, 0], dtype="f8")


@pytest.mark.parametrize("loss_fn", [PairLogLoss(), PairLogLoss(label_smoothing=0.1), PairSquaredError()])
@pytest.mark.parametrize("n_heads", [1, 2])
def test_loss_gradients(loss_fn, n_heads):
    scores = rng.uniform(0.05, 0.95, size=(6, n_heads))
    d, _ = loss_fn(scores, TRUTHS)
    numeric = numeric_grad(lambda: loss_fn(scores, TRUTHS)[1], scores, 1e-7)
    assert_grad_close(d, numeric, rtol=1e-4)


def test_log_loss_value():
    scores = numpy.array([[0.9], [0.2]])
    _, loss = PairLogLoss()(scores, numpy.array([1.0, 0.0]))
    assert loss == pytest.approx(-(numpy.log(0.9) + numpy.log(0.8)) / 2)


def test_log_loss_is_finite_at_the_edges():
    scores = numpy.array([[1.0], [0.0]], dtype="f")
    d, loss = PairLogLoss()(scores, numpy.array([0.0, 1.0], dtype="f"))
    assert numpy.isfinite(loss) and numpy.all(numpy.isfinite(d))


def test_label_smoothing_moves_the_optimum_off_0_and_1():
    d, _ = PairLogLoss(label_smoothing=0.1)(numpy.array([[0.05], [0.95]]), numpy.array([0.0, 1.0]))
    numpy.testing.assert_allclose(d, 0.0, atol=1e-12)
    d, _ = PairLogLoss()(numpy.array([[0.05], [0.95]]), numpy.array([0.0, 1.0]))
    assert d[0, 0] > 0 and d[1, 0] < 0
    with pytest.raises(ValueError, match="label_smoothing"):
        PairLogLoss(label_smoothing=1.0)


def test_distill_targets_the_main_head_at_the_auxiliary_score():
    scores = rng.uniform(0.05, 0.95, size=(6, 2))
    d, _ = PairLogLoss(distill=0.5)(scores, TRUTHS)
    d_plain, _ = PairLogLoss()(scores, TRUTHS)
    numpy.testing.assert_allclose(d[:, 1], d_plain[:, 1])  # the auxiliary head learns from the labels
    target = 0.5 * TRUTHS + 0.5 * scores[:, 1]  # held constant: no gradient into the auxiliary head
    main_scores = scores[:, :1].copy()
    main = lambda: PairLogLoss()(main_scores, target)[1]  # noqa: E731
    assert_grad_close(d[:, :1], numeric_grad(main, main_scores, 1e-7), rtol=1e-4)
    with pytest.raises(ValueError, match="distill"):
        PairLogLoss(distill=1.5)


def test_log_loss_v1_and_v2_are_the_same_loss():
    """LogLoss.v1 stays registered for pipelines trained with it (it gained label_smoothing
    and distill in place); v2 is the name to use."""
    scores = rng.uniform(0.05, 0.95, size=(6, 2))
    settings = {"eps": 1e-4, "label_smoothing": 0.1, "distill": 0.3}
    v1 = registry.losses.get("spacy-siamese.LogLoss.v1")(**settings)
    v2 = registry.losses.get("spacy-siamese.LogLoss.v2")(**settings)
    d1, loss1 = v1(scores, TRUTHS)
    d2, loss2 = v2(scores, TRUTHS)
    numpy.testing.assert_array_equal(d1, d2)
    assert loss1 == loss2
    assert registry.losses.get("spacy-siamese.LogLoss.v1")()(scores, TRUTHS)[1] == PairLogLoss()(scores, TRUTHS)[1]


def test_squared_error_value():
    d, loss = PairSquaredError()(numpy.array([[0.5], [1.0]]), numpy.array([1.0, 0.5]))
    assert loss == pytest.approx((0.25 + 0.25) / 2)
    numpy.testing.assert_allclose(d[:, 0], [-0.5, 0.5])


def test_pairwise_logistic_loss_value_and_gradient():
    loss = PairwiseLogisticLoss(gamma=10.0)
    _, value = loss(numpy.array([[0.9], [0.2]]), numpy.array([1.0, 0.0]))
    assert value == pytest.approx(numpy.log1p(numpy.exp(-10 * 0.7)))
    scores = rng.uniform(-1, 1, size=(7, 1))
    truths = numpy.array([1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0])
    d, _ = loss(scores, truths)
    assert_grad_close(d, numeric_grad(lambda: loss(scores, truths)[1], scores, 1e-6))
    d, value = loss(scores, numpy.ones(7))  # no pair with different labels
    assert value == 0.0 and not d.any()


def test_pairwise_loss_refuses_two_heads():
    with pytest.raises(ValueError, match="one score column, got 2"):
        PairwiseLogisticLoss()(rng.uniform(size=(4, 2)), numpy.array([0.0, 1.0, 1.0, 0.0]))
