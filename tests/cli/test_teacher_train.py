"""`python -m spacy_siamese teacher-train`, and `evaluate --teacher` of the teachers it trains, on
a tiny BERT built in the test."""

import json

import pytest
import srsly

from spacy_siamese.teacher.models import teacher_label

from ..conftest import PAIRS
from ..tiny_transformer import build_tiny_bert, require_teacher
from .conftest import invoke


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build_tiny_bert(tmp_path_factory.mktemp("tiny") / "bert", [t for a, b, _ in PAIRS for t in (a, b)])


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    path = tmp_path_factory.mktemp("pairs") / "train.jsonl"
    srsly.write_jsonl(path, [{"text1": a, "text2": b, "label": label} for a, b, label in PAIRS])
    return path


def test_the_teacher_command_trains_and_saves_a_model_that_sentence_transformers_loads(base, pairs, files, tmp_path):
    st = require_teacher()
    out = tmp_path / "teacher"
    args = ["--base", base, "--max-pairs", 6, "--batch-size", 3, "--epochs", 1, "--seed", 1, "--no-progress"]
    result = invoke("teacher-train", pairs, "-o", out, *args)
    assert result.exit_code == 0, result.output
    assert "Trained a cross-encoder teacher on 6 pairs" in result.output
    assert json.loads((out / "spacy_siamese_teacher.json").read_text())["n_pairs"] == 6
    scores = st.CrossEncoder(str(out)).predict([(PAIRS[0][0], PAIRS[0][1])])
    assert 0.0 < float(scores[0]) < 1.0
    # a cross-encoder and a bi-encoder teacher beside the pipeline (what teacher-evaluate did)
    report = tmp_path / "teachers.json"
    result = invoke("evaluate", files / "model", pairs, "--teacher", out, "--teacher", base, "--bootstrap", 20,
                    "--teacher-cache", tmp_path / "cache", "--output-json", report, "--no-progress")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "10 pairs, 5 positive" in result.output and "95% intervals" in result.output
    kinds = {t["name"]: t["kind"] for t in json.loads(report.read_text())["teachers"].values()}
    assert kinds == {teacher_label(str(out)): "cross-encoder", teacher_label(str(base)): "bi-encoder"}
    assert "the cross-encoder" in result.output and "probability" in result.output
    assert len(list((tmp_path / "cache").glob("scores-*.npy"))) == 1  # the cross-encoder's scores, cached


def test_a_bi_encoder_teacher_from_the_command(base, pairs, tmp_path):
    st = require_teacher()
    out = tmp_path / "mnrl"
    result = invoke("teacher-train", pairs, "-o", out, "--base", base, "--kind", "mnrl", "--batch-size", 5)
    assert result.exit_code == 0, result.output
    assert "Trained a mnrl teacher on 5 pairs" in result.output
    assert st.SentenceTransformer(str(out)).encode(["Why is the sky blue?"]).shape == (1, 16)


@pytest.mark.parametrize(
    "args,message",
    [
        (["--kind", "bm25"], "Unknown teacher kind 'bm25'"),
        (["--batch-size", 0], "Invalid value for '--batch-size'"),
        (["--max-pairs", -1], "Invalid value for '--max-pairs'"),
        (["--max-length", 5], "max_length 0 (the data's) or >= 8"),
        (["--checkpoint-steps", -1], "Invalid value for '--checkpoint-steps'"),
    ],
)
def test_bad_options_are_refused(pairs, tmp_path, args, message):
    result = invoke("teacher-train", pairs, "-o", tmp_path / "t", "--base", "any-model", *args)
    assert result.exit_code in (1, 2) and message in result.output, result.output
    assert not (tmp_path / "t").exists()


def test_a_base_whose_weights_are_a_pickle_is_one_line_naming_the_file(pairs, tmp_path):
    """Issue 75 (7): a pickled pytorch_model.bin that torch refuses was a raw traceback."""
    require_teacher()
    import torch

    from ..teacher.test_train import Payload

    bad = build_tiny_bert(tmp_path / "bad", ["a b"])
    (bad / "model.safetensors").unlink()
    torch.save({"weights": Payload()}, bad / "pytorch_model.bin")
    result = invoke("teacher-train", pairs, "-o", tmp_path / "t", "--base", bad)
    assert result.exit_code == 1, result.output
    assert f"Error: {bad / 'pytorch_model.bin'}: torch refuses to load this pickle" in result.output
    assert "convert the model to safetensors" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "t").exists()


def test_the_output_may_not_replace_the_base_model_or_a_pair_file(base, pairs):
    result = invoke("teacher-train", pairs, "-o", base, "--base", base)
    assert result.exit_code == 1 and "would replace the input" in result.output, result.output
    result = invoke("teacher-train", pairs, "-o", pairs.parent, "--base", base)
    assert result.exit_code == 1 and "would replace the input" in result.output, result.output


def test_a_killed_teacher_training_resumes_from_its_checkpoint(base, pairs, tmp_path, monkeypatch):
    """Issue 76 (3): --resume continues from the last checkpoint, refused where there is none."""
    require_teacher()
    import transformers

    out = tmp_path / "teacher"
    args = ["-o", out, "--base", base, "--batch-size", 2, "--checkpoint-steps", 2, "--max-length", 0]
    result = invoke("teacher-train", pairs, *args, "--resume")
    assert result.exit_code == 1 and "Error: No checkpoint to resume from in" in result.output, result.output
    save = transformers.Trainer._save_checkpoint

    def save_then_die(trainer, *a):
        save(trainer, *a)
        raise KeyboardInterrupt

    monkeypatch.setattr(transformers.Trainer, "_save_checkpoint", save_then_die)
    assert invoke("teacher-train", pairs, *args).exit_code == 130  # killed: Ctrl-C
    checkpoints = tmp_path / ".teacher.siamese-checkpoints"
    assert (checkpoints / "checkpoint-2").is_dir() and not out.exists()
    result = invoke("teacher-train", pairs, *args, "--resume", "--seed", 1)
    assert result.exit_code == 1 and "other settings: seed 0 (now 1)" in result.output, result.output
    monkeypatch.undo()
    result = invoke("teacher-train", pairs, *args, "--resume")
    assert result.exit_code == 0 and "Trained a cross-encoder teacher on 10 pairs" in result.output, result.output
    assert json.loads((out / "spacy_siamese_teacher.json").read_text())["max_length"] > 8
    assert not checkpoints.exists()
