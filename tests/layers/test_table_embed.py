"""spacy-siamese.table_embed.v1: a model2vec table's rows for each subword token of a doc."""

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from thinc.api import Adam

from spacy_siamese.layers import table_embed, table_mean
from spacy_siamese.layers.table_embed import token_ids, tokenizer

from ..gradcheck import assert_grad_close, numeric_grad
from ..tiny_transformer import build_tiny_static

nlp = spacy.blank("en")


@pytest.fixture(scope="module")
def static_dir(tmp_path_factory):
    return build_tiny_static(tmp_path_factory.mktemp("m2v") / "tiny")


def built(path, layer=table_embed, **kwargs):
    model = layer(path=str(path), **kwargs)
    model.initialize()
    return model


def test_its_rows_averaged_are_table_mean(static_dir):
    embed, mean = built(static_dir), built(static_dir, table_mean)
    docs = [nlp("the cats sat on the mat"), nlp("zebra"), nlp("dogs barks"), nlp("")]
    X = embed(docs, is_train=False)[0]
    assert list(X.lengths) == [len(row) for row in numpy.split(X.dataXd, numpy.cumsum(X.lengths)[:-1])]
    assert X.lengths[1] == 0 and X.lengths[3] == 0  # no known subword: no row
    Y = mean(docs, is_train=False)[0]
    start = 0
    for i, length in enumerate(X.lengths):
        if length:
            numpy.testing.assert_allclose(X.dataXd[start : start + length].mean(axis=0), Y[i], rtol=1e-5)
        start += length


def test_gradients_match_finite_differences(static_dir):
    model = built(static_dir)
    docs = [nlp("the cat sat"), nlp(""), nlp("the dogs barks on the mat")]  # "the" twice: one row, two tokens
    X, backprop = model(docs, is_train=True)
    weights = numpy.random.default_rng(1).normal(size=X.dataXd.shape)

    def loss():
        return float((model(docs, is_train=False)[0].dataXd * weights).sum())

    assert backprop(type(X)(weights.astype("f"), X.lengths)) == []
    model.set_param("E", model.get_param("E").astype("f8"))
    numeric = numeric_grad(loss, model.get_param("E"), eps=1e-4)
    assert_grad_close(model.get_grad("E"), numeric, rtol=1e-3, atol=1e-4)


def test_gradients_add_up_until_an_update_and_start_again_after_it(static_dir):
    model = built(static_dir)
    docs = [nlp("the cat sat"), nlp("the dogs barks on the mat")]
    X, backprop = model(docs, is_train=True)
    ones = type(X)(numpy.ones_like(X.dataXd), X.lengths)
    backprop(ones)
    once = model.get_grad("E").copy()
    assert once.any()
    backprop(ones)  # two batches before an update (gradient accumulation): the sum
    numpy.testing.assert_allclose(model.get_grad("E"), 2 * once, rtol=1e-6)
    before = model.get_param("E").copy()
    model.finish_update(Adam(0.01))
    assert not model.get_grad("E").any()
    assert (model.get_param("E") != before).any(axis=1).sum() == (once != 0).any(axis=1).sum()
    model(docs, is_train=True)[1](ones)
    numpy.testing.assert_allclose(model.get_grad("E"), once, rtol=1e-6)


def test_a_batch_without_a_known_subword_is_empty_and_gets_no_gradient(static_dir):
    model = built(static_dir)
    X, backprop = model([nlp(""), nlp("zebra okapi")], is_train=True)
    assert X.dataXd.shape == (0, 4) and list(X.lengths) == [0, 0]
    backprop(type(X)(numpy.zeros((0, 4), dtype="f"), X.lengths))
    assert not model.has_grad("E") or not model.get_grad("E").any()


def test_a_loaded_layer_keeps_table_and_tokenizer_without_the_directory(static_dir, tmp_path):
    model = built(static_dir)
    model.get_param("E")[2] += 1.0
    docs = [nlp("the cat"), nlp("dogs")]
    expected = model(docs, is_train=False)[0].dataXd
    loaded = table_embed(path=str(tmp_path / "gone")).from_bytes(model.to_bytes())
    loaded.initialize()  # already has its table: the missing directory is not read
    numpy.testing.assert_allclose(loaded(docs, is_train=False)[0].dataXd, expected)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(max_size=40), min_size=1, max_size=4))
def test_any_text_gets_finite_rows(static_dir, texts):
    X = built(static_dir)([nlp.make_doc(t) for t in texts], is_train=False)[0]
    assert len(X.lengths) == len(texts) and X.dataXd.shape == (int(X.lengths.sum()), 4)
    assert numpy.isfinite(X.dataXd).all()


def test_bad_tables_are_refused(static_dir, tmp_path):
    with pytest.raises(ValueError, match="table_embed: .* 4 dimensions, the config says width 8"):
        built(static_dir, width=8)
    with pytest.raises(ValueError, match="table_embed: no model2vec model directory"):
        table_embed().initialize()
    with pytest.raises(ValueError, match="width >= 1"):
        table_embed(width=0, path=str(static_dir))


@pytest.fixture(scope="module")
def short_dir(tmp_path_factory):
    return build_tiny_static(tmp_path_factory.mktemp("m2v") / "short", max_length=3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("the cats dogs mat zebra?!é "), max_size=40), max_size=5))
def test_token_ids_drop_unknown_tokens_then_cut_each_doc(static_dir, short_dir, texts):
    for path in (static_dir, short_dir):
        model = built(path)
        encodings = tokenizer(model.attrs["tokenizer"]).encode_batch(texts, add_special_tokens=False)
        cut = model.attrs["max_length"] or None
        rows = [[i for i in encoding.ids if i != model.attrs["unk"]][:cut] for encoding in encodings]
        ids, lengths = token_ids(model, [nlp.make_doc(t) for t in texts])
        assert lengths.tolist() == [len(row) for row in rows]
        assert ids.tolist() == [i for row in rows for i in row]
