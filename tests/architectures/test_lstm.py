"""spacy-siamese.LSTMEncoder.v1 and SentenceLSTMEncoder.v1 (the layers: tests/layers/test_recurrent.py
and tests/layers/test_sentence_vectors.py; the LSTM encoder trained in the pipe with each comparison:
tests/test_component_training.py)."""

import numpy
import pytest
import spacy
from thinc.api import chain

from spacy_siamese import make_pair_example
from spacy_siamese.architectures import build_lstm_encoder, build_sentence_lstm_encoder

from ..conftest import exp_l1_reference, set_random_vectors

SMALL = {"width": 16, "hidden_width": 8, "attrs": ["NORM", "SHAPE"], "rows": [300, 50], "include_static_vectors": False}
WORDS = "the cat sat on mat dog ran far away . a big red ball".split()


def _docs(nlp, texts):
    return [nlp.make_doc(t) for t in texts]


def _vectors_nlp():
    return set_random_vectors(spacy.blank("en"), WORDS, 6)


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
    with pytest.raises(ValueError, match=r"unknown token attribute\(s\) \['LEMMA_'\]"):
        build_lstm_encoder(**{**SMALL, "attrs": ["NORM", "LEMMA_"]})


@pytest.mark.parametrize("dropout", [1.0, 1.5, -0.1])
def test_lstm_encoders_refuse_a_dropout_outside_0_1(dropout):
    """A rate of 1 or more silently zeroed every token feature in training; a negative one was no dropout."""
    from spacy_siamese.architectures import build_sentence_lstm_encoder

    with pytest.raises(ValueError, match=f"LSTMEncoder: dropout must be in \\[0, 1\\), got {dropout}"):
        build_lstm_encoder(**SMALL, dropout=dropout)
    with pytest.raises(ValueError, match=f"SentenceLSTMEncoder: dropout must be in \\[0, 1\\), got {dropout}"):
        build_sentence_lstm_encoder(dropout=dropout)


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
    empty = nlp("")
    assert empty.similarity(a) == pytest.approx(exp_l1_reference(empty, a), rel=1e-5) and empty.similarity(a) < 1.0


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


@pytest.mark.parametrize("attrs", [[], ["NORM"]])
def test_lstm_encoder_with_static_vectors_on_a_batch_without_tokens(attrs):
    """spaCy's StaticVectors gives no sequences for a batch without a single token: static vectors
    alone gave no rows for the docs, with hash embeddings blis raised a shape mismatch."""
    nlp = _vectors_nlp()
    model = build_lstm_encoder(width=8, hidden_width=6, attrs=attrs, rows=[50] * len(attrs), bidirectional=True)
    model.initialize(X=_docs(nlp, ["the cat sat"]))
    for texts in ([""], ["", ""], []):
        Y, backprop = model(_docs(nlp, texts), is_train=True)
        assert Y.shape == (len(texts), 6) and Y.dtype == numpy.float32 and not Y.any()
        backprop(Y)
    nlp.add_pipe(
        "siamese_similarity",
        config={
            "model": {
                "encoder": {
                    "@architectures": "spacy-siamese.LSTMEncoder.v1",
                    "width": 8,
                    "hidden_width": 6,
                    "attrs": attrs,
                    "rows": [50] * len(attrs),
                },
                "comparison": {"@architectures": "spacy-siamese.ExpL1Similarity.v1"},
            },
            "loss": {"@losses": "spacy-siamese.SquaredError.v1"},
        },
    )
    optimizer = nlp.initialize(lambda: [make_pair_example(nlp, "the cat", "a dog", 0.5)])
    losses = nlp.update([make_pair_example(nlp, "", "", 0.5)], sgd=optimizer)  # a batch of empty texts
    assert numpy.isfinite(losses["siamese_similarity"])


@pytest.mark.parametrize("sentences", [False, True])
def test_lstm_encoders_encode_a_doc_alone_as_beside_a_much_longer_one(sentences):
    """Padding does not leak: a doc's vector does not depend on the docs that share its batch."""
    nlp = _vectors_nlp()
    if sentences:
        model = build_sentence_lstm_encoder(hidden_width=6, bidirectional=True, pooling="last")
    else:
        model = build_lstm_encoder(width=8, hidden_width=6, attrs=["NORM"], rows=[50], bidirectional=True)
    long_doc = nlp.make_doc(" ".join(["the cat sat on the mat ."] * 300))
    short = _docs(nlp, ["a dog", "the big red ball . a cat ran", "unknownword", ""])
    model.initialize(X=short + [long_doc])
    together = model.predict(short + [long_doc])
    assert together.dtype == numpy.float32 and numpy.isfinite(together).all()
    for doc, vector in zip(short, together):
        numpy.testing.assert_allclose(model.predict([doc])[0], vector, rtol=1e-5, atol=1e-6)
