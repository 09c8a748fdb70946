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


def test_calibrate_saves_into_a_new_directory(collection, tmp_path):
    """As the other commands write their outputs: missing parent directories are made."""
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    out = tmp_path / "models" / "calibrated"
    result = invoke("calibrate", collection / "model", pairs, "--precision", 0.75, "--output", out)
    assert result.exit_code == 0, result.output
    assert spacy.load(out).get_pipe("siamese_similarity").cfg["dedupe_precision"] == 0.75


def test_calibrate_saves_nothing_when_no_threshold_reaches_the_precision(collection, tmp_path):
    """Pairs without a duplicate reach no precision: saving would drop the pipeline's threshold."""
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": 0} for a, b, _ in PAIRS])
    result = invoke("calibrate", collection / "model", pairs, "--output", tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert "No threshold reaches precision" in result.output and "nothing saved" in result.output
    assert not (tmp_path / "out").exists()
