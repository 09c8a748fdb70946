import numpy
import pytest

from spacy_siamese.losses import PairSquaredError

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
GRADED = numpy.array([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])


@pytest.mark.parametrize("n_heads", [1, 2])
def test_loss_value_and_gradient(n_heads):
    scores = rng.uniform(0.05, 0.95, size=(6, n_heads))
    d, loss = PairSquaredError()(scores, GRADED)
    by_hand = sum((scores[i, c] - GRADED[i]) ** 2 for i in range(6) for c in range(n_heads)) / 6
    assert loss == pytest.approx(by_hand, rel=1e-12)
    numeric = numeric_grad(lambda: PairSquaredError()(scores, GRADED)[1], scores, 1e-7)
    assert_grad_close(d, numeric, rtol=1e-4)


def test_squared_error_value():
    d, loss = PairSquaredError()(numpy.array([[0.5], [1.0]]), numpy.array([1.0, 0.5]))
    assert loss == pytest.approx((0.25 + 0.25) / 2)
    numpy.testing.assert_allclose(d[:, 0], [-0.5, 0.5])


def test_loss_falls_as_scores_move_toward_the_labels():
    scores = rng.uniform(size=(6, 2))
    losses = [PairSquaredError()(scores + t * (GRADED[:, None] - scores), GRADED)[1] for t in (0.0, 0.5, 1.0)]
    assert losses[0] > losses[1] > losses[2] == 0.0


def test_bad_labels_are_named():
    """A nan label made the loss nan; one label for three pairs was silently given to all three."""
    scores = rng.uniform(size=(3, 1))
    with pytest.raises(ValueError, match="SquaredError: a pair label must be a finite number in \\[0, 1\\], got nan"):
        PairSquaredError()(scores, numpy.array([numpy.nan, 0.5, 1.0]))
    with pytest.raises(ValueError, match="SquaredError: .* got -1.0 \\(label 0\\)"):
        PairSquaredError()(scores, numpy.array([-1.0, 0.5, 1.0]))
    with pytest.raises(ValueError, match="SquaredError: need one label for each of the 3 pairs"):
        PairSquaredError()(scores, numpy.array([0.5]))
