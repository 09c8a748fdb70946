"""`python -m spacy_siamese calibrate`."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import srsly

from spacy_siamese.component import SiameseSimilarity, get_lexical_weight
from spacy_siamese.metrics import best_threshold, precision_threshold
from spacy_siamese.pair_examples import make_pair_example

from ..conftest import PAIRS, train
from ..search.conftest import build_nlp
from .conftest import invoke, runner


def test_calibrate_tunes_and_saves_both_thresholds(collection, tmp_path):
    """The step a user runs after training: the decision threshold as the training callback tunes it."""
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    out = tmp_path / "calibrated"
    result = invoke("calibrate", collection / "model", pairs, "--dedupe-precision", 0.75, "--output", out)
    assert result.exit_code == 0, result.output
    nlp = spacy.load(out)
    pipe = nlp.get_pipe("siamese_similarity")
    scores, labels = pipe.pair_scores([make_pair_example(nlp, a, b, y) for a, b, y in PAIRS])
    assert pipe.dedupe_threshold == pytest.approx(precision_threshold(scores, labels, 0.75), abs=1e-6)
    assert pipe.threshold == pytest.approx(best_threshold(scores, labels), abs=1e-6) != 0.5
    assert f"threshold = {pipe.threshold:g} (the most accurate" in result.output
    assert pipe.cfg["dedupe_precision"] == 0.75 and f"dedupe_threshold = {pipe.dedupe_threshold:g}" in result.output
    assert spacy.load(collection / "model").get_pipe("siamese_similarity").dedupe_threshold is None  # not in place


def test_calibrate_refuses_graded_pairs_and_bad_precision(collection, tmp_path):
    pairs = tmp_path / "graded.jsonl"
    srsly.write_jsonl(pairs, [{"text1": "a b", "text2": "a c", "label": 0.4}])
    result = invoke("calibrate", collection / "model", pairs, "--output", tmp_path / "o")
    assert result.exit_code == 1 and "labelled 0 or 1" in result.output
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    result = invoke("calibrate", collection / "model", pairs, "--dedupe-precision", 1.5, "--output", tmp_path / "o")
    assert result.exit_code == 1 and "dedupe_precision" in result.output
    # only duplicates: thresholds of 1 were saved (exit 0), a pipeline that calls nothing a duplicate
    srsly.write_jsonl(pairs, [{"text1": a, "text2": a, "label": 1} for a, _, _ in PAIRS])
    result = invoke("calibrate", collection / "model", pairs, "--output", tmp_path / "o")
    assert result.exit_code == 1 and "all 10 pairs are one kind" in result.output, result.output
    assert not (tmp_path / "o").exists()


def test_calibrate_saves_into_a_new_directory(collection, tmp_path):
    """As the other commands write their outputs: missing parent directories are made."""
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    out = tmp_path / "models" / "calibrated"
    result = invoke("calibrate", collection / "model", pairs, "--dedupe-precision", 0.75, "--output", out)
    assert result.exit_code == 0, result.output
    assert spacy.load(out).get_pipe("siamese_similarity").cfg["dedupe_precision"] == 0.75


def test_calibrate_saves_nothing_when_no_threshold_reaches_the_precision(collection, tmp_path):
    """Pairs whose one duplicate scores low reach no precision: saving would drop the pipeline's threshold."""
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": int(i == 1)} for i, (a, b, _) in enumerate(PAIRS)])
    result = invoke("calibrate", collection / "model", pairs, "--output", tmp_path / "out")
    assert result.exit_code == 1, result.output
    assert "No threshold reaches precision" in result.output and "nothing saved" in result.output
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def hybrid_files(tmp_path_factory):
    """A trained hybrid pipeline (lexical weight 0.3) and its 0/1 pairs."""
    root = tmp_path_factory.mktemp("calibrate_hybrid")
    train(build_nlp("hybrid_cauchy"), n_iter=10)[0].to_disk(root / "model")
    srsly.write_jsonl(root / "dev.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    return root


def test_calibrate_sets_a_hybrids_lexical_weight_and_tunes_both_thresholds(hybrid_files, tmp_path):
    out = tmp_path / "reweighted"
    args = ("calibrate", hybrid_files / "model", hybrid_files / "dev.jsonl", "--dedupe-precision", 0.75)
    result = invoke(*args, "--lexical-weight", 0.1, "--output", out)
    assert result.exit_code == 0, result.output
    nlp = spacy.load(out)
    pipe = nlp.get_pipe("siamese_similarity")
    assert get_lexical_weight(nlp) == 0.1 and pipe.cfg["dedupe_precision"] == 0.75
    assert pipe.model_id != spacy.load(hybrid_files / "model").get_pipe("siamese_similarity").model_id
    examples = [make_pair_example(nlp, a, b, y) for a, b, y in PAIRS]
    scores, labels = pipe.pair_scores(examples)
    assert pipe.threshold == pytest.approx(best_threshold(scores, labels), abs=1e-6)
    assert pipe.dedupe_threshold == pytest.approx(precision_threshold(scores, labels, 0.75), abs=1e-6)
    scored = pipe.score(examples)  # at the saved thresholds
    assert all(nlp.meta["performance"][key] == pytest.approx(scored[key]) for key in ("sim_acc", "sim_f", "sim_auc"))
    assert "lexical weight 0.3: acc" in result.output and "lexical weight 0.1: acc" in result.output
    assert "lexical weight = 0.1" in result.output and f"threshold = {pipe.threshold:g}" in result.output


def test_calibrate_sets_a_hybrids_lexical_weight_on_graded_pairs(hybrid_files, tmp_path):
    """Graded pairs set the weight only: Spearman and Pearson at both weights, no threshold tuned."""
    pairs = tmp_path / "graded.jsonl"
    graded = [(a, b, 0.2 + 0.6 * y) for a, b, y in PAIRS]
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": y} for a, b, y in graded])
    result = invoke(
        "calibrate",
        hybrid_files / "model",
        pairs,
        "--dedupe-precision",
        0.75,
        "--lexical-weight",
        0.1,
        "-o",
        tmp_path / "o",
    )
    assert result.exit_code == 1 and "graded pairs set a hybrid's --lexical-weight only" in result.output
    out = tmp_path / "reweighted"
    result = invoke("calibrate", hybrid_files / "model", pairs, "--lexical-weight", 0.1, "--output", out)
    assert result.exit_code == 0, result.output
    assert "lexical weight 0.3: Spearman" in result.output and "lexical weight 0.1: Spearman" in result.output
    source = spacy.load(hybrid_files / "model").get_pipe("siamese_similarity")
    nlp = spacy.load(out)
    pipe = nlp.get_pipe("siamese_similarity")
    assert get_lexical_weight(nlp) == 0.1 and pipe.model_id != source.model_id
    assert (pipe.threshold, pipe.dedupe_threshold) == (source.threshold, source.dedupe_threshold)
    scored = pipe.score([make_pair_example(nlp, a, b, y) for a, b, y in graded])
    assert nlp.meta["performance"]["sim_spearman"] == pytest.approx(scored["sim_spearman"])


def test_calibrate_encodes_the_pairs_once(hybrid_files, tmp_path, monkeypatch):
    """The lexical weight only mixes the vectors: both weights' figures and the dedupe threshold
    come from one encoding of the pairs."""
    encoded = []
    predict = SiameseSimilarity.predict
    monkeypatch.setattr(SiameseSimilarity, "predict", lambda self, docs: encoded.extend(docs) or predict(self, docs))
    args = ("calibrate", hybrid_files / "model", hybrid_files / "dev.jsonl", "--dedupe-precision", 0.75)
    result = invoke(*args, "--lexical-weight", 0.1, "--output", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert len(encoded) == 2 * len(PAIRS)


def test_calibrate_refuses_a_lexical_weight_it_cannot_set(hybrid_files, collection, tmp_path):
    pairs = hybrid_files / "dev.jsonl"
    result = invoke("calibrate", collection / "model", pairs, "--lexical-weight", 0.1, "--output", tmp_path / "o")
    assert result.exit_code == 1 and "it has no lexical weight" in result.output
    result = invoke("calibrate", hybrid_files / "model", pairs, "--lexical-weight", 1.5, "--output", tmp_path / "o")
    assert result.exit_code == 1 and "--lexical-weight must be in [0, 1], got 1.5" in result.output
    assert not (tmp_path / "o").exists()


def _copy_model(collection, tmp_path):
    model = tmp_path / "model"
    shutil.copytree(collection / "model", model)
    pairs = tmp_path / "dev.jsonl"
    srsly.write_jsonl(pairs, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    return model, pairs


def test_calibrate_writes_a_new_directory_unless_told_in_place(collection, tmp_path):
    model, pairs = _copy_model(collection, tmp_path)
    result = invoke("calibrate", model, pairs, "--dedupe-precision", 0.75)
    assert result.exit_code == 1 and "Give --output DIR for the new pipeline, or --in-place" in result.output
    result = invoke("calibrate", model, pairs, "--output", tmp_path / "o", "--in-place")
    assert result.exit_code == 1 and "not both" in result.output
    for output in (model, tmp_path / "." / "model", tmp_path):  # the model itself, or a directory holding it
        result = invoke("calibrate", model, pairs, "--dedupe-precision", 0.75, "--output", output)
        assert result.exit_code == 1 and "would replace the input" in result.output, result.output
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    result = invoke("calibrate", model, pairs, "--dedupe-precision", 0.75, "--output", tmp_path / "notes")
    assert result.exit_code == 1 and "is not a pipeline directory" in result.output
    assert (tmp_path / "notes" / "todo.txt").read_text() == "keep me"
    result = invoke("calibrate", model, pairs, "--dedupe-precision", 0.75, "--in-place")
    assert result.exit_code == 0, result.output
    assert spacy.load(model).get_pipe("siamese_similarity").cfg["dedupe_precision"] == 0.75
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.jsonl", "model", "notes"]  # nothing left beside


class Killed(BaseException):
    """Stands for a kill: nothing catches it."""


def _cut_short(path, writers, exclude):
    """spaCy's util.to_disk killed half way: some parts written, one file cut to nothing."""
    path.mkdir(parents=True, exist_ok=True)
    items = list(writers.items())
    for key, write in items[: len(items) // 2]:
        write(path / key)
    (path / "vocab").mkdir(exist_ok=True)
    (path / "vocab" / "key2row").write_bytes(b"")


def test_an_error_while_saving_in_place_leaves_the_pipeline_loadable(collection, tmp_path, monkeypatch):
    model, pairs = _copy_model(collection, tmp_path)

    def interrupted(path, writers, exclude):
        _cut_short(path, writers, exclude)
        raise Killed

    monkeypatch.setattr(spacy.util, "to_disk", interrupted)
    with pytest.raises(Killed):
        invoke_raising("calibrate", model, pairs, "--dedupe-precision", 0.75, "--in-place")
    monkeypatch.undo()
    assert spacy.load(model).get_pipe("siamese_similarity").dedupe_threshold is None  # the old pipeline, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.jsonl", "model"]


@pytest.mark.slow
def test_a_kill_while_saving_in_place_leaves_the_pipeline_loadable(collection, tmp_path):
    """A process killed (os._exit) in the middle of nlp.to_disk; the next run cleans up after it."""
    model, pairs = _copy_model(collection, tmp_path)
    script = (
        "import os, sys, spacy.util\n"
        "from tests.cli.test_calibrate import _cut_short\n"
        "from spacy_siamese.cli import app\n"
        "def killed(path, writers, exclude):\n"
        "    _cut_short(path, writers, exclude)\n"
        "    os._exit(9)\n"
        "spacy.util.to_disk = killed\n"
        "app(sys.argv[1:])\n"
    )
    args = ["calibrate", str(model), str(pairs), "--dedupe-precision", "0.75", "--in-place"]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=root, env=env, capture_output=True, text=True)
    assert done.returncode == 9, done.stderr
    assert spacy.load(model).get_pipe("siamese_similarity").dedupe_threshold is None
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    assert spacy.load(model).get_pipe("siamese_similarity").cfg["dedupe_precision"] == 0.75
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.jsonl", "model"]


def test_a_damaged_pipeline_is_named_with_its_empty_file(collection, tmp_path):
    model, pairs = _copy_model(collection, tmp_path)
    (model / "vocab" / "key2row").write_bytes(b"")
    result = invoke("calibrate", model, pairs, "--output", tmp_path / "out")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"Cannot load the pipeline {model} (empty: {model / 'vocab' / 'key2row'})" in result.output
    shutil.copy(collection / "model" / "vocab" / "key2row", model / "vocab" / "key2row")
    scratch = tmp_path / f".model.999999999-{'0' * 32}.siamese-tmp"  # a save killed between its two renames
    scratch.mkdir()
    (scratch / "siamese-scratch").touch()
    model.rename(scratch / "old")
    result = invoke("calibrate", model, pairs, "--output", tmp_path / "out")
    assert result.exit_code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["dev.jsonl", "model", "out"]


def invoke_raising(*args):
    """Run a command, letting its exception through (as a killed process would not catch it)."""
    from spacy_siamese.cli import app

    return runner.invoke(app, [str(arg) for arg in args], catch_exceptions=False)
