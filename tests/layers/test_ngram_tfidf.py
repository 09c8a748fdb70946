"""spacy-siamese.ngram_tfidf.v1: word and character n-gram TF-IDF over a joint vocabulary."""

import numpy
import pytest
import spacy
from thinc.api import Model

from spacy_siamese.layers.ngram_tfidf import WORD, doc_terms, ngram_tfidf

TEXTS = ["The nation voted.", "La nación votó.", "Berlin 2012", "Berlín 2012, ¡sí!"]


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("xx")


def _fitted(nlp, **settings) -> Model:
    layer = ngram_tfidf(min_df=1, **settings)
    layer.initialize(X=[nlp(t) for t in TEXTS])
    return layer


def test_terms_are_words_and_framed_ngrams(nlp):
    layer = ngram_tfidf(ngram_sizes=[3])
    assert doc_terms(layer, nlp("Cats!")) == [WORD + "cats", "<ca", "cat", "ats", "ts>"]
    # accents stripped: the Spanish and the English spelling share the name's n-grams
    assert doc_terms(layer, nlp("Berlín"))[0] == WORD + "berlin"
    assert doc_terms(ngram_tfidf(ngram_sizes=[3], strip_accents=False), nlp("Berlín"))[0] == WORD + "berlín"
    assert doc_terms(ngram_tfidf(ngram_sizes=[], word_weight=1.0), nlp("a b")) == [WORD + "a", WORD + "b"]


def test_rows_are_unit_norm_with_word_share(nlp):
    layer = _fitted(nlp, word_weight=0.3)
    X = layer.predict([nlp(t) for t in TEXTS] + [nlp(""), nlp("zzzz qqqq")]).toarray()
    words = numpy.asarray([t.startswith(WORD) for t in layer.attrs["table"].terms])
    norms = numpy.linalg.norm(X, axis=1)
    numpy.testing.assert_allclose(norms[:4], 1.0, rtol=1e-5)
    numpy.testing.assert_allclose((X[:4, words] ** 2).sum(axis=1), 0.3, rtol=1e-5)
    assert norms[4] == 0.0 and norms[5] == 0.0  # no known term: a zero row


def test_translations_share_ngrams(nlp):
    layer = _fitted(nlp)
    X = layer.predict([nlp(t) for t in TEXTS]).toarray()
    assert X[0] @ X[1] > X[0] @ X[3] and X[2] @ X[3] > X[2] @ X[1]


def test_min_df_max_vocab_and_errors(nlp):
    layer = ngram_tfidf(min_df=2, max_vocab=5)
    layer.initialize(X=[nlp(t) for t in TEXTS])
    assert layer.get_dim("nO") == 5
    with pytest.raises(ValueError, match="min_df=9"):
        ngram_tfidf(min_df=9).initialize(X=[nlp(t) for t in TEXTS])
    with pytest.raises(ValueError, match="initialize"):
        ngram_tfidf().initialize()
    with pytest.raises(ValueError, match="word_weight"):
        ngram_tfidf(word_weight=1.5)
    with pytest.raises(ValueError, match="word_weight"):
        ngram_tfidf(ngram_sizes=[], word_weight=0.5)


def test_serialization_round_trip(nlp):
    layer = _fitted(nlp)
    docs = [nlp(t) for t in TEXTS]
    loaded = ngram_tfidf(min_df=1).from_bytes(layer.to_bytes())
    assert (loaded.predict(docs) != layer.predict(docs)).nnz == 0
    assert loaded.attrs["table"].index == layer.attrs["table"].index
