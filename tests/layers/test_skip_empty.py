"""spacy-siamese.skip_empty.v1: a width-keeping layer, skipped on a batch without a row."""

import numpy
from thinc.api import Maxout, Ragged, with_array

from spacy_siamese.layers import skip_empty


def test_rows_go_through_the_layer_and_a_batch_without_rows_passes_unchanged():
    model = skip_empty(with_array(Maxout(nO=3, nI=3, normalize=True)))
    X = Ragged(numpy.random.default_rng(0).normal(size=(4, 3)).astype("f"), numpy.array([1, 0, 3], dtype="i"))
    model.initialize(X=X)
    Y = model.predict(X)
    numpy.testing.assert_allclose(Y.dataXd, model.layers[0].predict(X).dataXd)
    empty = Ragged(numpy.zeros((0, 3), dtype="f"), numpy.array([0, 0], dtype="i"))
    out, backprop = model(empty, is_train=True)  # thinc's LayerNorm alone fails here
    assert out is empty and backprop(empty) is empty
