"""spacy_siamese.teacher.train: a teacher fine-tuned on pairs with sentence-transformers' trainer, on a
tiny BERT built in the test (tests/tiny_transformer.py)."""

import json

import numpy
import pytest

from spacy_siamese.corpora import PairRecord
from spacy_siamese.teacher import models, train

from ..conftest import PAIRS
from ..tiny_transformer import build_tiny_bert, require_teacher

RECORDS = [PairRecord(a, b, float(label), i + 1) for i, (a, b, label) in enumerate(PAIRS)]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert", [t for a, b, _ in PAIRS for t in (a, b)])


def test_sample_records_is_seeded_and_keeps_file_order():
    first = train.sample_records(RECORDS, 4, seed=1)
    assert first == train.sample_records(RECORDS, 4, seed=1)
    assert len(first) == 4 and [r.line for r in first] == sorted(r.line for r in first)
    assert first != train.sample_records(RECORDS, 4, seed=2)
    assert train.sample_records(RECORDS, 0, seed=1) == RECORDS == train.sample_records(RECORDS, 99, seed=1)


def test_a_cross_encoder_teacher_trains_and_loads_as_a_cross_encoder(base, tmp_path):
    st = require_teacher()
    out = tmp_path / "ce"
    info = train.train_teacher(RECORDS, out, base=str(base), kind="cross-encoder", batch_size=4, max_pairs=8)
    assert info["n_pairs"] == 8 and info["device"] in ("cpu", "cuda")
    assert json.loads((out / train.META).read_text())["kind"] == "cross-encoder"
    assert models.is_cross_encoder(out) and not models.is_cross_encoder(base)
    model = models.load_scorer(out)
    assert isinstance(model, st.CrossEncoder)
    scores = models.cross_encoder_scores(model, [(a, b) for a, b, _ in PAIRS])
    assert scores.shape == (len(PAIRS),) and ((scores > 0) & (scores < 1)).all()
    reloaded = st.CrossEncoder(str(out)).predict([(PAIRS[0][0], PAIRS[0][1])])
    numpy.testing.assert_allclose(reloaded, scores[:1], atol=1e-5)


def test_training_changes_the_weights_and_is_seeded(base, tmp_path):
    st = require_teacher()
    pairs = [(a, b) for a, b, _ in PAIRS]
    runs = [
        models.cross_encoder_scores(st.CrossEncoder(str(teacher_dir)), pairs)
        for teacher_dir in [
            _train(base, tmp_path / "a", epochs=2),
            _train(base, tmp_path / "b", epochs=2),
            _train(base, tmp_path / "c", epochs=2, learning_rate=1e-2),
        ]
    ]
    numpy.testing.assert_allclose(runs[0], runs[1], atol=1e-6)
    assert numpy.abs(runs[0] - runs[2]).max() > 1e-3


@pytest.mark.parametrize("kind", ["mnrl", "cosent"])
def test_a_bi_encoder_teacher_trains_and_loads_as_a_sentence_transformer(base, tmp_path, kind):
    st = require_teacher()
    out = tmp_path / kind
    info = train.train_teacher(RECORDS, out, base=str(base), kind=kind, batch_size=4)
    assert info["n_pairs"] == (5 if kind == "mnrl" else 10)  # mnrl: the positives
    assert not models.is_cross_encoder(out)
    vectors = st.SentenceTransformer(str(out)).encode(["Why is the sky blue?"])
    assert vectors.shape == (1, 16)


def test_bad_settings_are_refused_before_training(base, tmp_path):
    with pytest.raises(ValueError, match="Unknown teacher kind 'bm25'"):
        train.train_teacher(RECORDS, tmp_path / "x", base=str(base), kind="bm25")
    with pytest.raises(ValueError, match="batch_size >= 1"):
        train.train_teacher(RECORDS, tmp_path / "x", base=str(base), batch_size=0)
    require_teacher()
    negatives = [r for r in RECORDS if r.label < 0.5]
    with pytest.raises(ValueError, match="it needs positives"):
        train.train_teacher(negatives, tmp_path / "x", base=str(base), kind="mnrl")
    assert not (tmp_path / "x").exists()


def test_a_missing_extra_names_it(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=r"spacy-siamese\[teacher\]"):
        train.train_teacher(RECORDS, tmp_path / "x", base="any")


def test_a_base_whose_weights_are_a_pickle_is_refused_naming_the_file(tmp_path):
    """Issue 75 (7): torch's refusal of a pickle with code in it was a raw UnpicklingError."""
    require_teacher()
    import torch

    base = build_tiny_bert(tmp_path / "bert", ["a b"])
    (base / "model.safetensors").unlink()
    torch.save({"weights": Payload()}, base / "pytorch_model.bin")
    for kind in ("cross-encoder", "cosent"):
        with pytest.raises(ValueError, match=r"pytorch_model\.bin: torch refuses to load this pickle.*safetensors"):
            train.train_teacher(RECORDS, tmp_path / "out", base=str(base), kind=kind)
    assert not (tmp_path / "out").exists()


def test_a_teacher_with_damaged_weights_or_config_is_named(tmp_path):
    """Random bytes in model.safetensors, or a config.json that is a JSON list, were raw tracebacks."""
    require_teacher()
    base = build_tiny_bert(tmp_path / "bert", ["a b"])
    (base / "model.safetensors").write_bytes(b"\x00" * 7)
    with pytest.raises(ValueError, match=r"bert/model\.safetensors: not a whole safetensors file"):
        models.load_teacher(str(base))
    (base / "config.json").write_text("[]")
    with pytest.raises(ValueError, match=r"bert/config\.json: a JSON list, not an object"):
        models.is_cross_encoder(base)


class Payload:
    """What a malicious pickle holds: code that would run on loading (torch refuses it)."""

    def __reduce__(self):
        return (print, ("the payload ran",))


def _train(base, out, **settings):
    train.train_teacher(RECORDS, out, base=str(base), batch_size=4, seed=3, **settings)
    return out
