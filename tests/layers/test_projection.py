import numpy
import pytest
import spacy
from scipy.sparse import csr_matrix
from sklearn.decomposition import TruncatedSVD

from spacy_siamese.layers import projection, tfidf

from ..gradcheck import assert_grad_close, numeric_grad
from .test_tfidf import TEXTS

rng = numpy.random.default_rng(0)


def _projection(X, nO=3, init="random"):
    model = projection(nO=nO, init=init)
    model.initialize(X=X)
    model.set_param("W", rng.normal(size=model.get_param("W").shape))  # float64 for precise checks
    return model


def test_projection_dense_gradients():
    X = rng.normal(size=(4, 6))
    model = _projection(X)
    R = rng.normal(size=(4, 3))
    loss = lambda: float((model.predict(X) * R).sum())  # noqa: E731
    _, backprop = model(X, is_train=True)
    dX = backprop(R)
    assert_grad_close(dX, numeric_grad(loss, X, 1e-6))
    W = model.get_param("W")
    assert_grad_close(model.get_grad("W"), numeric_grad(lambda: (model.set_param("W", W), loss())[1], W, 1e-6))


def test_projection_sparse_path():
    dense = numpy.array([[0.0, 0.5, 0.0, 0.0, 2.0, 0.0], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0, 0, 0, 0, 0, 0]])
    X = csr_matrix(dense)
    model = _projection(X)
    numpy.testing.assert_allclose(model.predict(X), dense @ model.get_param("W"))
    R = rng.normal(size=(3, 3))
    W = model.get_param("W")
    loss = lambda: float((model.predict(X) * R).sum())  # noqa: E731
    _, backprop = model(X, is_train=True)
    assert backprop(R) is None  # the featuriser has no parameters
    _, backprop = model(X, is_train=True)
    backprop(R)  # accumulates
    numeric = numeric_grad(lambda: (model.set_param("W", W), loss())[1], W, 1e-6)
    assert model.get_grad("W").dtype == W.dtype == numpy.float64
    assert_grad_close(model.get_grad("W"), 2 * numeric)
    assert not model.get_grad("W")[[2, 3, 5]].any()  # terms absent from the batch
    assert model.get_grad("W")[[0, 1, 4]].all()


def test_projection_lsa_init_is_truncated_svd():
    blank = spacy.blank("en")
    featuriser = tfidf(min_df=1)
    featuriser.initialize(X=[blank.make_doc(t) for t in TEXTS])
    X = featuriser.predict([blank.make_doc(t) for t in TEXTS])
    model = projection(nO=3, init="lsa", seed=0)
    model.initialize(X=X)
    expected = TruncatedSVD(n_components=3, random_state=0).fit_transform(X)
    numpy.testing.assert_allclose(model.predict(X), expected, rtol=1e-4, atol=1e-5)
    wide = projection(nO=10, init="lsa")  # more dims than docs: the rest starts near zero
    wide.initialize(X=X)
    assert wide.get_param("W").shape == (featuriser.get_dim("nO"), 10)
    with pytest.raises(ValueError, match="init"):
        projection(init="pca")
