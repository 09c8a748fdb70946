"""The `general` workflow's steps, run once for the module on the tiny mirror: assets (Quora,
StackExchange, STS-B and SICK, MRPC and Twitter URL), convert the six datasets, the teacher's
pairs (the tests' FakeTeacher in-process: a real teacher needs torch), train one pipeline on all of
them with the teacher's pairs as a seventh dataset, continue it, evaluate it on every dev split
beside the baselines, fine-tune it on STS-B and on SICK, evaluate those, package all three with
their model cards, report."""

import json

import numpy
import pytest
import spacy
from weasel.util import load_project_config

from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF, VECTORS
from spacy_siamese.teacher import models

from ..cli.conftest import invoke
from ..conftest import FakeTeacher
from .conftest import TINY, Project, assert_model_card, weights

pytestmark = pytest.mark.slow
TINY_GENERAL = {
    **TINY,
    "general_max_steps": 4,
    "general_eval_frequency": 2,
    "general_continue_steps": 4,
    "general_finetune_max_steps": 4,
    "graded_eval_frequency": 2,
    "mrpc_dev_pairs": 10,
    "twitter_dev_fraction": 0.2,
}
DATASETS = ("quora", "stackexchange", "sts", "sick", "mrpc", "twitter_url")
GRADED = ("sts", "sick")
BEFORE_TEACHER = ("assets", "vectors", "convert-quora", "convert-stackexchange")
BEFORE_TEACHER += ("convert-sts", "convert-general")
AFTER_TEACHER = ("train-general-distilled", "continue-general-distilled", "evaluate-general", "train-graded")
AFTER_TEACHER += ("evaluate-graded", "package-general", "package-library", "report")
CONTINUED = "general_distilled_continued"


def stand_in_teacher(project_dir):
    """teacher-pairs-general's command, run in-process on the graded training files with the
    tests' FakeTeacher: the teacher's pairs and its table."""
    corpus = project_dir / "corpus/general"
    inputs = [corpus / f"{name}/train.jsonl" for name in GRADED]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
        result = invoke("teacher-pairs", "fake-teacher", *inputs, "--output", corpus / "teacher/train.jsonl",
                        "--max-pairs", 20, "--vectors-output", corpus / "teacher/vectors", "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("general"))
    steps = load_project_config(project.dir)["workflows"]["general"]
    assert steps == [*BEFORE_TEACHER, "teacher-pairs-general", *AFTER_TEACHER]
    output = ""
    for step in BEFORE_TEACHER:
        result = project(step, **TINY_GENERAL)
        assert result.returncode == 0, result.output[-6000:]
    stand_in_teacher(project.dir)
    for step in AFTER_TEACHER:
        result = project(step, **TINY_GENERAL)
        assert result.returncode == 0, result.output[-6000:]
        output += result.output
    result.output = output
    return project, result


def pair_keys(path):
    """The pairs of a JSONL pair file as sets of their two lower-cased texts."""
    pairs = [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]
    return {frozenset((p["text1"].lower(), p["text2"].lower())) for p in pairs}


def test_convert_general_writes_each_datasets_splits(run):
    project, _ = run
    stats = json.loads((project.dir / "corpus/general/stats.json").read_text())
    counts = {  # (training pairs before dropping those that are dev pairs, dev pairs)
        name: (info["train"]["pairs"] + info["train_pairs_dropped_as_dev_pairs"], info["dev"]["pairs"])
        for name, info in stats["datasets"].items()
    }
    assert counts == {
        "quora": (240, 80),
        "stackexchange": (64, 16),
        "sts": (40, 20),
        "sick": (40, 20),
        "mrpc": (30, 10),
        "twitter_url": (64, 16),
    }
    held = set().union(*(pair_keys(project.dir / f"corpus/general/{name}/dev.jsonl") for name in DATASETS))
    for name in DATASETS:
        assert not pair_keys(project.dir / f"corpus/general/{name}/train.jsonl") & held, name


def test_one_pipeline_is_trained_on_every_dataset(run):
    project, result = run
    assert "SIM_AVG" in result.output and "SIM_QUORA_AUC" in result.output and "SIM_MRPC_AUC" in result.output
    nlp = spacy.load(project.dir / f"training/{CONTINUED}/model-best")
    pipe_config = nlp.config["components"]["siamese_similarity"]
    assert pipe_config["loss"]["@losses"] == "spacy-siamese.DatasetLosses.v1"
    assert pipe_config["scorer"]["@scorers"] == "spacy-siamese.dataset_scorer.v1"
    performance = nlp.meta["performance"]
    assert {f"sim_{name}_auc" for name in DATASETS if name not in GRADED} <= set(performance)
    assert {f"sim_{name}_spearman" for name in GRADED} <= set(performance)
    score = nlp("A man is playing a guitar.").similarity(nlp("A man plays the guitar."))
    assert 0.0 <= score <= 1.0


@pytest.mark.parametrize("name", DATASETS)
def test_evaluate_scores_every_dev_split_beside_the_baselines(run, name):
    project, _ = run
    report = json.loads((project.dir / f"metrics/{CONTINUED}_{name}.json").read_text())
    assert report["name"] == f"{CONTINUED}_{name}" and report["binary"] is (name not in GRADED)
    assert set(report["results"]) == {MODEL, TFIDF, VECTORS}
    main = "spearman" if name in GRADED else "auc"
    assert all(main in metrics for metrics in report["results"].values())
    if name == "sts":  # the full official dev file
        assert report["n_pairs"] == 20


def test_the_general_pipeline_is_packaged_with_its_model_card(run):
    project, _ = run
    meta = assert_model_card(project.dir / "packages/en_siamese_general-0.1.0")
    for dataset in ("Quora", "STS Benchmark", "SICK", "Microsoft Research Paraphrase", "all-MiniLM-L6-v2"):
        assert dataset in meta["license"]
    assert f"{CONTINUED}_quora/auc" in meta["performance"]


@pytest.mark.parametrize("name", GRADED)
def test_the_graded_fine_tunes_are_trained_and_evaluated_not_packaged(run, name):
    """The recommended STS-B and SICK pipelines come from graded-distilled: the general chain's
    fine-tunes are results."""
    project, _ = run
    assert (project.dir / f"metrics/{name}_general.json").exists()
    assert not list((project.dir / "packages").glob(f"en_siamese_{name}_general*"))


def test_report(run):
    project, _ = run
    assert list((project.dir / "packages/wheels").glob("spacy_siamese-*.whl"))
    summary = (project.dir / "metrics/README.md").read_text(encoding="utf8")
    assert f"| {CONTINUED}_quora |" in summary and "| sts_general |" in summary and "| sick_general |" in summary


@pytest.mark.parametrize("name", GRADED)
def test_the_general_pipeline_is_fine_tuned_on_one_graded_dataset(run, name):
    project, _ = run
    nlp = spacy.load(project.dir / f"training/{name}_general/model-best")
    assert nlp.config["paths"]["source"] == f"training/{CONTINUED}/model-best"
    assert nlp.config["components"]["siamese_similarity"]["loss"]["losses"][name]["@losses"] == (
        "spacy-siamese.CoSENTLoss.v1"
    )
    assert -1.0 <= nlp.meta["performance"]["sim_avg"] <= 1.0  # the Spearman correlation on its dev pairs
    report = json.loads((project.dir / f"metrics/{name}_general.json").read_text())
    assert report["name"] == f"{name}_general" and report["binary"] is False
    assert report["n_pairs"] == 20 and set(report["results"]) == {MODEL, TFIDF, VECTORS}


def test_the_distilled_pipeline_is_trained_then_continued_from_its_weights(run):
    project, _ = run
    source = spacy.load(project.dir / "training/general_distilled/model-last")
    continued = spacy.load(project.dir / "training/general_distilled_continued/model-last")
    assert (project.dir / "training/general_distilled_continued/model-best").is_dir()
    config = continued.config.interpolate()
    pipe_config = config["components"]["siamese_similarity"]
    assert pipe_config == source.config.interpolate()["components"]["siamese_similarity"]
    assert pipe_config["loss"]["losses"]["teacher"]["@losses"] == "spacy-siamese.TeacherScores.v1"
    schedule = config["training"]["optimizer"]["learn_rate"]
    assert schedule["@schedules"] == "warmup_linear.v1" and schedule["total_steps"] == 4
    assert "teacher" in config["corpora"]["train"]["datasets"] and config["system"]["seed"] == 1
    # Four steps inside the 250 warm-up steps barely move the sourced weights (the saved weights
    # are the optimizer's running averages, which start from zero: within a few per cent).
    start, after = weights(source), weights(continued)
    assert numpy.allclose(after, start, rtol=0.05, atol=1e-3)
