"""benchmarks/static_peers.py on tiny data: a tiny BERT distilled with model2vec, fine-tuned with
model2vec's pair trainer, scored and timed beside a trained pipeline and the base model's cosine;
the distilled model is reused on a rerun; graded labels give Spearman; bad input is refused."""

import json
import re

import numpy
import pytest
import srsly
import typer
from typer.testing import CliRunner

from ..conftest import GRADED, PAIRS
from . import load_benchmark

pytest.importorskip("model2vec.train")
pytest.importorskip("model2vec.distill")
pytest.importorskip("sentence_transformers")

static_peers = load_benchmark("static_peers")
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory):
    """A one-layer BERT of width 16 whose WordPiece vocabulary is the words of PAIRS and GRADED."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = sorted({w for a, b, _ in PAIRS + GRADED for w in re.findall(r"\w+|[^\w\s]", f"{a} {b}".lower())})
    vocab = {token: i for i, token in enumerate(SPECIALS + words)}
    path = tmp_path_factory.mktemp("tiny_bert")
    BertTokenizerFast(vocab=vocab).save_pretrained(path)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
    )
    BertModel(config).save_pretrained(path)
    return path


def pair_file(path, pairs):
    srsly.write_jsonl(path, [{"text1": a, "text2": b, "label": y} for a, b, y in pairs])
    return path


def run(args):
    app = typer.Typer()
    app.command()(static_peers.main)
    return CliRunner().invoke(app, [str(arg) for arg in args], env={"COLUMNS": "1000"})  # no wrapped errors


def test_distils_fine_tunes_scores_and_times_beside_a_pipeline(nlp, tiny_base, tmp_path):
    nlp.to_disk(tmp_path / "ours")
    train = pair_file(tmp_path / "train.jsonl", PAIRS)
    out = tmp_path / "results" / "peers.json"
    common = [
        "--base",
        tiny_base,
        "--distilled",
        tmp_path / "m2v",
        "--pca-dims",
        8,
        "--max-epochs",
        2,
        "--val-pairs",
        2,
    ]
    common += ["--runs", 2, "--n", 10, "--output-json", out]
    result = run([train, train, tmp_path / "ours", *common, "--finetuned", tmp_path / "tuned"])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    rows = report["results"]
    assert len(rows) == 4 and report["binary"] and report["model2vec"]["n_positive_pairs"] == 5
    for row in rows.values():
        assert 0.0 <= row["auc"] <= 1.0 and len(row["docs_per_sec"]) == 2 and row["median_docs_per_sec"] > 0
    ours = next(name for name in rows if name.endswith("ours"))
    assert rows[ours]["threshold_source"] == "stored (pipe.threshold)"
    assert rows["model2vec distilled"]["threshold_source"] == "best on this file"
    table = out.with_suffix(".md").read_text()
    assert table.count("\n") == 2 + len(rows) and "model2vec fine-tuned (gold)" in table
    assert (tmp_path / "m2v" / "config.json").exists() and (tmp_path / "tuned" / "config.json").exists()

    from model2vec import StaticModel

    tuned = StaticModel.from_pretrained(tmp_path / "tuned")
    pairs = [(a, b) for a, b, _ in PAIRS]
    vectors = tuned.encode([side for pair in pairs for side in pair], use_multiprocessing=False)
    vectors /= numpy.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = (vectors[0::2] * vectors[1::2]).sum(axis=1)
    assert static_peers.static_scores(tuned, pairs) == pytest.approx(cosines, abs=1e-5)

    again = run([train, train, *common])  # the distilled model is read back, not distilled again
    assert again.exit_code == 0, again.output
    assert "read from" in again.output
    rerun = json.loads(out.read_text())["results"]
    assert rerun["model2vec distilled"]["auc"] == rows["model2vec distilled"]["auc"]


def test_graded_pairs_give_spearman(tiny_base, tmp_path):
    train = pair_file(tmp_path / "graded.jsonl", GRADED)
    out = tmp_path / "graded.json"
    args = [train, train, "--base", tiny_base, "--distilled", tmp_path / "m2v", "--pca-dims", 8, "--val-pairs", 2]
    result = run([*args, "--max-epochs", 1, "--runs", 1, "--n", 6, "--positive", 0.7, "--output-json", out])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert not report["binary"] and report["model2vec"]["n_positive_pairs"] == 4
    assert all(-1.0 <= row["spearman"] <= 1.0 for row in report["results"].values())
    assert "Spearman" in out.with_suffix(".md").read_text()


def test_refuses_bad_input(tiny_base, tmp_path):
    train = pair_file(tmp_path / "graded.jsonl", GRADED)
    args = [train, train, "--base", tiny_base, "--output-json", tmp_path / "out.json"]
    too_few = run([*args, "--distilled", tmp_path / "m2v"])  # 3 graded pairs >= 0.8
    assert too_few.exit_code != 0 and "at least 4" in too_few.output
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    taken = run([*args, "--positive", 0.7, "--distilled", tmp_path / "taken"])
    assert taken.exit_code != 0 and "no model2vec model" in taken.output
    assert (tmp_path / "taken" / "notes.txt").read_text() == "mine"
    exists = run([*args, "--distilled", tmp_path / "m2v", "--finetuned", tmp_path / "taken"])
    assert exists.exit_code != 0 and "name a new directory" in exists.output
    not_ours = run([*args, tmp_path / "taken", "--positive", 0.7, "--distilled", tmp_path / "m2v"])
    assert not_ours.exit_code != 0 and "Error:" in not_ours.output and "Traceback" not in not_ours.output
    (tmp_path / "bad.jsonl").write_text('{"text1": "a"}\n')
    bad = run([tmp_path / "bad.jsonl", *args[1:], "--distilled", tmp_path / "m2v"])
    assert bad.exit_code != 0 and "bad.jsonl:1: missing key(s) 'text2'" in bad.output
    assert not (tmp_path / "out.json").exists()
