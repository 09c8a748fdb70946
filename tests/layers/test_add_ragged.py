"""spacy-siamese.add_ragged.v1: the sum of layers that each pool the same Ragged."""

import numpy
from thinc.api import Linear, Ragged, chain, with_array

from spacy_siamese.layers import add_ragged, mean_max_pool, mean_pool

from ..gradcheck import assert_grad_close, numeric_grad


def test_the_sum_its_width_and_its_gradient():
    X = numpy.random.default_rng(0).normal(size=(6, 3))
    lengths = numpy.array([2, 0, 4], dtype="i")
    first = chain(with_array(Linear(nO=2)), mean_max_pool())
    model = add_ragged(first, chain(mean_pool(), Linear(nO=4, nI=3)))
    model.initialize(X=Ragged(X.astype("f"), lengths))
    assert model.get_dim("nO") == 4
    Y, backprop = model(Ragged(X.astype("f"), lengths), is_train=True)
    parts = [layer.predict(Ragged(X.astype("f"), lengths)) for layer in model.layers]
    numpy.testing.assert_allclose(Y, parts[0] + parts[1], rtol=1e-6)
    weights = numpy.random.default_rng(1).normal(size=Y.shape)
    dX = backprop(weights.astype("f"))
    assert list(dX.lengths) == [2, 0, 4]

    def loss():
        return float((model.predict(Ragged(X.astype("f"), lengths)) * weights).sum())

    assert_grad_close(dX.dataXd, numeric_grad(loss, X, eps=1e-3), rtol=1e-2, atol=1e-3)
