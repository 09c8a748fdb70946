import numpy
import pytest

from spacy_siamese.layers import cauchy_similarity, train_calibrated

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def test_train_calibrated_gradients_and_prediction():
    inner = cauchy_similarity()
    model = train_calibrated(comparison=inner)
    A, B = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    model.initialize(X=(A, B))
    inner.set_param("v", rng.normal(size=(5,)))
    # starts as the identity map; prediction is always the inner score
    numpy.testing.assert_allclose(model((A, B), is_train=True)[0], inner.predict((A, B)), rtol=1e-6)
    model.set_param("a", numpy.array([0.3]))
    model.set_param("b", numpy.array([0.8]))
    numpy.testing.assert_array_equal(model.predict((A, B)), inner.predict((A, B)))
    # training: sigmoid(a + softplus(b) * logit(s)), an increasing map of s
    s = inner.predict((A, B))
    expected = 1.0 / (1.0 + numpy.exp(-(0.3 + numpy.log1p(numpy.exp(0.8)) * numpy.log(s / (1 - s)))))
    numpy.testing.assert_allclose(model((A, B), is_train=True)[0], expected, rtol=1e-6)
    R = rng.normal(size=(4, 1))
    loss = lambda: float((model((A, B), is_train=True)[0] * R).sum())  # noqa: E731
    _, backprop = model((A, B), is_train=True)
    dA, dB = backprop(R)
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))
    for name in ("a", "b"):
        p = model.get_param(name)
        numeric = numeric_grad(lambda name=name, p=p: (model.set_param(name, p), loss())[1], p, 1e-6)
        assert_grad_close(model.get_grad(name), numeric)
    v = inner.get_param("v")
    numeric_v = numeric_grad(lambda: (inner.set_param("v", v), loss())[1], v, 1e-6)
    assert_grad_close(inner.get_grad("v"), numeric_v)
    assert numpy.array_equal(model((A, B), is_train=True)[0], model((B, A), is_train=True)[0])


def test_train_calibrated_keeps_the_ranking():
    inner = cauchy_similarity()
    model = train_calibrated(comparison=inner)
    A, B = rng.normal(size=(20, 5)), rng.normal(size=(20, 5))
    model.initialize(X=(A, B))
    model.set_param("a", numpy.array([-1.2], dtype="f"))
    model.set_param("b", numpy.array([2.5], dtype="f"))
    trained = model((A, B), is_train=True)[0][:, 0]
    raw = inner.predict((A, B))[:, 0]
    numpy.testing.assert_array_equal(numpy.argsort(trained), numpy.argsort(raw))


@pytest.mark.parametrize("eps", [0.0, -1.0, 0.7])
def test_train_calibrated_refuses_an_eps_outside_0_half(eps):
    """eps 0: an infinite logit at a score of 1; eps >= 0.5: every score clipped to one value, no gradient."""
    with pytest.raises(ValueError, match=f"TrainCalibrated: eps must be in \\(0, 0.5\\), got {eps}"):
        train_calibrated(comparison=cauchy_similarity(), eps=eps)
