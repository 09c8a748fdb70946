"""The `all` workflow, run once for the module: assets, vectors, convert, train the Quora
pipeline and the StackExchange pipeline (TWEAK), evaluate them, package both with their model
cards, report; then a second run that skips what is done."""

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy
import pytest
import spacy
import srsly

from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF
from spacy_siamese.teacher import models

from ..cli.conftest import invoke
from ..conftest import FakeTeacher
from .conftest import TINY, TINY_EXPERIMENTS, Experiments, assert_model_card, run_workflow, weights

pytestmark = pytest.mark.slow
PIPELINES = ("quora", "tweak_stackexchange")


def model_id(model: Path) -> str:
    """The model id in the siamese_similarity pipe's cfg file of a saved pipeline."""
    return json.loads((model / "siamese_similarity/cfg").read_text())["model_id"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return run_workflow(tmp_path_factory.mktemp("all"), "all", **TINY)


def test_convert_stackexchange_is_question_disjoint(run):
    project, _ = run
    stats = json.loads((project.dir / "corpus/stackexchange/stats.json").read_text())
    assert stats["questions_on_both_sides"] == 0
    assert stats["train"]["pairs"] + stats["dev"]["pairs"] == 80 and stats["dev"]["pairs"] == 16
    assert set(stats["dev"]["by_source"]) == {"askubuntu", "meta"}


def test_convert_quora_keeps_the_mirror_split(run):
    project, _ = run
    stats = json.loads((project.dir / "corpus/quora/stats.json").read_text())
    assert stats["train"]["pairs"] == 240 and stats["dev"]["pairs"] == 80
    lines = (project.dir / "corpus/quora/dev.jsonl").read_text(encoding="utf8").splitlines()
    assert len(lines) == 80 and set(json.loads(lines[0])) == {"text1", "text2", "label"}


def test_vectors_links_the_given_pipeline(run):
    project, _ = run
    linked = project.dir / "assets/vectors"
    assert linked.resolve() == project.vectors.resolve()


@pytest.mark.parametrize("name", PIPELINES)
def test_train_writes_model_best_and_last(run, name):
    project, _ = run
    for model in ("model-best", "model-last"):
        assert (project.dir / f"training/{name}/{model}/meta.json").exists()


def test_train_logs_the_pipe_metrics(run):
    _, result = run
    assert "SIM_ACC" in result.output and "SIM_AUC" in result.output


def test_quora_pipeline_uses_the_static_vectors(run):
    project, _ = run
    nlp = spacy.load(project.dir / "training/quora/model-best")
    assert nlp.vocab.vectors.shape[1] == 16
    hybrid = nlp.config["components"]["siamese_similarity"]["model"]["encoder"]
    assert hybrid["@architectures"] == "spacy-siamese.HybridEncoder.v1"
    encoder = hybrid["encoder"]
    assert encoder["@architectures"] == "spacy-siamese.MWEEncoder.v2" and encoder["include_static_vectors"]
    assert nlp.config["training"]["batcher"]["@batchers"] == "spacy-siamese.batch_by_topics.v1"  # quora_batcher


@pytest.mark.parametrize("name", PIPELINES)
def test_evaluate_writes_json_markdown_and_plot(run, name):
    project, _ = run
    report = json.loads((project.dir / f"metrics/{name}.json").read_text())
    assert report["task"] == "pairs" and report["name"] == name
    dev = "quora" if name == "quora" else "stackexchange"
    assert report["n_pairs"] == len((project.dir / f"corpus/{dev}/dev.jsonl").read_text().splitlines())
    assert len(report["results"]) == 3  # the trained pipe, TF-IDF cosine, averaged vectors
    for metrics in report["results"].values():
        assert {"acc", "p", "r", "f", "auc", "ap", "threshold"} <= set(metrics)
        assert 0.0 <= metrics["auc"] <= 1.0
    assert name in (project.dir / f"metrics/{name}.md").read_text()
    assert (project.dir / f"metrics/{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_evaluate_quora_finds_each_duplicates_partner_among_the_dev_questions(run):
    project, _ = run
    report = json.loads((project.dir / "metrics/quora_duplicates.json").read_text())
    assert report["task"] == "duplicate retrieval" and report["name"] == "quora_duplicates"
    assert list(report["results"]) == [MODEL, TFIDF] and report["bootstrap"]["n_resamples"] == 1000
    dev = [json.loads(line) for line in (project.dir / "corpus/quora/dev.jsonl").read_text().splitlines()]
    assert report["n_queries"] == len({(r["text1"], r["text2"]) for r in dev if r["label"] == 1})
    assert "### Duplicate retrieval on quora_duplicates" in (project.dir / "metrics/quora_duplicates.md").read_text()
    pairs = json.loads((project.dir / "metrics/quora.json").read_text())
    assert report["tfidf"]["fitted_on"] == pairs["tfidf"]["fitted_on"]  # the same TF-IDF baseline in both


def test_report_prints_and_writes_one_table(run):
    project, result = run
    summary = (project.dir / "metrics/README.md").read_text()
    for name in (*PIPELINES, "quora_duplicates"):
        assert f"| {name} |" in summary
    assert summary.strip().splitlines()[0] in result.output


@pytest.mark.parametrize("name", PIPELINES)
def test_package_declares_spacy_siamese_and_carries_its_model_card(run, name):
    """The package's meta.json has the figures of its evaluation JSON, the pipe's thresholds and
    the training data's licence."""
    project, result = run
    assert f"en_siamese_{name}" in result.output
    meta = assert_model_card(project.dir / f"packages/en_siamese_{name}-0.1.0")
    report = json.loads((project.dir / f"metrics/{name}.json").read_text())
    assert meta["performance"][f"{name}/auc"] == round(report["results"][MODEL]["auc"], 4)
    cfg = json.loads((project.dir / f"training/{name}/model-best/siamese_similarity/cfg").read_text())
    assert meta["performance"]["thresholds/threshold"] == cfg["threshold"]
    dataset = "Quora" if name == "quora" else "StackExchange"
    assert dataset in meta["license"] and any(dataset in source["name"] for source in meta["sources"])
    if name == "quora":
        assert "quora_duplicates/mrr@10" in meta["performance"] or any(
            key.startswith("quora_duplicates/") for key in meta["performance"]
        )


def test_package_installs_and_loads_in_a_fresh_venv(run, tmp_path):
    """The README's install: the pipeline's wheel and the spacy-siamese wheel that
    `package-library` builds, pip-installed into a new, empty virtual environment, then loaded by
    name. The package index is replaced (offline here) by this test environment's third-party
    packages, linked into a directory the venv sees, without spacy-siamese itself: pip must
    install it from the built wheel, and the installed pipeline must score a pair exactly as the
    trained model-best does."""
    project, _ = run
    wheel = next((project.dir / "packages/en_siamese_quora-0.1.0/dist").glob("*.whl"))
    library = list((project.dir / "packages/wheels").glob("spacy_siamese-*.whl"))
    assert len(library) == 1
    texts = ("How do I learn Python?", "What is the best way to learn Python?")
    score = (
        "import spacy, spacy_siamese\n"
        "nlp = spacy.load({model!r})\n"
        f"a, b = nlp({texts[0]!r}), nlp({texts[1]!r})\n"
        "print(repr(a.similarity(b)), repr(b.similarity(a)))\n"
    )
    # model-best is scored in a new process too: this one's BLAS thread count may have been set
    # by an earlier test, and the summation order (the last float32 bit) follows it.
    trained = subprocess.run(
        [sys.executable, "-c", score.format(model=str(project.dir / "training/quora/model-best"))],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    index = tmp_path / "index"  # stands in for the package index: everything but spacy-siamese
    index.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.lower().replace("-", "_").startswith(("spacy_siamese", "__editable__")):
            (index / entry.name).symlink_to(entry)
    Path(purelib, "zz_index.pth").write_text(str(index) + "\n")
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
         "--disable-pip-version-check", str(library[0]), str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert "spacy-siamese-0.1.0" in pip.stdout.split("Successfully installed", 1)[1], pip.stdout
    code = (
        "import spacy_siamese, en_siamese_quora\n"
        f"assert spacy_siamese.__file__.startswith({purelib!r}), spacy_siamese.__file__\n"
        f"assert en_siamese_quora.__file__.startswith({purelib!r}), en_siamese_quora.__file__\n"
    ) + score.format(model="en_siamese_quora")
    load = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=str(venv))
    assert load.returncode == 0, load.stdout + load.stderr
    assert load.stdout.split() == trained and trained[0] == trained[1]


def test_second_run_skips_finished_steps(run):
    project, _ = run
    again = project("all", **TINY)
    assert again.returncode == 0, again.output[-3000:]
    for step in ("train-quora", "evaluate-quora", "package-quora", "train-tweak-stackexchange"):
        assert f"Skipping '{step}': nothing changed" in again.output


@pytest.fixture(scope="module")
def experiments(run):
    """The research project experiments/ beside the module's project copy, as in the repository."""
    project, _ = run
    return Experiments(project)


def test_the_quora_pipeline_is_continued_from_its_weights_and_evaluated_by_name(run, experiments):
    """After the second run of `all`: experiments/ reads the main project's pipeline, corpus and vectors."""
    project, _ = run
    for step in ("continue-quora", "evaluate"):
        result = experiments(step, **TINY_EXPERIMENTS)
        assert result.returncode == 0, result.output[-6000:]
    source = spacy.load(project.dir / "training/quora/model-last")
    continued = spacy.load(experiments.dir / "training/quora_continued/model-last")
    config = continued.config.interpolate()
    assert config["components"]["siamese_similarity"] == source.config.interpolate()["components"]["siamese_similarity"]
    schedule = config["training"]["optimizer"]["learn_rate"]
    assert schedule["@schedules"] == "warmup_linear.v1" and schedule["total_steps"] == 4
    assert config["system"]["seed"] == 1
    assert config["training"]["batcher"]["@batchers"] == "spacy-siamese.batch_by_topics.v1"
    assert model_id(experiments.dir / "training/quora_continued/model-last") != model_id(
        project.dir / "training/quora/model-last"
    )
    report = json.loads((experiments.dir / "metrics/quora_continued.json").read_text())
    assert report["name"] == "quora_continued" and report["n_pairs"] == 80
    assert report["files"]["model"].endswith("training/quora_continued/model-best")
    assert len(report["results"]) == 4  # the pipeline, the shipped one it is compared with, two baselines
    duplicates = json.loads((experiments.dir / "metrics/quora_continued_duplicates.json").read_text())
    assert len(duplicates["results"]) == 3  # the pipeline, the shipped one, TF-IDF


def test_a_second_round_continues_the_continued_pipeline_into_its_own_directory(experiments):
    """continue-quora's vars continue_from and name: a second round reads training/quora_continued
    (continue-quora's, run first) and leaves it as it was."""
    result = experiments("continue-quora", **TINY_EXPERIMENTS)
    assert result.returncode == 0, result.output[-6000:]
    training = experiments.dir / "training"
    first = model_id(training / "quora_continued/model-last")
    settings = {"continue_from": "training/quora_continued/model-last", "name": "quora_continued2"}
    result = experiments("continue-quora", **TINY_EXPERIMENTS, continue_seed=2, **settings)
    assert result.returncode == 0, result.output[-6000:]
    assert model_id(training / "quora_continued/model-last") == first
    assert model_id(training / "quora_continued2/model-last") != first
    assert spacy.load(training / "quora_continued2/model-last").config["system"]["seed"] == 2
    (script,) = srsly.read_yaml(experiments.dir / "project.lock")["continue-quora"]["script"]
    assert '{"source": "training/quora_continued/model-last"}' in script


def test_the_quora_pipeline_is_continued_with_a_teacher_from_its_weights(run, experiments, monkeypatch):
    """teacher-vectors-quora's command (teacher-pairs --vectors-output) runs in-process with the
    tests' FakeTeacher (a real teacher needs torch); continue-quora-distilled trains on from
    training/quora_continued/model-last
    (continue-quora's, run first) in another batch order, with the teacher's in-batch cosines
    beside in-batch negatives, and evaluate scores its model-last; another run with var name
    writes its own directory."""
    project, _ = run
    monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
    train = project.dir / "corpus/quora/train.jsonl"
    vectors = experiments.dir / "corpus/quora/teacher_vectors"
    result = invoke("teacher-pairs", "fake-teacher", train, "--vectors-output", vectors, "--no-progress")
    assert result.exit_code == 0, result.output
    result = experiments("continue-quora", **TINY_EXPERIMENTS)
    assert result.returncode == 0, result.output[-6000:]
    settings = {**TINY_EXPERIMENTS, "continue_from": "training/quora_continued/model-last", "continue_seed": 2}
    result = experiments("continue-quora-distilled", **settings, name="quora_distilled")
    assert result.returncode == 0, result.output[-6000:]
    result = experiments(
        "evaluate", **TINY_EXPERIMENTS, name="quora_distilled", model="training/quora_distilled/model-last"
    )
    assert result.returncode == 0, result.output[-6000:]
    source = spacy.load(experiments.dir / "training/quora_continued/model-last")
    distilled = spacy.load(experiments.dir / "training/quora_distilled/model-last")
    config = distilled.config.interpolate()
    assert config["paths"]["init_weights"] == "training/quora_continued/model-last"
    assert config["system"]["seed"] == 2
    loss = config["components"]["siamese_similarity"]["loss"]
    assert loss["@losses"] == "spacy-siamese.TeacherScores.v1" and loss["vectors"] == "corpus/quora/teacher_vectors"
    assert loss["pair_loss"]["@losses"] == "spacy-siamese.InBatchNegatives.v1"
    assert loss["pair_loss"]["pair_loss"]["@losses"] == "spacy-siamese.LogLoss.v2"
    # four steps inside the warm-up barely move the weights it starts from (see the general workflow's test)
    assert numpy.allclose(weights(distilled), weights(source), rtol=0.05, atol=1e-3)
    report = json.loads((experiments.dir / "metrics/quora_distilled.json").read_text())
    assert report["name"] == "quora_distilled"
    assert report["files"]["model"].endswith("training/quora_distilled/model-last")
    assert (experiments.dir / "metrics/quora_distilled_duplicates.json").exists()
    # another teacher weight from the main project's pipeline, into its own directory: the first is kept
    first = model_id(experiments.dir / "training/quora_distilled/model-last")
    other = {"distill_weight": 0.1, "continue_from": "../project/training/quora/model-last", "name": "quora_distilled2"}
    result = experiments("continue-quora-distilled", **TINY_EXPERIMENTS, **other)
    assert result.returncode == 0, result.output[-6000:]
    assert model_id(experiments.dir / "training/quora_distilled/model-last") == first
    config = spacy.load(experiments.dir / "training/quora_distilled2/model-last").config.interpolate()
    assert config["paths"]["init_weights"] == "../project/training/quora/model-last"
    assert config["components"]["siamese_similarity"]["loss"]["weight"] == 0.1


def test_continued_pipelines_are_averaged_set_to_a_lexical_weight_and_scored_at_several(experiments):
    """average, calibrate and lexical-weights on two continuations of one pipeline."""
    for name, seed in (("quora_continued", 1), ("quora_continued2", 2)):
        result = experiments("continue-quora", **TINY_EXPERIMENTS, name=name, continue_seed=seed)
        assert result.returncode == 0, result.output[-6000:]
    average = "training/quora_continued/model-last training/quora_continued2/model-last"
    result = experiments("average", name="quora_averaged", average=average)
    assert result.returncode == 0, result.output[-6000:]
    result = experiments("calibrate", name="quora_averaged", lexical_weight=0.1, precision=0.3)  # tiny data
    assert result.returncode == 0, result.output[-6000:]
    averaged = spacy.load(experiments.dir / "training/quora_averaged/model-best")
    assert averaged.config["components"]["siamese_similarity"]["model"]["comparison"]["weight"] == 0.1
    result = experiments("lexical-weights", name="quora_averaged", weights="0,0.2")
    assert result.returncode == 0, result.output[-6000:]
    report = json.loads((experiments.dir / "metrics/quora_averaged_weights.json").read_text())
    assert [row["weight"] for row in report["models"][0]["rows"]] == [0.0, 0.2]
