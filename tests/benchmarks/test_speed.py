"""benchmarks/speed.py: several pipelines and teachers (a bi- and a cross-encoder) are timed in
the same rounds, each against the tokenizer and each teacher; a missing pipeline is refused."""

import json

import srsly
import typer
from threadpoolctl import threadpool_info
from typer.testing import CliRunner

from ..conftest import PAIRS
from ..tiny_transformer import build_tiny_bert, require_teacher
from . import load_benchmark

speed = load_benchmark("speed")
TEXTS = [text for a, b, _ in PAIRS for text in (a, b)]


def run(args):
    app = typer.Typer()
    app.command()(speed.main)
    return CliRunner().invoke(app, [str(arg) for arg in args])


def test_two_pipelines_and_two_kinds_of_teacher_are_timed_together(nlp, tmp_path):
    st = require_teacher()
    import torch

    nlp.to_disk(tmp_path / "one")
    nlp.to_disk(tmp_path / "two")
    base = build_tiny_bert(tmp_path / "bert", TEXTS)
    st.CrossEncoder(str(base), num_labels=1).save(str(tmp_path / "ce"))
    srsly.write_jsonl(tmp_path / "pairs.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    out = tmp_path / "speed.json"
    threads = ([pool["num_threads"] for pool in threadpool_info()], torch.get_num_threads())
    args = [tmp_path / "one", tmp_path / "two", "--data", tmp_path / "pairs.jsonl", "--n", 7, "--runs", 2]
    result = run([*args, "--teacher", base, "--teacher", tmp_path / "ce", "-o", out])
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["n_texts"] == 7 and report["threads"] == 1 and len(report["models"]) == 2
    teachers = [name for name in report["median_docs_per_sec"] if name.startswith("teacher")]
    assert len(teachers) == 2
    for model in report["models"]:
        assert report["ratio_to_tokenizer"][model] > 0
        assert sorted(report["ratio_to_teacher"][model]) == sorted(teachers)
        assert report["similarity_on_processed_docs"][model]["median"] > 0
    assert all(len(rates) == 2 for rates in report["docs_per_sec"].values())
    # timed on one thread, but the process is left as it was (a later test scores on its threads)
    assert ([pool["num_threads"] for pool in threadpool_info()], torch.get_num_threads()) == threads


def test_a_cross_encoder_reads_the_texts_as_pairs(tmp_path):
    st = require_teacher()
    base = build_tiny_bert(tmp_path / "bert", TEXTS)
    st.CrossEncoder(str(base), num_labels=1).save(str(tmp_path / "ce"))
    teacher = speed.teacher_pipe(str(tmp_path / "ce"))
    assert teacher.cross_encoder
    assert len(teacher.pipe(TEXTS[:5], batch_size=8)) == 3  # the odd last text is paired with itself


def test_a_missing_pipeline_is_refused(tmp_path):
    result = run([tmp_path / "nowhere", "--n", 3])
    assert result.exit_code == 1 and "not a pipeline directory" in result.output
