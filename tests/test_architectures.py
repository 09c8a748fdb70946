"""The registered encoders and heads of architectures.py, S2Net in the pipe, and pipelines
saved with the .v1 names."""

import inspect
import json
from pathlib import Path

import numpy
import pytest
import spacy
from spacy.util import registry

from spacy_siamese import make_pair_example
from spacy_siamese.architectures import (
    build_feature_head,
    build_mwe_encoder,
    build_mwe_encoder_v1,
    build_s2net_encoder,
)

from .conftest import PAIRS

V1_PIPELINE = Path(__file__).parent / "data" / "v1_pipeline"
rng = numpy.random.default_rng(0)


def test_feature_head_is_symmetric_and_trains():
    head = build_feature_head(hidden_width=8)
    A, B = rng.normal(size=(6, 5)).astype("f"), rng.normal(size=(6, 5)).astype("f")
    head.initialize(X=(A, B))
    numpy.testing.assert_array_equal(head.predict((A, B)), head.predict((B, A)))
    Y, backprop = head((A, B), is_train=True)
    assert Y.shape == (6, 1) and ((Y > 0) & (Y < 1)).all()
    dA, dB = backprop(numpy.ones_like(Y))
    assert dA.shape == A.shape and dB.shape == B.shape
    assert head.layers[-1].get_grad("W").any()  # the output layer starts at zero, so dA does too


@pytest.mark.parametrize("proj_width,squash", [(0, False), (12, True)])
def test_mwe_encoder_output_width(proj_width, squash):
    nlp = spacy.blank("en")
    docs = [nlp(a) for a, _, _ in PAIRS] + [nlp(""), nlp(" ")]
    model = build_mwe_encoder(width=8, depth=1, rows=50, post_depth=1, proj_width=proj_width, squash=squash)
    model.initialize(X=docs)
    Y = model.predict(docs)
    assert Y.shape == (len(docs), proj_width or 16) and model.get_dim("nO") == (proj_width or 16)
    if squash:
        assert ((Y > 0) & (Y < 1)).all()


def test_mwe_encoder_v1_keeps_its_defaults():
    """v2 differs from v1 only in the default post_depth (2, the factory default)."""
    v1 = inspect.signature(build_mwe_encoder_v1).parameters
    v2 = inspect.signature(build_mwe_encoder).parameters
    assert list(v1) == list(v2)
    assert {name for name in v1 if v1[name].default != v2[name].default} == {"post_depth"}
    assert v1["post_depth"].default == 0 and v2["post_depth"].default == 2


def test_mwe_encoder_v1_and_v2_build_the_same_model():
    nlp = spacy.blank("en")
    docs = [nlp(a) for a, _, _ in PAIRS]
    settings = {"width": 8, "depth": 1, "rows": [50, 20, 20, 20], "post_depth": 1, "proj_width": 12, "squash": True}
    outputs = []
    for name in ("spacy-siamese.MWEEncoder.v1", "spacy-siamese.MWEEncoder.v2"):
        spacy.util.fix_random_seed(0)
        model = registry.architectures.get(name)(**settings)
        model.initialize(X=docs)
        outputs.append((model.to_bytes(), model.predict(docs)))
    assert outputs[0][0] == outputs[1][0]
    numpy.testing.assert_array_equal(outputs[0][1], outputs[1][1])


def test_pipeline_saved_with_v1_names_loads_and_scores_the_same():
    """tests/data/v1_pipeline was trained and saved before the .v2 names existed (MWEEncoder.v1
    with post_depth/proj_width/squash, LogLoss.v1 with label_smoothing/distill, WithAuxiliary,
    TrainCalibrated, Cauchy, FeatureHead); its similarities were recorded then."""
    config = (V1_PIPELINE / "config.cfg").read_text(encoding="utf8")
    assert '"spacy-siamese.MWEEncoder.v1"' in config and '"spacy-siamese.LogLoss.v1"' in config
    expected = json.loads((V1_PIPELINE / "similarities.json").read_text(encoding="utf8"))["similarities"]
    nlp = spacy.load(V1_PIPELINE, exclude=["tokenizer", "vocab"])  # the fixture stores neither
    got = [nlp(a).similarity(nlp(b)) for a, b, _ in PAIRS]
    numpy.testing.assert_allclose(got, expected, rtol=1e-6)


# S2Net: the encoder builder and the model in the pipe

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
    assert -1.0 <= cat.similarity(nlp("cat dog")) <= 1.0 and cat.similarity(cat) == pytest.approx(1.0)


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
