import numpy
from thinc.api import NumpyOps, Ragged

from spacy_siamese.layers import mean_max_pool

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
ops = NumpyOps()


def test_mean_max_pool_values_with_empty_sequences():
    X = rng.normal(size=(5, 3)).astype("f")
    lengths = ops.asarray1i([2, 0, 3, 0])
    model = mean_max_pool()
    model.initialize(X=Ragged(X, lengths))
    Y = model.predict(Ragged(X, lengths))
    assert Y.shape == (4, 6)
    numpy.testing.assert_allclose(Y[0], numpy.concatenate([X[:2].mean(0), X[:2].max(0)]), rtol=1e-6)
    numpy.testing.assert_allclose(Y[2], numpy.concatenate([X[2:].mean(0), X[2:].max(0)]), rtol=1e-6)
    assert not Y[1].any() and not Y[3].any()
    all_empty = model.predict(Ragged(ops.alloc2f(0, 3), ops.asarray1i([0, 0])))
    assert all_empty.shape == (2, 6) and not all_empty.any()


def test_mean_max_pool_gradients():
    X = rng.normal(size=(6, 3)).astype("f")  # distinct values: no ties for max
    lengths = ops.asarray1i([1, 0, 3, 2])
    model = mean_max_pool()
    model.initialize(X=Ragged(X, lengths))
    R = rng.normal(size=(4, 6)).astype("f")
    loss = lambda: float((model.predict(Ragged(X, lengths)).astype("f8") * R).sum())  # noqa: E731
    _, backprop = model(Ragged(X, lengths), is_train=True)
    dX = backprop(R).dataXd
    # pooling is piecewise linear, so float32 central differences are accurate
    assert_grad_close(dX, numeric_grad(loss, X, 1e-2), rtol=1e-3, atol=1e-3)
