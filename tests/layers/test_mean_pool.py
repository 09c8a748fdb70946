"""spacy-siamese.mean_pool.v1: the mean of each sequence of a Ragged, empty ones included."""

import numpy
from thinc.api import Ragged

from spacy_siamese.layers import mean_pool

from ..gradcheck import assert_grad_close, numeric_grad


def test_means_with_empty_sequences_and_their_gradient():
    model = mean_pool()
    X = numpy.random.default_rng(0).normal(size=(5, 3))
    lengths = numpy.array([2, 0, 3, 0], dtype="i")
    Y, backprop = model(Ragged(X.astype("f"), lengths), is_train=False)
    numpy.testing.assert_allclose(Y, [X[:2].mean(0), [0, 0, 0], X[2:].mean(0), [0, 0, 0]], rtol=1e-5)
    weights = numpy.random.default_rng(1).normal(size=Y.shape)
    dX = backprop(weights.astype("f")).dataXd

    def loss():
        return float((model(Ragged(X, lengths), is_train=False)[0] * weights).sum())

    assert_grad_close(dX, numeric_grad(loss, X, eps=1e-6), rtol=1e-4, atol=1e-5)


def test_a_batch_of_empty_sequences_pools_to_zeros():
    Y, backprop = mean_pool()(Ragged(numpy.zeros((0, 4), dtype="f"), numpy.array([0, 0], dtype="i")), is_train=True)
    assert Y.shape == (2, 4) and not Y.any()
    assert backprop(numpy.ones((2, 4), dtype="f")).dataXd.shape == (0, 4)
