"""spacy-siamese.table_mean.v1: a model2vec table averaged over a doc's subword tokens."""

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st

from spacy_siamese.layers import table_mean

from ..gradcheck import assert_grad_close, numeric_grad
from ..tiny_transformer import build_tiny_static, require_model2vec

nlp = spacy.blank("en")


@pytest.fixture(scope="module")
def static_dir(tmp_path_factory):
    return build_tiny_static(tmp_path_factory.mktemp("m2v") / "tiny")


def built(path, **kwargs):
    model = table_mean(path=str(path), **kwargs)
    model.initialize()
    return model


def test_a_doc_is_model2vecs_mean_of_its_known_subwords(static_dir):
    model = built(static_dir)
    static = require_model2vec().StaticModel.from_pretrained(static_dir, force_download=False)
    texts = ["the cats sat on the mat", "dogs barks", "the zebra"]  # "zebra" is unknown: left out
    Y = model([nlp(t) for t in texts], is_train=False)[0]
    assert Y.shape == (3, 4) and model.get_dim("nO") == 4  # the width comes from the table
    numpy.testing.assert_allclose(Y, static.encode(texts, normalize=False), rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(Y[2], static.embedding[1], rtol=1e-6)


def test_docs_without_a_known_subword_are_zeros_and_get_no_gradient(static_dir):
    model = built(static_dir)
    Y, backprop = model([nlp(""), nlp("zebra okapi")], is_train=True)
    assert Y.shape == (2, 4) and not Y.any()
    backprop(numpy.ones_like(Y))
    assert not model.has_grad("E") or not model.get_grad("E").any()
    mixed = model([nlp(""), nlp("the cat")], is_train=False)[0]
    assert not mixed[0].any() and mixed[1].any()


def test_gradients_match_finite_differences(static_dir):
    model = built(static_dir)
    docs = [nlp("the cat sat"), nlp(""), nlp("the dogs barks on the mat")]  # "the" twice: one row, two tokens
    weights = numpy.random.default_rng(1).normal(size=(3, 4))

    def loss():
        return float((model(docs, is_train=False)[0] * weights).sum())

    _, backprop = model(docs, is_train=True)
    assert backprop(weights.astype("f")) == []
    model.set_param("E", model.get_param("E").astype("f8"))
    numeric = numeric_grad(loss, model.get_param("E"), eps=1e-4)
    assert_grad_close(model.get_grad("E"), numeric, rtol=1e-3, atol=1e-4)


def test_a_loaded_layer_keeps_table_and_tokenizer_without_the_directory(static_dir, tmp_path):
    model = built(static_dir)
    model.get_param("E")[2] += 1.0  # trained on: the saved table, not the directory's, comes back
    docs = [nlp("the cat"), nlp("dogs")]
    expected = model(docs, is_train=False)[0]
    loaded = table_mean(path=str(tmp_path / "gone")).from_bytes(model.to_bytes())
    numpy.testing.assert_allclose(loaded(docs, is_train=False)[0], expected)
    loaded.initialize()  # already has its table: the missing directory is not read
    numpy.testing.assert_allclose(loaded(docs, is_train=False)[0], expected)


def test_max_length_cuts_a_long_doc(tmp_path):
    build_tiny_static(tmp_path / "short", max_length=2)
    model = built(tmp_path / "short")
    numpy.testing.assert_allclose(
        model([nlp("the cat sat on the mat")], is_train=False)[0], model([nlp("the cat")], is_train=False)[0]
    )


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(max_size=40), min_size=1, max_size=4))
def test_any_text_gets_a_finite_vector(static_dir, texts):
    model = built(static_dir)
    Y = model([nlp.make_doc(t) for t in texts], is_train=False)[0]
    assert Y.shape == (len(texts), 4) and numpy.isfinite(Y).all()


def test_bad_tables_are_refused(static_dir, tmp_path):
    with pytest.raises(ValueError, match="4 dimensions, the config says width 8"):
        built(static_dir, width=8)
    with pytest.raises(ValueError, match="not a model2vec model directory"):
        built(tmp_path)
    with pytest.raises(ValueError, match="no model2vec model directory"):
        table_mean().initialize()
    with pytest.raises(ValueError, match="width >= 1"):
        table_mean(width=0, path=str(static_dir))
    with pytest.raises(ValueError, match="no tokenizer"):
        model = table_mean(width=4, path=str(static_dir))
        model.set_param("E", numpy.zeros((3, 4), dtype="f"))
        model([nlp("the cat")], is_train=False)
