"""benchmarks/hybrid_weight.py: at the pipeline's own weight the figures are those of `evaluate`
and `evaluate-duplicates`; other weights mix the same two parts; pipelines without a weight and
bad weights or labels are refused; graded pairs get Spearman and Pearson; the command writes its rows."""

import json
from pathlib import Path

import pytest
import srsly
import typer
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import roc_auc_score
from typer.testing import CliRunner

from spacy_siamese.corpora import read_pairs
from spacy_siamese.evaluation.duplicates import evaluate_duplicates

from ..conftest import PAIRS, train
from ..search.conftest import HYBRID_CAUCHY, build_nlp
from . import load_benchmark

OWN_WEIGHT = HYBRID_CAUCHY["weight"]


hybrid_weight = load_benchmark("hybrid_weight")


@pytest.fixture(scope="module")
def hybrid():
    return train(build_nlp("hybrid_cauchy"), n_iter=15)[0]


@pytest.fixture(scope="module")
def pair_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "pairs.jsonl"
    srsly.write_jsonl(path, [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    return path


def test_the_pipelines_own_weight_gives_evaluates_figures(hybrid, pair_file):
    records = list(read_pairs(pair_file))
    (row,) = hybrid_weight.weight_rows(hybrid, records, [OWN_WEIGHT], n_pairs=5)
    scores = [hybrid(r.text1).similarity(hybrid(r.text2)) for r in records]
    assert row["roc_auc"] == pytest.approx(roc_auc_score([r.label for r in records], scores), abs=1e-9)
    retrieval = evaluate_duplicates(hybrid, records, n_pairs=5)["results"]["siamese_similarity (trained)"]
    for key in ("mrr@10", "recall@1", "recall@10", "n_queries"):
        assert row[key] == pytest.approx(retrieval[key])


def test_other_weights_mix_the_same_parts(hybrid, pair_file):
    records = list(read_pairs(pair_file))
    rows = hybrid_weight.weight_rows(hybrid, records, [0.0, 1.0, 0.0], n_pairs=5)
    assert [row["weight"] for row in rows] == [0.0, 1.0, 0.0] and rows[0] == rows[2]
    lexical_only = hybrid_weight.weight_rows(hybrid, records, [1.0], n_pairs=5)[0]
    assert rows[1] == lexical_only and rows[0] != rows[1]


def test_refuses_what_has_no_weight(nlp, hybrid, pair_file):
    records = list(read_pairs(pair_file))
    with pytest.raises(ValueError, match="not HybridSimilarity"):
        hybrid_weight.weight_rows(nlp, records, [0.1])
    with pytest.raises(ValueError, match=r"weights must be in \[0, 1\]"):
        hybrid_weight.weight_rows(hybrid, records, [0.1, 1.5])
    positives = [r._replace(label=1.0) for r in records]
    with pytest.raises(ValueError, match="more than one value"):
        hybrid_weight.weight_rows(hybrid, positives, [0.1])


def test_graded_pairs_give_spearman_and_pearson(hybrid, pair_file):
    """At the pipeline's own weight, the rank correlation of its `similarity` with the labels."""
    records = [r._replace(label=0.5 * r.label + 0.1 * (i % 3)) for i, r in enumerate(read_pairs(pair_file))]
    rows = hybrid_weight.weight_rows(hybrid, records, [OWN_WEIGHT, 1.0])
    scores = [hybrid(r.text1).similarity(hybrid(r.text2)) for r in records]
    labels = [r.label for r in records]
    assert set(rows[0]) == {"weight", "spearman", "pearson"}
    assert rows[0]["spearman"] == pytest.approx(spearmanr(scores, labels).correlation, abs=1e-6)
    assert rows[0]["pearson"] == pytest.approx(pearsonr(scores, labels)[0], abs=1e-5)
    assert rows[1] != rows[0]


def test_the_command_writes_its_rows(hybrid, pair_file, tmp_path, monkeypatch):
    model = tmp_path / "model"
    hybrid.to_disk(model)
    monkeypatch.chdir(tmp_path)
    app = typer.Typer()
    app.command()(hybrid_weight.main)
    out = Path("results") / "weights.json"
    args = ["model", str(pair_file), "--weights", "0,0.3", "--compare", "model", "--n-pairs", "5"]
    result = CliRunner().invoke(app, [*args, "--output-json", str(out)])
    assert result.exit_code == 0, result.output
    assert "weight 0.30 (the pipeline's)" in result.output
    report = json.loads(out.read_text())
    assert [m["model"] for m in report["models"]] == ["model", "model"]
    assert report["models"][0]["pipeline_weight"] == OWN_WEIGHT
    assert [row["weight"] for row in report["models"][0]["rows"]] == [0.0, 0.3]
    assert report["models"][0]["rows"] == report["models"][1]["rows"]
    bad = CliRunner().invoke(app, ["model", str(pair_file), "--weights", "0,a"])
    assert bad.exit_code != 0 and "comma-separated" in bad.output
