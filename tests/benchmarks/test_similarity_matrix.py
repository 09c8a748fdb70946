"""benchmarks/similarity_matrix.py: the matrix path is timed beside the pair-wise one, and agrees with it."""

import json

import srsly
import typer
from typer.testing import CliRunner

from ..conftest import PAIRS
from . import load_benchmark

benchmark = load_benchmark("similarity_matrix")


def run(args):
    app = typer.Typer()
    app.command()(benchmark.main)
    return CliRunner().invoke(app, [str(arg) for arg in args])


def test_matrix_and_pair_wise_times_agree(nlp, tmp_path):
    nlp.to_disk(tmp_path / "model")
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    args = [tmp_path / "model", "--data", tmp_path / "pairs.jsonl", "--n-a", 3, "--n-b", 12, "--runs", 2]
    result = run(args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["shape"] == [3, 12] and report["matrix_s"] >= 0 and report["pair_wise_s"] >= 0
    assert report["max_abs_difference"] <= 1e-6
    result = run([*args[:-4], "--n-b", 100])
    assert result.exit_code != 0 and "fewer than 3 + 100" in result.output
