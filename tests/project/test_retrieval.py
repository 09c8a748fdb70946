"""The `retrieval` workflow, run once for the module: convert-documents (assets + convert) -> S2Net
with `spacy train` -> evaluate-retrieval -> package with the model cards -> report."""

import json

import pytest

from .conftest import TINY_RETRIEVAL, assert_model_card, run_workflow

pytestmark = pytest.mark.slow
COLLECTIONS = ("20news", "reuters")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return run_workflow(tmp_path_factory.mktemp("retrieval"), "retrieval", **TINY_RETRIEVAL)


def test_convert_documents(run):
    project, _ = run
    assert json.loads((project.dir / "corpus/20news/stats.json").read_text())["documents"] == 48
    reuters = json.loads((project.dir / "corpus/reuters/stats.json").read_text())
    assert reuters["documents"] == 60 and reuters["labels"] == 3  # ModApte train only


@pytest.mark.parametrize("name", COLLECTIONS)
def test_train_s2net(run, name):
    project, result = run
    assert (project.dir / f"training/s2net_{name}/model-best/meta.json").exists()
    assert "SIM_AUC" in result.output
    config = (project.dir / f"training/s2net_{name}/model-best/config.cfg").read_text()
    assert 'collection = "jsonl"' in config and "width = 8" in config


@pytest.mark.parametrize("name", COLLECTIONS)
def test_evaluate_retrieval(run, name):
    project, _ = run
    report = json.loads((project.dir / f"metrics/retrieval_{name}.json").read_text())
    assert report["task"] == "retrieval" and report["name"] == f"s2net_{name}"
    assert report["split"] == "dev" and report["dev_fraction"] == 0.2
    assert len(report["results"]) >= 2  # the pipeline and the baselines
    for metrics in report["results"].values():
        assert 0.0 < metrics["mrr"] <= 1.0 and 0.0 <= metrics["p@10"] <= 1.0
    assert f"s2net_{name}" in (project.dir / f"metrics/retrieval_{name}.md").read_text()


@pytest.mark.parametrize("name", COLLECTIONS)
def test_package_carries_its_model_card(run, name):
    project, _ = run
    meta = assert_model_card(project.dir / f"packages/en_siamese_s2net_{name}-0.1.0")
    assert f"retrieval_{name}/mrr" in meta["performance"]


def test_report_lists_both_collections(run):
    project, result = run
    summary = (project.dir / "metrics/README.md").read_text()
    for name in COLLECTIONS:
        assert f"| s2net_{name} |" in summary
    assert summary.strip().splitlines()[0] in result.output
