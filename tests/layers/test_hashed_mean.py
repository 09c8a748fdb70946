"""spacy-siamese.hashed_mean.v1: hashed attribute embeddings averaged over a doc's tokens."""

import numpy
import pytest
import spacy
from thinc.api import Adam

from spacy_siamese.layers import hashed_mean

from ..gradcheck import assert_grad_close, numeric_grad

nlp = spacy.blank("en")


def built(**settings):
    model = hashed_mean(**{"width": 6, "rows": 50, **settings})
    model.initialize()
    return model


def test_a_doc_is_the_mean_of_its_tokens_summed_attribute_rows():
    model = built(attrs=["NORM", "SUFFIX"])
    E = model.get_param("E")
    docs = [nlp("the cat sat"), nlp("")]
    Y, _ = model(docs, is_train=False)
    assert Y.shape == (2, 6) and not Y[1].any()  # no tokens: zeros
    tokens = [model([nlp(word)], is_train=False)[0][0] for word in ("the", "cat", "sat")]
    numpy.testing.assert_allclose(Y[0], numpy.mean(tokens, axis=0), rtol=1e-5)
    keys = model.attrs["attrs"]
    assert len(keys) == 2 and numpy.any(E != 0)
    # word order and repeats of the same words do not matter beyond the mean
    numpy.testing.assert_allclose(model([nlp("sat cat the")], is_train=False)[0][0], Y[0], rtol=1e-5)
    numpy.testing.assert_allclose(model([nlp("cat cat")], is_train=False)[0][0], tokens[1], rtol=1e-5)


def test_a_batch_without_a_token_is_zeros_and_gets_no_gradient():
    model = built()
    Y, backprop = model([nlp(""), nlp("")], is_train=True)
    assert Y.shape == (2, 6) and not Y.any()
    backprop(numpy.ones_like(Y))
    assert not model.has_grad("E") or not model.get_grad("E").any()


def test_gradients_match_finite_differences():
    model = built(rows=7)  # few rows: hash collisions, one row gets several tokens' gradients
    docs = [nlp("a dog barks"), nlp(""), nlp("dogs bark loudly today")]
    weights = numpy.random.default_rng(0).normal(size=(3, 6))

    def loss():
        return float((model(docs, is_train=False)[0] * weights).sum())

    Y, backprop = model(docs, is_train=True)
    assert backprop(weights.astype("f")) == []
    E = model.get_param("E").astype("f8")
    model.set_param("E", E)
    numeric = numeric_grad(loss, model.get_param("E"), eps=1e-4)
    assert_grad_close(model.get_grad("E"), numeric, rtol=1e-3, atol=1e-4)


def test_gradients_add_up_until_an_update_and_start_again_after_it():
    model = built(rows=7)
    docs = [nlp("a dog barks"), nlp("dogs bark loudly today")]
    ones = numpy.ones((2, 6), dtype="f")
    model(docs, is_train=True)[1](ones)
    once = model.get_grad("E").copy()
    model(docs, is_train=True)[1](ones)
    numpy.testing.assert_allclose(model.get_grad("E"), 2 * once, rtol=1e-6)
    model.finish_update(Adam(0.01))
    assert not model.get_grad("E").any()
    model(docs, is_train=True)[1](ones)
    numpy.testing.assert_allclose(model.get_grad("E"), once, rtol=1e-6)


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="token attributes"):
        hashed_mean(width=4, rows=4, attrs=["NOT_AN_ATTR"])
    with pytest.raises(ValueError, match="width >= 1"):
        hashed_mean(width=0, rows=4)
