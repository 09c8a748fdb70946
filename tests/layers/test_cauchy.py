import numpy

from spacy_siamese.layers import cauchy_similarity

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def _pair(n=4, width=5, dtype="f8"):
    return rng.normal(size=(n, width)).astype(dtype), rng.normal(size=(n, width)).astype(dtype)


def test_cauchy_values():
    model = cauchy_similarity()
    A, B = _pair()
    model.initialize(X=(A, B))
    model.set_param("v", numpy.zeros((5,)))  # softplus(0) = ln 2
    expected = 1.0 / (1.0 + numpy.log(2.0) * ((A - B) ** 2).sum(axis=1))
    numpy.testing.assert_allclose(model.predict((A, B))[:, 0], expected, rtol=1e-12)
    numpy.testing.assert_array_equal(model.predict((A, A)), 1.0)


def test_cauchy_weights_stay_positive():
    """However negative the free parameter, the weights are softplus(v) > 0: distinct
    vectors score strictly below 1, and the score never leaves (0, 1)."""
    model = cauchy_similarity()
    A, B = _pair()
    model.initialize(X=(A, B))
    for v in (-30.0, -5.0, 0.0, 5.0):
        model.set_param("v", numpy.full((5,), v))
        w = numpy.logaddexp(0.0, v)
        Y = model.predict((A, B))[:, 0]
        numpy.testing.assert_allclose(Y, 1.0 / (1.0 + w * ((A - B) ** 2).sum(axis=1)), rtol=1e-12)
        assert (Y < 1.0).all() and (Y > 0.0).all()


def test_cauchy_init_scales_the_weights_to_the_sample():
    """Initial weights make the distance term 1 on average: a score of 0.5 at the sample mean."""
    model = cauchy_similarity()
    A, B = _pair(n=50, dtype="f")
    model.initialize(X=(A, B))
    w = numpy.logaddexp(0.0, model.get_param("v"))
    numpy.testing.assert_allclose(((A - B) ** 2 @ w).mean(), 1.0, rtol=1e-4)


def test_cauchy_gradients():
    model = cauchy_similarity()
    A, B = _pair()
    model.initialize(X=(A, B))
    model.set_param("v", rng.normal(size=(5,)))  # float64 for a precise check
    R = rng.normal(size=(4, 1))
    loss = lambda: float((model.predict((A, B)) * R).sum())  # noqa: E731
    _, backprop = model((A, B), is_train=True)
    dA, dB = backprop(R)
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))
    v = model.get_param("v")
    numeric_v = numeric_grad(lambda: (model.set_param("v", v), loss())[1], v, 1e-6)
    assert_grad_close(model.get_grad("v"), numeric_v)


def test_cauchy_is_symmetric():
    model = cauchy_similarity()
    A, B = _pair(dtype="f")
    model.initialize(X=(A, B))
    assert numpy.array_equal(model.predict((A, B)), model.predict((B, A)))


def test_cauchy_init_on_nearly_identical_pairs_keeps_finite_weights():
    """A sample whose pairs are close (mean squared distance < 1/709) needs initial weights
    above 709, where softplus^-1 = log(expm1(w)) overflows to inf (and the scores to NaN)."""
    model = cauchy_similarity()
    A, _ = _pair(n=8, dtype="f")
    B = A + numpy.float32(1e-3) * rng.normal(size=A.shape).astype("f")
    model.initialize(X=(A, B))
    w = numpy.logaddexp(0.0, model.get_param("v").astype("f8"))
    assert numpy.isfinite(w).all()
    numpy.testing.assert_allclose(((A - B).astype("f8") ** 2 @ w).mean(), 1.0, rtol=1e-3)
    numpy.testing.assert_array_equal(model.predict((A, A)), 1.0)
    Y = model.predict((A, B))
    assert numpy.isfinite(Y).all() and (Y > 0.0).all() and (Y <= 1.0).all()


def test_cauchy_gradient_is_finite_for_huge_distances():
    """Where (a - b)^2 overflows the score rounds to 0; its gradient is 0, not inf * 0 = NaN."""
    model = cauchy_similarity()
    A, B = _pair(dtype="f")
    model.initialize(X=(A, B))
    A[0] = 1e20
    B[0] = -1e20
    with numpy.errstate(over="ignore"):
        Y, backprop = model((A, B), is_train=True)
        dA, dB = backprop(numpy.ones((len(A), 1), dtype="f"))
    assert Y[0, 0] == 0.0 and numpy.isfinite(Y).all()
    assert numpy.isfinite(dA).all() and numpy.isfinite(dB).all() and numpy.isfinite(model.get_grad("v")).all()
    assert not dA[0].any()
