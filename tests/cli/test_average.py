"""`python -m spacy_siamese average`."""

import shutil

import numpy
import pytest
import spacy
import srsly

from spacy_siamese.metrics import best_threshold

from ..conftest import GRADED, PAIRS, fine_tune, make_nlp, pair_examples, train
from .conftest import invoke


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """Two pipelines trained further from one parent, saved, and the dev pairs."""
    root = tmp_path_factory.mktemp("average")
    parent = train(make_nlp(), n_iter=20)[0].to_bytes()
    for seed in (1, 2):
        fine_tune(parent, seed).to_disk(root / f"tuned{seed}")
    srsly.write_jsonl(root / "dev.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    srsly.write_jsonl(root / "graded.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in GRADED])
    return root


def test_average_saves_the_averaged_pipeline_with_tuned_thresholds(tuned, tmp_path):
    out = tmp_path / "models" / "averaged"
    result = invoke(
        "average", tuned / "tuned1", tuned / "tuned2", "--dev", tuned / "dev.jsonl", "-o", out, "--weights", "1,3"
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("| ")]
    assert lines[0] == "| pipeline | weight | acc | AUC | AP |" and "thresholds tuned on them" in result.output
    assert [line.split(" | ")[:2] for line in lines[1:]] == [
        [f"| {tuned / 'tuned1'}", "0.25"],
        [f"| {tuned / 'tuned2'}", "0.75"],
        [f"| average (saved to {out})", ""],
    ]
    nlp, first = spacy.load(out), spacy.load(tuned / "tuned1")
    pipe = nlp.get_pipe("siamese_similarity")
    assert pipe.model_id != first.get_pipe("siamese_similarity").model_id
    scores, labels = pipe.pair_scores(pair_examples(nlp))
    assert pipe.threshold == pytest.approx(best_threshold(scores, labels), abs=1e-6)
    assert pipe.dedupe_threshold is not None
    assert nlp.meta["averaged"] == {
        "pipelines": [str(tuned / "tuned1"), str(tuned / "tuned2")],
        "weights": [0.25, 0.75],
        "dev": str(tuned / "dev.jsonl"),
    }
    assert nlp.meta["performance"]["sim_threshold"] == pytest.approx(pipe.threshold)
    assert f"| {nlp.meta['performance']['sim_auc']:.3f} |" in lines[-1]
    assert not numpy.allclose(scores, first.get_pipe("siamese_similarity").pair_scores(pair_examples(first))[0])


def test_average_on_graded_pairs_shows_correlations(tuned, tmp_path):
    result = invoke("average", tuned / "tuned1", tuned / "tuned2", "--dev", tuned / "graded.jsonl", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    assert (
        "| pipeline | weight | Spearman | Pearson |" in result.output and "graded: no threshold tuned" in result.output
    )


@pytest.mark.parametrize(
    "pipelines,options,message",
    [
        (["tuned1"], [], "needs at least two pipelines, got 1"),
        (["tuned1", "tuned2"], ["--weights", "1,x"], "--weights: give numbers separated by commas, got '1,x'"),
        (["tuned1", "tuned2"], ["--weights", "1"], "1 weights for 2 pipelines"),
        (["tuned1", "tuned2"], ["--weights", "1,-2"], "at least 0"),
        (["tuned1", "missing"], [], "Model not found"),
    ],
)
def test_average_errors_are_one_line(tuned, tmp_path, pipelines, options, message):
    paths = [tuned / name for name in pipelines]
    result = invoke("average", *paths, *options, "--dev", tuned / "dev.jsonl", "-o", tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_average_needs_the_dev_file(tuned, tmp_path):
    missing = tmp_path / "nope.jsonl"
    result = invoke("average", tuned / "tuned1", tuned / "tuned2", "--dev", missing, "-o", tmp_path / "out")
    assert result.exit_code == 1 and "File not found" in result.output


def test_average_refuses_dev_pairs_all_of_one_kind(tuned, tmp_path):
    """Only duplicates as dev pairs saved thresholds of 1 (exit 0)."""
    dev = tmp_path / "dev.jsonl"
    dev.write_text('{"text1": "a", "text2": "a", "label": 1}\n{"text1": "b", "text2": "b", "label": 1}\n')
    result = invoke("average", tuned / "tuned1", tuned / "tuned2", "--dev", dev, "-o", tmp_path / "out")
    assert result.exit_code == 1 and "all 2 pairs of" in result.output and "are alike" in result.output
    assert not (tmp_path / "out").exists()


def test_average_never_saves_over_an_input_unless_told_in_place(tuned, tmp_path):
    dev = tuned / "dev.jsonl"
    for output in (tuned / "tuned1", tuned / "tuned2", tuned):  # a pipeline averaged, or the directory of the dev file
        result = invoke("average", tuned / "tuned1", tuned / "tuned2", "--dev", dev, "-o", output)
        assert result.exit_code == 1 and "would replace the input" in result.output, result.output
    result = invoke("average", tuned / "tuned1", tuned / "tuned2", "--dev", dev)
    assert result.exit_code == 1 and "--in-place" in result.output
    first = tmp_path / "first"
    shutil.copytree(tuned / "tuned1", first)
    before = spacy.load(first).get_pipe("siamese_similarity").model_id
    result = invoke("average", first, tuned / "tuned2", "--dev", dev, "--in-place")
    assert result.exit_code == 0, result.output
    assert spacy.load(first).meta["averaged"]["pipelines"] == [str(first), str(tuned / "tuned2")]
    assert spacy.load(first).get_pipe("siamese_similarity").model_id != before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["first"]
