"""spacy-siamese.S2NetEncoder.v1: the encoder builder and the model in the pipe."""

import numpy
import pytest
import spacy

from spacy_siamese import make_pair_example
from spacy_siamese.architectures import build_s2net_encoder

S2NET = {
    "model": {
        "encoder": {"@architectures": "spacy-siamese.S2NetEncoder.v1", "width": 4, "min_df": 1},
        "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
    },
    "loss": {"@losses": "spacy-siamese.PairwiseLogisticLoss.v1", "gamma": 10.0},
}
TEXTS = [
    "the cat sat on the mat",
    "a dog sat on the log",
    "the cat chased the dog",
    "stocks fell as the market closed",
    "the market rallied and stocks rose",
    "bonds and stocks in the market",
]
DOC_PAIRS = [
    (TEXTS[0], TEXTS[2], 1),
    (TEXTS[1], TEXTS[2], 1),
    (TEXTS[3], TEXTS[4], 1),
    (TEXTS[5], TEXTS[3], 1),
    (TEXTS[0], TEXTS[3], 0),
    (TEXTS[1], TEXTS[5], 0),
    (TEXTS[2], TEXTS[4], 0),
    (TEXTS[5], TEXTS[1], 0),
]


def test_s2net_encoder_builder():
    model = build_s2net_encoder(width=7, init="random")
    assert model.attrs["fit_on_corpus"] is True and model.get_dim("nO") == 7


def _s2net_nlp(**cfg):
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config={**S2NET, **cfg})
    return nlp


def _train_s2net(nlp, n_iter=60):
    spacy.util.fix_random_seed(0)
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in DOC_PAIRS]
    optimizer = nlp.initialize(lambda: examples)
    losses = {}
    for _ in range(n_iter):
        losses = nlp.update(examples, sgd=optimizer)
    return nlp, losses["siamese_similarity"]


def _separates(nlp) -> bool:
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in DOC_PAIRS]
    scores, labels = nlp.get_pipe("siamese_similarity").pair_scores(examples)
    return scores[labels == 1].min() > scores[labels == 0].max()


@pytest.fixture(scope="module")
def s2net():
    return _train_s2net(_s2net_nlp())


def test_s2net_overfits_tiny_pairs(s2net):
    nlp, loss = s2net
    assert loss < 0.05
    assert _separates(nlp)


def test_s2net_squared_error_trains():
    nlp, loss = _train_s2net(_s2net_nlp(loss={"@losses": "spacy-siamese.SquaredError.v1"}), n_iter=100)
    assert loss < 0.1
    assert _separates(nlp)


def test_s2net_empty_and_unknown_docs(s2net):
    nlp, _ = s2net
    empty, unknown, cat = nlp(""), nlp("zebra quantum"), nlp("the cat sat")
    for doc in (empty, unknown):
        assert not doc.vector.any()
        assert doc.similarity(cat) == 0.0 and doc.similarity(empty) == 0.0
    other = nlp("cat dog")
    a, b = numpy.asarray(cat.vector, "f8"), numpy.asarray(other.vector, "f8")
    cosine = a @ b / (numpy.linalg.norm(a) * numpy.linalg.norm(b))  # the cosine of the learned vectors
    assert cat.similarity(other) == pytest.approx(cosine, rel=1e-5) and cat.similarity(cat) == pytest.approx(1.0)


def test_s2net_serialization_round_trip(s2net, tmp_path):
    nlp, _ = s2net
    docs = [nlp(t) for t in TEXTS]
    expected = [a.similarity(b) for a in docs for b in docs]
    restored = _s2net_nlp()
    restored.from_bytes(nlp.to_bytes())
    nlp.to_disk(tmp_path / "s2net")
    loaded = spacy.load(tmp_path / "s2net")
    terms = nlp.get_pipe("siamese_similarity").encoder.layers[0].attrs["table"].terms
    for other in (restored, loaded):
        assert other.get_pipe("siamese_similarity").encoder.layers[0].attrs["table"].terms == terms
        docs2 = [other(t) for t in TEXTS]
        assert [a.similarity(b) for a in docs2 for b in docs2] == expected
