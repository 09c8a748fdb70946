import numpy
import pytest
import spacy
from scipy.stats import spearmanr
from thinc.api import chain

from spacy_siamese import make_pair_example
from spacy_siamese.architectures import build_lstm_encoder
from spacy_siamese.layers import exp_l1_similarity, lstm, sentence_vectors, sequence_pool, siamese

from .gradcheck import assert_grad_close, numeric_grad

SMALL = {"width": 16, "hidden_width": 8, "attrs": ["NORM", "SHAPE"], "rows": [300, 50], "include_static_vectors": False}
GRADED = [
    ("A man is playing a guitar.", "A man plays the guitar.", 0.95),
    ("A man is playing a guitar.", "A woman is slicing an onion.", 0.0),
    ("A dog runs in the park.", "A dog is running on the grass.", 0.75),
    ("A dog runs in the park.", "A cat sleeps on the sofa.", 0.2),
    ("Two kids are swimming.", "Children are swimming in a pool.", 0.8),
    ("Two kids are swimming.", "A man is riding a horse.", 0.05),
    ("The woman is cooking dinner.", "A woman cooks a meal.", 0.9),
    ("The woman is cooking dinner.", "A woman is reading a book.", 0.35),
]


def _docs(nlp, texts):
    return [nlp.make_doc(t) for t in texts]


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("pooling", ["last", "mean", "max"])
def test_lstm_encoder_shapes_and_empty_docs(bidirectional, pooling):
    nlp = spacy.blank("en")
    model = build_lstm_encoder(**SMALL, bidirectional=bidirectional, pooling=pooling)
    docs = _docs(nlp, ["A man is playing.", "", "Hi"])
    model.initialize(X=docs)
    Y, backprop = model(docs, is_train=True)
    assert Y.shape == (3, 8) and numpy.isfinite(Y).all()
    assert not Y[1].any()  # an empty doc is the zero vector
    backprop(numpy.ones_like(Y))
    assert numpy.array_equal(model.predict(_docs(nlp, ["", ""])), numpy.zeros((2, 8), dtype="f"))


def test_lstm_last_state_is_the_final_output():
    """'last' for a bidirectional LSTM: the forward half at the end, the backward half at the start."""
    nlp = spacy.blank("en")
    pooled = build_lstm_encoder(**SMALL, bidirectional=True, pooling="last")
    doc = nlp.make_doc("one two three four")
    pooled.initialize(X=[doc])
    features = chain(*pooled.layers[:3])  # embeddings, dropout, LSTM
    H = features.predict([doc])[0]
    numpy.testing.assert_allclose(pooled.predict([doc])[0], numpy.concatenate([H[-1, :4], H[0, 4:]]), rtol=1e-6)


def test_lstm_encoder_rejects_bad_settings():
    with pytest.raises(ValueError, match="pooling must be one of"):
        build_lstm_encoder(pooling="first")
    with pytest.raises(ValueError, match="even hidden_width"):
        build_lstm_encoder(bidirectional=True, hidden_width=7)
    with pytest.raises(ValueError, match="no token features"):
        build_lstm_encoder(attrs=[], include_static_vectors=False)


@pytest.mark.parametrize("norm", ["l1", "l2"])
@pytest.mark.parametrize("pooling", ["last", "mean"])
def test_gradients_through_the_siamese_lstm(norm, pooling):
    """Finite differences through Siamese(LSTM -> pooling, exp(-L1/L2)) on float64 sequences
    standing in for the token features: the LSTM weights and the inputs of both sides."""
    rng = numpy.random.default_rng(0)
    encoder = chain(lstm(nO=6, nI=3, bidirectional=True), sequence_pool(mode=pooling, bidirectional=True))
    model = siamese(encoder=encoder, comparison=exp_l1_similarity(norm=norm, scale=0.5))
    side_a = [rng.normal(size=(n, 3)) for n in (4, 2, 0)]
    side_b = [rng.normal(size=(n, 3)) for n in (3, 2, 1)]
    model.initialize(X=(side_a, side_b))
    recurrent = encoder.layers[0]
    for name in recurrent.param_names:
        recurrent.set_param(name, rng.normal(size=recurrent.get_param(name).shape) * 0.5)
    R = rng.normal(size=(3, 1))
    _, backprop = model((side_a, side_b), is_train=True)
    backprop(R)
    loss = lambda: float((model.predict((side_a, side_b)) * R).sum())  # noqa: E731
    for name in recurrent.param_names:
        assert_grad_close(recurrent.get_grad(name), numeric_grad(loss, recurrent.get_param(name), 1e-6))


def _graded_nlp(comparison=None):
    nlp = spacy.blank("en")
    config = {
        "model": {"encoder": {"@architectures": "spacy-siamese.LSTMEncoder.v1", **SMALL}},
        "loss": {"@losses": "spacy-siamese.SquaredError.v1"},
    }
    config["model"]["comparison"] = comparison or {"@architectures": "spacy-siamese.ExpL1Similarity.v1"}
    nlp.add_pipe("siamese_similarity", config=config)
    return nlp


def test_lstm_expl1_overfits_a_tiny_graded_set():
    spacy.util.fix_random_seed(0)
    nlp = _graded_nlp()
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in GRADED]
    optimizer = nlp.initialize(lambda: examples)
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(150):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < first / 5
    scores = [nlp(a).similarity(nlp(b)) for a, b, _ in GRADED]
    assert spearmanr(scores, [y for _, _, y in GRADED])[0] > 0.9
    a, b = nlp("A man is playing a guitar."), nlp("A woman is slicing an onion.")
    assert a.similarity(b) == b.similarity(a)
    empty = nlp("")
    assert 0.0 < empty.similarity(a) <= 1.0 and empty.similarity(nlp("")) == 1.0
    metrics = nlp.evaluate(examples)
    assert {"sim_pearson", "sim_spearman", "sim_mse", "sim_mae"} <= set(metrics)
    assert metrics["sim_mse"] < 0.05 and metrics["sim_mae"] < 0.2


@pytest.mark.parametrize(
    "comparison",
    [
        {"@architectures": "spacy-siamese.CauchySimilarity.v1"},
        {"@architectures": "spacy-siamese.CosineSimilarity.v1", "rescale": True},
        {"@architectures": "spacy-siamese.FeatureHead.v1", "hidden_width": 8},
        {"@architectures": "spacy-siamese.ExpL1Similarity.v1", "norm": "l2"},
    ],
    ids=["cauchy", "cosine", "feature_head", "exp_l2"],
)
def test_other_comparisons_work_with_the_lstm_encoder(comparison):
    spacy.util.fix_random_seed(0)
    nlp = _graded_nlp(comparison)
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in GRADED]
    optimizer = nlp.initialize(lambda: examples)
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(30):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < first
    a, b = nlp("Two kids are swimming."), nlp("A man is riding a horse.")
    assert a.similarity(b) == b.similarity(a) and 0.0 <= a.similarity(b) <= 1.0


def _vectors_nlp():
    nlp = spacy.blank("en")
    rng = numpy.random.default_rng(0)
    for word in "the cat sat on mat dog ran far away . a big red ball".split():
        nlp.vocab.set_vector(word, rng.normal(size=(6,)).astype("f"))
    return nlp


def test_sentence_vectors_average_each_sentence():
    nlp = _vectors_nlp()
    doc = nlp.make_doc("the cat sat . the dog ran far away . unknownword")
    model = sentence_vectors()
    model.initialize(X=[doc])
    (S,) = model.predict([doc])
    assert S.shape == (3, 6)
    expected = numpy.mean([nlp.vocab.get_vector(w) for w in ["the", "cat", "sat", "."]], axis=0)
    numpy.testing.assert_allclose(S[0], expected, rtol=1e-6)
    assert not S[2].any()  # no token with a vector
    assert model.predict([nlp.make_doc("")])[0].shape == (0, 6)
    assert not doc.has_annotation("SENT_START")  # the doc is not changed


def test_sentence_lstm_encoder_trains_on_documents():
    spacy.util.fix_random_seed(0)
    nlp = _vectors_nlp()
    nlp.add_pipe(
        "siamese_similarity",
        config={
            "model": {
                "encoder": {"@architectures": "spacy-siamese.SentenceLSTMEncoder.v1", "hidden_width": 8},
                "comparison": {"@architectures": "spacy-siamese.ExpL1Similarity.v1"},
            },
            "loss": {"@losses": "spacy-siamese.SquaredError.v1"},
        },
    )
    docs = [
        ("the cat sat on the mat . a cat sat .", "the cat sat . the mat .", 0.9),
        ("the cat sat on the mat . a cat sat .", "a big red ball . the dog ran far away .", 0.1),
        ("the dog ran far away .", "a dog ran away . the dog ran .", 0.8),
        ("the dog ran far away .", "a big red ball .", 0.2),
    ]
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in docs]
    optimizer = nlp.initialize(lambda: examples)
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(60):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < first / 2
    a, b = nlp(docs[0][0]), nlp(docs[1][1])
    assert a.similarity(b) == b.similarity(a)
    assert 0.0 < nlp("").similarity(a) <= 1.0


def test_lstm_encoder_on_static_vectors_alone():
    """The reference configs' features: a learned projection of the static vectors only."""
    nlp = _vectors_nlp()
    model = build_lstm_encoder(width=8, hidden_width=6, attrs=[], bidirectional=True, pooling="mean")
    docs = _docs(nlp, ["the cat sat", "", "unknownword dog"])
    model.initialize(X=docs)
    assert any(node.name == "static_vectors" for node in model.walk())
    Y, backprop = model(docs, is_train=True)
    assert Y.shape == (3, 6) and not Y[1].any() and numpy.isfinite(Y).all()
    backprop(numpy.ones_like(Y))
