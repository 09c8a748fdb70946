"""spacy-siamese.StaticEncoder.v1 in the pipe: it trains, scores and round-trips (the layer
itself: tests/layers/test_hashed_mean.py)."""

import pytest
import spacy

from spacy_siamese.architectures import build_static_encoder

from ..conftest import PAIRS, pair_examples

STATIC_CONFIG = {
    "model": {
        "@architectures": "spacy-siamese.Siamese.v1",
        "encoder": {"@architectures": "spacy-siamese.StaticEncoder.v1", "width": 32, "rows": 2000, "proj_width": 16},
        "comparison": {"@architectures": "spacy-siamese.CosineSimilarity.v1"},
    },
    "loss": {"@losses": "spacy-siamese.LogLoss.v2"},
}


def test_the_static_encoder_trains_in_the_pipe_and_round_trips(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config=STATIC_CONFIG)
    examples = pair_examples(nlp)
    optimizer = nlp.initialize(lambda: examples)
    optimizer.learn_rate = 0.05
    first = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    for _ in range(60):
        last = nlp.update(examples, sgd=optimizer)["siamese_similarity"]
    assert last < 0.6 * first
    scores = {(a, b): nlp(a).similarity(nlp(b)) for a, b, _ in PAIRS}
    pos = [scores[(a, b)] for a, b, y in PAIRS if y == 1]
    neg = [scores[(a, b)] for a, b, y in PAIRS if y == 0]
    assert min(pos) > max(neg)
    nlp.to_disk(tmp_path / "static")
    reloaded = spacy.load(tmp_path / "static")
    for (a, b), score in scores.items():
        assert reloaded(a).similarity(reloaded(b)) == pytest.approx(score, abs=1e-6)


def test_widths():
    assert build_static_encoder(width=8, rows=10).get_dim("nO") == 8
    assert build_static_encoder(width=8, rows=10, proj_width=4).get_dim("nO") == 4
    with pytest.raises(ValueError, match="proj_width >= 0"):
        build_static_encoder(proj_width=-1)
