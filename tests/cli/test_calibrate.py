"""`python -m spacy_siamese calibrate`."""

import pytest
import spacy
import srsly

from spacy_siamese.metrics import precision_threshold
from spacy_siamese.pair_examples import make_pair_example

from ..conftest import PAIRS
from .conftest import invoke


def test_calibrate_sets_and_saves_the_dedupe_threshold(collection, tmp_path):
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    out = tmp_path / "calibrated"
    result = invoke("calibrate", collection / "model", pairs, "--precision", 0.75, "--output", out)
    assert result.exit_code == 0, result.output
    nlp = spacy.load(out)
    pipe = nlp.get_pipe("siamese_similarity")
    scores, labels = pipe.pair_scores([make_pair_example(nlp, a, b, y) for a, b, y in PAIRS])
    assert pipe.dedupe_threshold == pytest.approx(precision_threshold(scores, labels, 0.75), abs=1e-6)
    assert pipe.cfg["dedupe_precision"] == 0.75 and f"dedupe_threshold = {pipe.dedupe_threshold:g}" in result.output
    assert spacy.load(collection / "model").get_pipe("siamese_similarity").dedupe_threshold is None  # not in place


def test_calibrate_refuses_graded_pairs_and_bad_precision(collection, tmp_path):
    pairs = tmp_path / "graded.jsonl"
    srsly.write_jsonl(pairs, [{"text1": "a b", "text2": "a c", "label": 0.4}])
    result = invoke("calibrate", collection / "model", pairs, "--output", tmp_path / "o")
    assert result.exit_code == 1 and "labelled 0 or 1" in result.output
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    result = invoke("calibrate", collection / "model", pairs, "--precision", 1.5, "--output", tmp_path / "o")
    assert result.exit_code == 1 and "dedupe_precision" in result.output
