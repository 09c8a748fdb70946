"""The `tweak` workflow, run once for the module on the tiny mirror: convert, train TWEAK on
StackExchange, evaluate it against TF-IDF cosine (also on its AskUbuntu dev pairs alone), save the
learned feature weights, package it with its model card, report."""

import json

import pytest
import spacy

from .conftest import TINY, assert_model_card, run_workflow

pytestmark = pytest.mark.slow
TINY_TWEAK = TINY
PIPELINES = ("tweak_stackexchange",)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return run_workflow(tmp_path_factory.mktemp("tweak"), "tweak", **TINY_TWEAK)


@pytest.mark.parametrize("name", PIPELINES)
def test_trained_pipeline_is_tweak_and_scores(run, name):
    project, _ = run
    for model in ("model-best", "model-last"):
        assert (project.dir / f"training/{name}/{model}/meta.json").exists()
    nlp = spacy.load(project.dir / f"training/{name}/model-best")
    encoder = nlp.config["components"]["siamese_similarity"]["model"]["encoder"]
    assert encoder["@architectures"] == "spacy-siamese.TweakEncoder.v1"
    assert nlp.get_pipe("siamese_similarity").encoder.attrs["table"].n_docs > 0  # fitted df saved
    score = nlp("How do I install Ubuntu?").similarity(nlp("Installing Ubuntu, how?"))
    assert -1.0 <= score <= 1.0


def test_askubuntu_dev_file_is_the_askubuntu_part_of_dev(run):
    project, _ = run
    corpus = project.dir / "corpus/stackexchange"
    stats = json.loads((corpus / "stats.json").read_text())
    dev = (corpus / "dev.jsonl").read_text(encoding="utf8").splitlines()
    askubuntu = (corpus / "dev_askubuntu.jsonl").read_text(encoding="utf8").splitlines()
    meta = (corpus / "dev_meta.jsonl").read_text(encoding="utf8").splitlines()
    assert len(askubuntu) == stats["dev"]["by_source"]["askubuntu"]["pairs"] > 0
    assert sorted(askubuntu + meta) == sorted(dev)


@pytest.mark.parametrize("name", ["tweak_stackexchange", "tweak_askubuntu"])
def test_evaluate_compares_with_tfidf(run, name):
    project, _ = run
    report = json.loads((project.dir / f"metrics/{name}.json").read_text())
    assert report["name"] == name and report["fit_limit"] == 0
    assert {"siamese_similarity (trained)", "TF-IDF cosine"} <= set(report["results"])
    assert (project.dir / f"metrics/{name}.md").exists()
    n_pairs = {"tweak_askubuntu": 8, "tweak_stackexchange": 16}
    assert report["n_pairs"] == n_pairs[name]


@pytest.mark.parametrize("name", PIPELINES)
def test_explain_saves_the_feature_weights(run, name):
    project, result = run
    weights = json.loads((project.dir / f"metrics/{name}_weights.json").read_text())["feature_weights"]
    assert {"bias", "log_tf", "log_df"} <= set(weights)
    assert "stop" not in weights
    assert "TWEAK feature weights" in result.output


@pytest.mark.parametrize("name", PIPELINES)
def test_package_carries_its_model_card(run, name):
    project, _ = run
    meta = assert_model_card(project.dir / f"packages/en_siamese_{name}-0.1.0")
    assert {f"{name}/auc", "tweak_askubuntu/auc"} <= set(meta["performance"])


def test_report_lists_the_tweak_evaluations(run):
    project, _ = run
    summary = (project.dir / "metrics/README.md").read_text(encoding="utf8")
    assert "tweak_stackexchange" in summary and "tweak_askubuntu" in summary
