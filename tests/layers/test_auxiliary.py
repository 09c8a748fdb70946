import numpy
import pytest

from spacy_siamese.layers import cauchy_similarity, with_auxiliary

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


@pytest.mark.parametrize("weight", [1.0, 0.3])
def test_with_auxiliary_trains_both_heads_and_predicts_with_main(weight):
    # a second Cauchy head as the auxiliary: float64 throughout, for a precise check
    main, aux = cauchy_similarity(), cauchy_similarity()
    model = with_auxiliary(main=main, auxiliary=aux, weight=weight)
    A, B = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    model.initialize(X=(A, B))
    assert model.get_dim("nI") == 5
    main.set_param("v", rng.normal(size=(5,)))
    aux.set_param("v", rng.normal(size=(5,)))
    # prediction: the main head alone; training: both heads, side by side
    numpy.testing.assert_array_equal(model.predict((A, B)), main.predict((A, B)))
    Y, backprop = model((A, B), is_train=True)
    assert Y.shape == (4, 2)
    numpy.testing.assert_allclose(Y[:, 1:], aux.predict((A, B)))
    R = rng.normal(size=(4, 2))
    dA, dB = backprop(R)
    # the gradient is main's plus `weight` times the auxiliary head's
    weights = numpy.array([1.0, weight])
    loss = lambda: float((model((A, B), is_train=True)[0] * R * weights).sum())  # noqa: E731
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))
    assert numpy.array_equal(model.predict((A, B)), model.predict((B, A)))


def test_with_auxiliary_passes_nI_down_without_a_sample():
    model = with_auxiliary(main=cauchy_similarity(), auxiliary=cauchy_similarity())
    model.set_dim("nI", 3)
    model.initialize()
    assert [layer.get_dim("nI") for layer in model.layers] == [3, 3]


def test_with_auxiliary_refuses_a_negative_weight():
    """A negative weight silently trained the auxiliary head (and the encoder through it) to score worse."""
    with pytest.raises(ValueError, match="WithAuxiliary: weight must be >= 0, got -1.0"):
        with_auxiliary(main=cauchy_similarity(), auxiliary=cauchy_similarity(), weight=-1.0)
