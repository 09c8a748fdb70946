import numpy
import pytest
import spacy
from scipy.sparse import csr_matrix

from spacy_siamese.layers import bag_of_words, denoising_autoencoder, dot_similarity
from spacy_siamese.layers.dae import reconstruction_loss

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
TEXTS = ["The cat sat on the mat.", "A cat and a mat!", "Stock markets fell.", "The market rose.", "cat cat cat"]


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def test_bag_of_words_is_binary_over_the_fitted_vocabulary(nlp):
    docs = [nlp.make_doc(t) for t in TEXTS]
    model = bag_of_words(min_df=1, max_vocab=3)
    model.initialize(X=docs)
    terms = model.attrs["table"].terms
    assert len(terms) == 3 == model.get_dim("nO") and terms[0] == "cat"  # the most frequent first
    assert "the" not in terms and "." not in terms  # stop words and punctuation dropped
    B = model.predict(docs + [nlp.make_doc(""), nlp.make_doc("unseen words")])
    assert B.shape == (7, 3) and set(B.data) == {1.0}
    assert B[4].sum() == 1.0  # "cat cat cat": presence, not counts
    assert B[5].nnz == 0 and B[6].nnz == 0


def test_bag_of_words_errors(nlp):
    with pytest.raises(ValueError, match="attr must be one of"):
        bag_of_words(attr="shape")
    with pytest.raises(ValueError, match="min_df"):
        bag_of_words(min_df=0)
    with pytest.raises(ValueError, match="initialize"):
        bag_of_words().predict([nlp.make_doc("x")])
    with pytest.raises(ValueError, match="no term occurs"):
        bag_of_words(min_df=5).initialize(X=[nlp.make_doc("a b"), nlp.make_doc("c d")])


def small_dae(noise=0.0, weight=1.0, nI=6, nO=3):
    X = (rng.random((5, nI)) < 0.5).astype("float32")
    model = denoising_autoencoder(nO=nO, noise=noise, reconstruction_weight=weight)
    model.initialize(X=X)
    for name in ("c", "d"):
        model.set_param(name, rng.normal(size=model.get_param(name).shape).astype("float32"))
    return model, X


def test_dae_gradients_include_the_reconstruction():
    model, X = small_dae(weight=0.7)
    X = X.astype("f8")
    for name in ("W", "c", "V", "d"):
        model.set_param(name, model.get_param(name).astype("f8"))
    R = rng.normal(size=(5, 3))

    def objective():
        return float((model.predict(X) * R).sum()) + 0.7 * reconstruction_loss(model, X)

    _, backprop = model(X, is_train=True)
    dX = backprop(R)
    for name in ("W", "c", "V", "d"):
        assert_grad_close(model.get_grad(name), numeric_grad(objective, model.get_param(name), 1e-6), rtol=1e-4)
    target = X.copy()  # the reconstruction target is not an input to differentiate

    def through_input():
        H = model.predict(X)
        Z = H @ model.get_param("V") + model.get_param("d")
        recon = (numpy.logaddexp(0.0, Z) - target * Z).sum() / len(X)
        return float((H * R).sum() + 0.7 * recon)

    assert_grad_close(dX, numeric_grad(through_input, X, 1e-6), rtol=1e-4)


def test_dae_masks_only_in_training_and_maps_zero_to_zero():
    model, X = small_dae(noise=0.5, nI=200, nO=4)
    X = csr_matrix((rng.random((5, 200)) < 0.3).astype("float32"))
    clean = model.predict(X)
    numpy.testing.assert_array_equal(clean, model.predict(X))  # deterministic at prediction
    numpy.random.seed(0)
    noisy, _ = model(X, is_train=True)
    assert not numpy.allclose(noisy, clean)
    # with the noise off, training sees the clean input
    model.attrs["noise"] = 0.0
    numpy.testing.assert_allclose(model(X, is_train=True)[0], clean, rtol=1e-6)
    zero = csr_matrix((2, 200), dtype="float32")
    assert not model.predict(zero).any() and not model(zero, is_train=True)[0].any()


def test_dae_bad_input():
    with pytest.raises(ValueError, match="noise"):
        denoising_autoencoder(nO=2, noise=1.0)
    with pytest.raises(ValueError, match="reconstruction_weight"):
        denoising_autoencoder(nO=2, reconstruction_weight=-1)
    model, _ = small_dae()
    with pytest.raises(ValueError, match="expected nI=6"):
        model.predict(numpy.zeros((2, 5), dtype="f"))


def test_dot_similarity_gradient_and_symmetry():
    A, B = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    model = dot_similarity()
    model.initialize(X=(A, B))
    numpy.testing.assert_allclose(model.predict((A, B))[:, 0], (A * B).sum(1))
    numpy.testing.assert_array_equal(model.predict((A, B)), model.predict((B, A)))
    R = rng.normal(size=(4, 1))
    dA, dB = model((A, B), is_train=True)[1](R)
    assert_grad_close(dA, numeric_grad(lambda: float((model.predict((A, B)) * R).sum()), A, 1e-6))
    assert_grad_close(dB, numeric_grad(lambda: float((model.predict((A, B)) * R).sum()), B, 1e-6))
