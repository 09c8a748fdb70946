"""The `sts` workflow, run once for the module on the tiny mirror: assets, then the LSTM with
exp(-L1) on STS Benchmark and SICK, the Quora pipeline fine-tuned on STS Benchmark (the workflow
trains the `quora` pipeline first), the MWE CNN with the feature head on SICK, graded evaluations
with the baselines, two packages and the report."""

import json

import pytest
import spacy

from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF, VECTORS

from .conftest import TINY, run_workflow

pytestmark = pytest.mark.slow
TINY_STS = {
    **TINY,
    "sts_lstm_max_steps": 4,
    "sick_lstm_max_steps": 4,
    "lstm_eval_frequency": 2,
    "sts_finetune_max_steps": 4,
    "sick_mwe_max_steps": 4,
    "graded_eval_frequency": 2,
}
ARCHITECTURES = {
    "sts_lstm": ("spacy-siamese.LSTMEncoder.v1", "spacy-siamese.ExpL1Similarity.v1"),
    "sick_lstm": ("spacy-siamese.LSTMEncoder.v1", "spacy-siamese.ExpL1Similarity.v1"),
    "sts_finetune": ("spacy-siamese.HybridEncoder.v1", "spacy-siamese.HybridSimilarity.v1"),
    "sick_mwe": ("spacy-siamese.MWEEncoder.v2", "spacy-siamese.FeatureHead.v1"),
}
DEV_PAIRS = 20  # each tiny dev file


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return run_workflow(tmp_path_factory.mktemp("sts"), "sts", dataset="quora", **TINY_STS)


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_each_pipeline_has_its_architecture(run, name):
    project, _ = run
    for model in ("model-best", "model-last"):
        assert (project.dir / f"training/{name}/{model}/meta.json").exists()
    nlp = spacy.load(project.dir / f"training/{name}/model-best")
    model = nlp.config["components"]["siamese_similarity"]["model"]
    assert (model["encoder"]["@architectures"], model["comparison"]["@architectures"]) == ARCHITECTURES[name]
    score = nlp("A man is playing a guitar.").similarity(nlp("A man plays the guitar."))
    assert 0.0 <= score <= 1.0


def test_finetuned_pipe_starts_from_the_quora_pipeline(run):
    project, _ = run
    cfg = lambda name: json.loads((project.dir / f"training/{name}/model-best/siamese_similarity/cfg").read_text())  # noqa: E731
    assert cfg("sts_finetune")["model_id"] != cfg("quora")["model_id"]


def test_training_selects_on_spearman(run):
    _, result = run
    assert "SIM_SPEARMAN" in result.output and "SIM_PEARSON" in result.output


@pytest.mark.parametrize("name", ARCHITECTURES)
def test_evaluate_reports_graded_metrics_beside_the_baselines(run, name):
    project, _ = run
    report = json.loads((project.dir / f"metrics/{name}.json").read_text())
    assert report["name"] == name and report["binary"] is False
    assert report["n_pairs"] == DEV_PAIRS
    assert set(report["results"]) == {MODEL, TFIDF, VECTORS}
    for metrics in report["results"].values():
        assert {"pearson", "spearman", "mse", "mae"} <= set(metrics)
        assert -1.0 <= metrics["spearman"] <= 1.0 and metrics["mse"] >= 0.0
    assert (project.dir / f"metrics/{name}.md").exists()


@pytest.mark.parametrize("name", ("sts", "sick"))
def test_package_builds_a_wheel(run, name):
    project, _ = run
    assert list((project.dir / f"packages/en_siamese_{name}-0.1.0/dist").glob("*.whl"))


def test_report_lists_the_graded_evaluations(run):
    project, _ = run
    summary = (project.dir / "metrics/README.md").read_text(encoding="utf8")
    table = summary.split("## Graded similarity")[1].split("###")[0]
    for name in ARCHITECTURES:
        assert f"| {name} |" in table
