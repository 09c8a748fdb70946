import numpy

from spacy_siamese.layers import cosine_similarity

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def test_cosine_values_gradients_and_zero_vectors():
    A, B = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    A[3] = 0.0
    model = cosine_similarity()
    model.initialize(X=(A, B))
    Y = model.predict((A, B))[:, 0]
    expected = (A * B).sum(1) / (numpy.linalg.norm(A, axis=1) * numpy.linalg.norm(B, axis=1) + 1e-30)
    numpy.testing.assert_allclose(Y, expected, atol=1e-12)
    assert Y[3] == 0.0 and numpy.isfinite(Y).all()
    numpy.testing.assert_allclose(model.predict((A, A))[[0, 1, 2, 4], 0], 1.0)
    R = rng.normal(size=(5, 1))
    loss = lambda: float((model.predict((A, B)) * R).sum())  # noqa: E731
    _, backprop = model((A, B), is_train=True)
    dA, dB = backprop(R)
    rows = [0, 1, 2, 4]  # the zero row is not differentiable: its gradient is defined as 0
    assert_grad_close(dA[rows], numeric_grad(loss, A, 1e-6)[rows])
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))
    assert not dA[3].any()
    numpy.testing.assert_array_equal(model.predict((A, B)), model.predict((B, A)))


def test_cosine_rescaled():
    A, B = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    plain = cosine_similarity().predict((A, B))
    rescaled = cosine_similarity(rescale=True)
    numpy.testing.assert_allclose(rescaled.predict((A, B)), (plain + 1) / 2)
    R = rng.normal(size=(5, 1))
    _, backprop = rescaled((A, B), is_train=True)
    dA, _ = backprop(R)
    loss = lambda: float((rescaled.predict((A, B)) * R).sum())  # noqa: E731
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))


def test_cosine_of_huge_and_tiny_float32_vectors():
    """The cosine does not depend on length: float32 rows of entries near 1e20 (squares overflow)
    or 1e-25 (squares underflow to 0) score as at unit scale, with the gradient scaled by 1 / s."""
    A, B = rng.normal(size=(3, 4)).astype("f"), rng.normal(size=(3, 4)).astype("f")
    R = rng.normal(size=(3, 1)).astype("f")
    model = cosine_similarity()
    expected, backprop = model((A, B), is_train=True)
    dA1, dB1 = backprop(R)
    for s in (numpy.float32(1e20), numpy.float32(1e-25)):
        with numpy.errstate(over="ignore", under="ignore"):
            Y, backprop = model((A * s, B * s), is_train=True)
            dA, dB = backprop(R)
        numpy.testing.assert_allclose(Y, expected, rtol=1e-5)
        numpy.testing.assert_allclose(dA * s, dA1, rtol=1e-4, atol=1e-6)
        numpy.testing.assert_allclose(dB * s, dB1, rtol=1e-4, atol=1e-6)
