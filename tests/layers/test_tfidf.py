import inspect

import numpy
import pytest
import spacy
from sklearn.feature_extraction.text import TfidfVectorizer

from spacy_siamese.architectures import build_s2net_encoder
from spacy_siamese.layers import tfidf

TEXTS = [
    "the cat sat on the mat",
    "a dog sat on the log",
    "the cat chased the dog",
    "stocks fell as the market closed",
    "the market rallied and stocks rose",
    "bonds and stocks in the market",
]


@pytest.fixture(scope="module")
def blank():
    return spacy.blank("en")


def _fitted(blank, texts=TEXTS, **kwargs):
    model = tfidf(**kwargs)
    model.initialize(X=[blank.make_doc(t) for t in texts])
    return model


def test_tfidf_defaults_are_s2net_encoder_defaults():
    layer = inspect.signature(tfidf).parameters
    encoder = inspect.signature(build_s2net_encoder).parameters
    for name, param in layer.items():
        assert encoder[name].default == param.default, name


@pytest.mark.parametrize("sublinear", [False, True])
def test_tfidf_matches_sklearn(blank, sublinear):
    model = _fitted(blank, min_df=1, sublinear_tf=sublinear, drop_punct=False)
    terms = model.attrs["table"].terms
    ref = TfidfVectorizer(token_pattern=r"\S+", vocabulary=terms, sublinear_tf=sublinear).fit(TEXTS)
    X = model.predict([blank.make_doc(t) for t in TEXTS])
    assert X.shape == (6, len(terms)) and model.get_dim("nO") == len(terms)
    numpy.testing.assert_allclose(X.toarray(), ref.transform(TEXTS).toarray(), rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(numpy.linalg.norm(X.toarray(), axis=1), 1.0, rtol=1e-5)


def test_tfidf_options(blank):
    texts = ["The CAT, the cat!", "A cat and a dog.", "Dogs bark."]
    terms = lambda **kw: set(_fitted(blank, texts, **{"min_df": 1, **kw}).attrs["table"].terms)  # noqa: E731
    assert terms(drop_punct=False) >= {",", "!", ".", "the", "cat"}
    assert not terms() & {",", "!", "."}
    assert "the" not in terms(drop_stop=True) and "a" not in terms(drop_stop=True)
    assert "The" in terms(attr="orth") and "CAT" in terms(attr="orth")
    assert "cat" in terms(attr="lemma")  # no lemmatizer: lower-case fallback
    assert terms(min_df=2) == {"cat"}  # "a" occurs twice but in one doc
    assert terms(max_vocab=1) == {"cat"}  # the most frequent by document frequency
    raw = _fitted(blank, texts, min_df=1, sublinear_tf=False, normalize=False)
    X = raw.predict([blank.make_doc("cat cat cat")]).toarray()[0]
    col = raw.attrs["table"].terms.index("cat")
    assert X[col] == pytest.approx(3 * raw.attrs["table"].idf[col])
    sub = _fitted(blank, texts, min_df=1, normalize=False, sublinear_tf=True)
    assert sub.predict([blank.make_doc("cat cat cat")]).toarray()[0, col] == pytest.approx(
        (1 + numpy.log(3)) * sub.attrs["table"].idf[col]
    )
    with pytest.raises(ValueError, match="attr"):
        tfidf(attr="shape")
    with pytest.raises(ValueError, match="min_df"):
        _fitted(blank, texts, min_df=10)


def test_tfidf_unknown_terms_and_empty_docs(blank):
    model = _fitted(blank, min_df=1)
    X = model.predict([blank.make_doc(t) for t in ("zebra quantum", "", "   ", "cat zebra")])
    assert X.shape[0] == 4
    assert X[0].nnz == 0 and X[1].nnz == 0 and X[2].nnz == 0
    assert X[3].nnz == 1 and X[3].data[0] == pytest.approx(1.0)


def test_tfidf_fit_counts_distinct_texts_once(blank):
    once = _fitted(blank, TEXTS)
    repeated = _fitted(blank, TEXTS + [TEXTS[0]] * 5)
    assert once.attrs["table"].terms == repeated.attrs["table"].terms
    numpy.testing.assert_array_equal(once.attrs["table"].idf, repeated.attrs["table"].idf)


def test_tfidf_serialization(blank):
    model = _fitted(blank, attr="lower", min_df=1)
    fresh = tfidf(attr="lower", min_df=1)
    fresh.from_bytes(model.to_bytes())
    assert fresh.attrs["table"].terms == model.attrs["table"].terms
    numpy.testing.assert_array_equal(fresh.attrs["table"].idf, model.attrs["table"].idf)
    docs = [blank.make_doc(t) for t in TEXTS]
    numpy.testing.assert_array_equal(fresh.predict(docs).toarray(), model.predict(docs).toarray())


def test_tfidf_uninitialized_raises(blank):
    with pytest.raises(ValueError, match="initialize"):
        tfidf().predict([blank.make_doc("cat")])
