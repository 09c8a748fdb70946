import numpy
import pytest
import spacy
from scipy.sparse import csr_matrix
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from thinc.api import Model

from spacy_siamese import make_pair_example
from spacy_siamese.architectures import build_cosine_similarity, build_s2net_encoder
from spacy_siamese.layers import cosine_similarity, projection, tfidf
from spacy_siamese.losses import PairwiseLogisticLoss

from .gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
TEXTS = [
    "the cat sat on the mat",
    "a dog sat on the log",
    "the cat chased the dog",
    "stocks fell as the market closed",
    "the market rallied and stocks rose",
    "bonds and stocks in the market",
]
S2NET = {
    "model": {
        "encoder": {"@architectures": "spacy-siamese.S2NetEncoder.v1", "width": 4, "min_df": 1},
        "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
    },
    "loss": {"@losses": "spacy-siamese.PairwiseLogisticLoss.v1", "gamma": 10.0},
}
PAIRS = [
    ("the cat sat on the mat", "the cat chased the dog", 1),
    ("a dog sat on the log", "the cat chased the dog", 1),
    ("stocks fell as the market closed", "the market rallied and stocks rose", 1),
    ("bonds and stocks in the market", "stocks fell as the market closed", 1),
    ("the cat sat on the mat", "stocks fell as the market closed", 0),
    ("a dog sat on the log", "bonds and stocks in the market", 0),
    ("the cat chased the dog", "the market rallied and stocks rose", 0),
    ("bonds and stocks in the market", "a dog sat on the log", 0),
]


@pytest.fixture(scope="module")
def blank():
    return spacy.blank("en")


def _fitted(blank, texts=TEXTS, **kwargs) -> Model:
    model = tfidf(**kwargs)
    model.initialize(X=[blank.make_doc(t) for t in texts])
    return model


# TF-IDF featuriser


def test_tfidf_matches_sklearn(blank):
    for sublinear in (False, True):
        model = _fitted(blank, sublinear_tf=sublinear, drop_punct=False)
        terms = model.attrs["table"].terms
        ref = TfidfVectorizer(token_pattern=r"\S+", vocabulary=terms, sublinear_tf=sublinear).fit(TEXTS)
        X = model.predict([blank.make_doc(t) for t in TEXTS])
        assert X.shape == (6, len(terms)) and model.get_dim("nO") == len(terms)
        numpy.testing.assert_allclose(X.toarray(), ref.transform(TEXTS).toarray(), rtol=1e-5, atol=1e-6)
        numpy.testing.assert_allclose(numpy.linalg.norm(X.toarray(), axis=1), 1.0, rtol=1e-5)


def test_tfidf_options(blank):
    texts = ["The CAT, the cat!", "A cat and a dog.", "Dogs bark."]
    terms = lambda **kw: set(_fitted(blank, texts, **kw).attrs["table"].terms)  # noqa: E731
    assert terms(drop_punct=False) >= {",", "!", ".", "the", "cat"}
    assert not terms() & {",", "!", "."}
    assert "the" not in terms(drop_stop=True) and "a" not in terms(drop_stop=True)
    assert "The" in terms(attr="orth") and "CAT" in terms(attr="orth")
    assert "cat" in terms(attr="lemma")  # no lemmatizer: lower-case fallback
    assert terms(min_df=2) == {"cat"}  # "a" occurs twice but in one doc
    assert terms(max_vocab=1) == {"cat"}  # the most frequent by document frequency
    raw = _fitted(blank, texts, normalize=False)
    X = raw.predict([blank.make_doc("cat cat cat")]).toarray()[0]
    col = raw.attrs["table"].terms.index("cat")
    assert X[col] == pytest.approx(3 * raw.attrs["table"].idf[col])
    sub = _fitted(blank, texts, normalize=False, sublinear_tf=True)
    assert sub.predict([blank.make_doc("cat cat cat")]).toarray()[0, col] == pytest.approx(
        (1 + numpy.log(3)) * sub.attrs["table"].idf[col]
    )
    with pytest.raises(ValueError, match="attr"):
        tfidf(attr="shape")
    with pytest.raises(ValueError, match="min_df"):
        _fitted(blank, texts, min_df=10)


def test_tfidf_unknown_terms_and_empty_docs(blank):
    model = _fitted(blank)
    X = model.predict([blank.make_doc(t) for t in ("zebra quantum", "", "   ", "cat zebra")])
    assert X.shape[0] == 4
    assert X[0].nnz == 0 and X[1].nnz == 0 and X[2].nnz == 0
    assert X[3].nnz == 1 and X[3].data[0] == pytest.approx(1.0)


def test_tfidf_fit_counts_distinct_texts_once(blank):
    once = _fitted(blank, TEXTS)
    repeated = _fitted(blank, TEXTS + [TEXTS[0]] * 5)
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


# Projection


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
    Y, backprop = model(X, is_train=True)
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
    assert_grad_close(model.get_grad("W"), 2 * numeric)
    assert not model.get_grad("W")[[2, 3, 5]].any()  # terms absent from the batch
    assert model.get_grad("W")[[0, 1, 4]].all()


def test_projection_lsa_init_is_truncated_svd(blank):
    featuriser = _fitted(blank)
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


# Cosine


def test_cosine_values_gradients_and_zero_vectors():
    A, B = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    A[3] = 0.0
    model = cosine_similarity()
    model.initialize(X=(A, B))
    Y = model.predict((A, B))[:, 0]
    expected = (A * B).sum(1) / (numpy.linalg.norm(A, axis=1) * numpy.linalg.norm(B, axis=1) + 1e-30)
    numpy.testing.assert_allclose(Y, expected, atol=1e-12)
    assert Y[3] == 0.0 and numpy.isfinite(Y).all()
    numpy.testing.assert_allclose(model.predict((A, A))[[0, 1, 2, 4], 0], 1.0)
    R = rng.normal(size=(5, 1))
    loss = lambda: float((model.predict((A, B)) * R).sum())  # noqa: E731
    _, backprop = model((A, B), is_train=True)
    dA, dB = backprop(R)
    rows = [0, 1, 2, 4]  # the zero row is not differentiable: its gradient is defined as 0
    assert_grad_close(dA[rows], numeric_grad(loss, A, 1e-6)[rows])
    assert_grad_close(dB, numeric_grad(loss, B, 1e-6))
    assert not dA[3].any()
    rescaled = build_cosine_similarity(rescale=True)
    numpy.testing.assert_allclose(rescaled.predict((A, B))[:, 0], (Y + 1) / 2)
    numpy.testing.assert_array_equal(model.predict((A, B)), model.predict((B, A)))


# Pairwise logistic loss


def test_pairwise_logistic_loss_value_and_gradient():
    loss = PairwiseLogisticLoss(gamma=10.0)
    scores = numpy.array([[0.9], [0.2]])
    _, value = loss(scores, numpy.array([1.0, 0.0]))
    assert value == pytest.approx(numpy.log1p(numpy.exp(-10 * 0.7)))
    scores = rng.uniform(-1, 1, size=(7, 1))
    truths = numpy.array([1.0, 0.0, 1.0, 0.5, 0.0, 1.0, 0.0])
    d, _ = loss(scores, truths)
    numeric = numeric_grad(lambda: loss(scores, truths)[1], scores, 1e-6)
    assert_grad_close(d, numeric)
    d, value = loss(scores, numpy.ones(7))  # no pair with different labels
    assert value == 0.0 and not d.any()


# The S2Net model in the pipe


def _s2net_nlp(**cfg):
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config={**S2NET, **cfg})
    return nlp


def _train(nlp, n_iter=60):
    spacy.util.fix_random_seed(0)
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in PAIRS]
    optimizer = nlp.initialize(lambda: examples)
    losses = {}
    for _ in range(n_iter):
        losses = nlp.update(examples, sgd=optimizer)
    return nlp, losses["siamese_similarity"]


@pytest.fixture(scope="module")
def trained():
    return _train(_s2net_nlp())


def test_s2net_overfits_tiny_pairs(trained):
    nlp, loss = trained
    assert loss < 0.05
    pipe = nlp.get_pipe("siamese_similarity")
    scores, labels = pipe.pair_scores([make_pair_example(nlp, a, b, y) for a, b, y in PAIRS])
    assert scores[labels == 1].min() > scores[labels == 0].max()


def test_s2net_squared_error_trains():
    nlp, loss = _train(_s2net_nlp(loss={"@losses": "spacy-siamese.SquaredError.v1"}), n_iter=100)
    assert loss < 0.1
    scores, labels = nlp.get_pipe("siamese_similarity").pair_scores([make_pair_example(nlp, a, b, y) for a, b, y in PAIRS])
    assert scores[labels == 1].min() > scores[labels == 0].max()


def test_s2net_empty_and_unknown_docs(trained):
    nlp, _ = trained
    empty, unknown, cat = nlp(""), nlp("zebra quantum"), nlp("the cat sat")
    for doc in (empty, unknown):
        assert not doc.vector.any()
        assert doc.similarity(cat) == 0.0 and doc.similarity(empty) == 0.0
    assert numpy.isfinite(cat.similarity(nlp("cat dog")))


def test_s2net_serialization_round_trip(trained, tmp_path):
    nlp, _ = trained
    docs = [nlp(t) for t in TEXTS]
    expected = [a.similarity(b) for a in docs for b in docs]
    restored = _s2net_nlp()
    restored.from_bytes(nlp.to_bytes())
    nlp.to_disk(tmp_path / "s2net")
    loaded = spacy.load(tmp_path / "s2net")
    for other in (restored, loaded):
        featuriser = other.get_pipe("siamese_similarity").encoder.layers[0]
        assert featuriser.attrs["table"].terms == nlp.get_pipe("siamese_similarity").encoder.layers[0].attrs["table"].terms
        docs2 = [other(t) for t in TEXTS]
        assert [a.similarity(b) for a in docs2 for b in docs2] == expected


def test_s2net_encoder_builder():
    model = build_s2net_encoder(width=7, init="random")
    assert model.attrs["fit_on_corpus"] is True and model.get_dim("nO") == 7


def test_s2net_configs_load():
    from pathlib import Path

    from spacy.util import load_config, load_model_from_config

    for path in sorted((Path(__file__).parents[1] / "configs").glob("s2net_*.cfg")):
        nlp = load_model_from_config(load_config(path), auto_fill=True, validate=True)
        assert nlp.pipe_names == ["siamese_similarity"], path
