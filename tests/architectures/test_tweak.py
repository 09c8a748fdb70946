"""spacy-siamese.TweakEncoder.v1: the builder, the model in the pipe, and the tweak_quora config
(the tweak layer itself: tests/layers/test_tweak.py)."""

import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from spacy_siamese.architectures import build_tweak_encoder

from ..conftest import PAIRS, pair_examples

TWEAK_CONFIG = {
    "model": {
        "@architectures": "spacy-siamese.Siamese.v1",
        "encoder": {"@architectures": "spacy-siamese.TweakEncoder.v1", "width": 512, "min_df": 1},
        "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
    },
    "loss": {"@losses": "spacy-siamese.LogLoss.v2"},
}


def _tweak_nlp():
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config=TWEAK_CONFIG)
    return nlp


def test_tweak_encoder_fits_on_corpus():
    assert build_tweak_encoder().attrs["fit_on_corpus"] is True


def test_tweak_pipe_symmetry_overfit_and_disk_round_trip(tmp_path):
    nlp = _tweak_nlp()
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.1
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(60):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < 0.6 * first
    pipe = nlp.get_pipe("siamese_similarity")
    scores = {(a, b): nlp(a).similarity(nlp(b)) for a, b, _ in PAIRS}
    for (a, b), score in scores.items():
        assert nlp(b).similarity(nlp(a)) == score
    pos = [scores[(a, b)] for a, b, y in PAIRS if y == 1]
    neg = [scores[(a, b)] for a, b, y in PAIRS if y == 0]
    assert min(pos) > max(neg)
    nlp.to_disk(tmp_path / "tweak")
    loaded = spacy.load(tmp_path / "tweak")
    for (a, b), score in scores.items():
        assert loaded(a).similarity(loaded(b)) == pytest.approx(score, abs=1e-6)
    assert pipe.encoder.attrs["table"].terms == loaded.get_pipe("siamese_similarity").encoder.attrs["table"].terms


@pytest.mark.slow
def test_tweak_config_trains_with_spacy_train(tmp_path):
    root = Path(__file__).resolve().parents[2]
    data = root / "tests" / "data" / "project_mirror" / "quora"
    result = subprocess.run(
        [sys.executable, "-m", "spacy", "train", str(root / "configs" / "tweak_quora.cfg")]
        + ["--output", str(tmp_path / "out"), "--paths.train", str(data / "train.tsv")]
        + ["--paths.dev", str(data / "dev.tsv"), "--training.max_steps=20", "--training.eval_frequency=10"]
        + ["--corpora.train.format=auto", "--corpora.dev.format=auto"],  # the raw files, read by the same parser
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    nlp = spacy.load(tmp_path / "out" / "model-last")
    assert nlp.get_pipe("siamese_similarity").encoder.name == "tweak"
    a, b = nlp("How do I learn Python?"), nlp("What is the best way to learn Python?")
    duplicate, other = a.similarity(b), a.similarity(nlp("How tall is Mount Everest?"))
    assert duplicate == b.similarity(a) and duplicate > other  # a duplicate above a non-duplicate
