import numpy
import pytest
import spacy

from spacy_siamese.evaluation import averaged_vectors, fit_tfidf, load_vectors, lsa, tfidf_cosine, tfidf_vectors
from spacy_siamese.evaluation.baselines import find_tfidf, tfidf_settings
from spacy_siamese.layers import tfidf
from spacy_siamese.util import distinct_pair_texts

ROWS = [
    (1, "How do I learn Python quickly?", "How can I learn Python quickly?"),
    (0, "What is the capital of France?", "Why do cats purr when they sleep?"),
    (1, "What is the best way to lose weight?", "What is the best way to lose weight fast?"),
    (0, "How do I cook rice in a microwave?", "Who won the football world cup in 2014?"),
    (1, "Why is the sky blue?", "Why is the sky blue during the day?"),
    (0, "How can I improve my English writing?", "What are good places to visit in Japan?"),
]


@pytest.fixture(scope="module")
def tokenized():
    nlp = spacy.blank("en")
    texts = distinct_pair_texts((a, b) for _, a, b in ROWS)
    return {text: nlp.make_doc(text) for text in texts}


def test_tfidf_near_duplicate_beats_unrelated(tokenized):
    model = fit_tfidf(tokenized.values(), min_df=1)
    a = [tokenized[r[1]] for r in ROWS]
    b = [tokenized[r[2]] for r in ROWS]
    scores = tfidf_cosine(model, a, b)
    assert scores.shape == (len(ROWS),)
    assert min(s for s, r in zip(scores, ROWS) if r[0]) > max(s for s, r in zip(scores, ROWS) if not r[0])
    assert scores.min() >= 0.0 and scores.max() <= 1.0
    assert tfidf_cosine(model, b, a) == pytest.approx(scores)  # symmetric
    assert tfidf_cosine(model, a, a) == pytest.approx(1.0)


def test_tfidf_cosine_is_the_package_layer(tokenized):
    """The baseline is the `tfidf` layer with its defaults: cosine = dot product of its rows."""
    docs = list(tokenized.values())
    model = fit_tfidf(docs)
    layer = tfidf()
    layer.initialize(X=docs)
    assert tfidf_settings(model) == tfidf_settings(layer)
    X = layer.predict(docs[:2])
    assert tfidf_cosine(model, docs[:1], docs[1:2])[0] == pytest.approx(X[0].multiply(X[1]).sum(), abs=1e-6)


def test_tfidf_unknown_terms_score_zero(tokenized):
    model = fit_tfidf(tokenized.values(), min_df=1)
    nlp = spacy.blank("en")
    assert tfidf_cosine(model, [nlp("zebra xylophone")], [nlp("zebra xylophone")])[0] == 0.0
    assert tfidf_vectors(model, [nlp("Python")]).shape == (1, model.get_dim("nO"))


def test_find_tfidf():
    assert find_tfidf(fit_tfidf([spacy.blank("en")("a b"), spacy.blank("en")("b c")], min_df=1)) is not None
    assert find_tfidf(tfidf()) is None  # not fitted


def test_lsa_keeps_the_geometry_of_a_low_rank_matrix():
    rng = numpy.random.default_rng(0)
    X = rng.random((30, 3)) @ rng.random((3, 20))  # rank 3
    from scipy.sparse import csr_matrix

    Y = lsa(csr_matrix(X), csr_matrix(X[:5]), width=3)
    assert Y.shape == (5, 3)
    assert numpy.linalg.norm(Y, axis=1) == pytest.approx(numpy.linalg.norm(X[:5], axis=1))
    assert lsa(csr_matrix(X), csr_matrix(X[:5]), width=50).shape == (5, 19)  # at most n_terms - 1
    with pytest.raises(ValueError, match="LSA needs"):
        lsa(csr_matrix(X[:1]), csr_matrix(X[:1]), width=2)


@pytest.fixture(scope="module")
def vectors_nlp():
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    for word in ("cats", "dogs", "purr", "bark", "rice", "cook"):
        nlp.vocab.set_vector(word, rng.normal(size=8).astype("f4"))
    return nlp


def test_averaged_vectors_is_spacy_default_similarity(vectors_nlp):
    a, b = ["cats purr", "cook rice"], ["dogs bark", "cats"]
    scores = averaged_vectors(vectors_nlp, a, b)
    for score, x, y in zip(scores, a, b):
        u = numpy.mean([vectors_nlp.vocab.get_vector(w) for w in x.split()], axis=0)
        v = numpy.mean([vectors_nlp.vocab.get_vector(w) for w in y.split()], axis=0)
        assert score == pytest.approx(u @ v / numpy.linalg.norm(u) / numpy.linalg.norm(v), abs=1e-6)
        assert score == pytest.approx(vectors_nlp(x).similarity(vectors_nlp(y)))
    assert averaged_vectors(vectors_nlp, ["zzz"], ["cats"])[0] == 0.0  # no vector: 0, as in spaCy


def test_averaged_vectors_needs_vectors():
    with pytest.raises(ValueError, match="no static word vectors"):
        averaged_vectors(spacy.blank("en"), ["a"], ["b"])


def test_load_vectors(vectors_nlp, tmp_path):
    vectors_nlp.to_disk(tmp_path / "vectors")
    nlp = load_vectors(tmp_path / "vectors")
    assert nlp.pipe_names == [] and nlp.vocab.vectors.n_keys == 6
    spacy.blank("en").to_disk(tmp_path / "none")
    with pytest.raises(ValueError, match="no static word vectors"):
        load_vectors(tmp_path / "none")
    with pytest.raises(FileNotFoundError, match="no such pipeline"):
        load_vectors(tmp_path / "missing")
