import numpy

from spacy_siamese.layers import pair_features

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)


def test_pair_features_values_gradients_and_symmetry():
    model = pair_features()
    A, B = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    model.initialize(X=(A, B))
    assert model.get_dim("nI") == 5 and model.get_dim("nO") == 10
    Y = model.predict((A, B))
    numpy.testing.assert_array_equal(Y, numpy.hstack([numpy.abs(A - B), A * B]))
    numpy.testing.assert_array_equal(Y, model.predict((B, A)))
    R = rng.normal(size=Y.shape)
    loss = lambda: float((model.predict((A, B)) * R).sum())  # noqa: E731
    _, backprop = model((A, B), is_train=True)
    dA, dB = backprop(R)
    assert_grad_close(dA, numeric_grad(loss, A, 1e-6))
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))


def test_pair_features_width_from_nI():
    assert pair_features(nI=3).get_dim("nO") == 6
