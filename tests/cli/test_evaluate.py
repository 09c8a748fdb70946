"""`python -m spacy_siamese evaluate`."""

import json
import re

import pytest

from spacy_siamese.cli import app
from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF, teacher_method
from spacy_siamese.teacher import models

from ..conftest import FakeTeacher
from .conftest import invoke, runner


def test_evaluate_writes_json_markdown_and_plot(files, tmp_path):
    result = invoke(
        "evaluate", files / "model", files / "dev.jsonl", "--baselines", "--fit-texts", files / "train.tsv",
        "--name", "tiny", "--examples", 4, "--no-progress", "--output-json", tmp_path / "m.json",
        "--output-md", tmp_path / "m.md", "--plot", tmp_path / "m.png",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "### Pair similarity on tiny (10 pairs, 5 positive)" in result.output
    assert "Skipped the averaged word vectors baseline" in result.output  # the model has no vectors
    report = json.loads((tmp_path / "m.json").read_text(encoding="utf8"))
    assert report["task"] == "pairs" and report["name"] == "tiny" and list(report["results"]) == [MODEL, TFIDF]
    assert report["tfidf"]["fitted_on"].endswith("pairs of train.tsv")  # no machine path
    assert report["files"]["fit_texts"] == "train.tsv" and report["files"]["pairs"] == "dev.jsonl"  # no machine path
    assert len(report["examples"]) == 4
    assert "| method | acc | P | R | F1 | AUC | AP | threshold |" in (tmp_path / "m.md").read_text(encoding="utf8")
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


def test_evaluate_scores_a_teacher_beside_the_pipeline(files, tmp_path, monkeypatch):
    teachers = []
    monkeypatch.setattr(models, "load_teacher", lambda name: teachers.append(FakeTeacher()) or teachers[-1])
    teacher = tmp_path / "teachers" / "fake-teacher"  # a directory: named by its last two parts
    teacher.mkdir(parents=True)
    args = ["evaluate", files / "model", files / "dev.jsonl", "--teacher", teacher,
            "--teacher-cache", tmp_path / "cache", "--no-progress", "--output-json", tmp_path / "m.json"]  # fmt: skip
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "m.json").read_text(encoding="utf8"))
    method = teacher_method("teachers/fake-teacher")
    assert list(report["results"]) == [MODEL, method]
    assert report["teachers"] == {method: {"name": "teachers/fake-teacher", "kind": "bi-encoder"}}
    assert f"| {method} |" in result.output and "the bi-encoder teachers/fake-teacher's cosine" in result.output
    assert len(list((tmp_path / "cache").glob("teacher-*.npy"))) == 1
    assert invoke(*args).exit_code == 0 and len(teachers) == 1  # the rerun reads the cached vectors


def test_teacher_options_are_checked_before_the_model_loads(files, tmp_path, monkeypatch):
    monkeypatch.setattr(models, "load_teacher", lambda name: FakeTeacher())
    (tmp_path / "cache").write_text("a user's file")
    base = ["evaluate", tmp_path / "missing-model", files / "dev.jsonl"]
    result = invoke(*base, "--teacher", "t", "--teacher-cache", tmp_path / "cache")
    assert result.exit_code == 1 and "is a file: give a directory" in result.output, result.output
    result = invoke(*base, "--teacher", "t", "--teacher", "t")
    assert result.exit_code == 1 and "--teacher names a teacher twice: t" in result.output, result.output
    result = invoke("evaluate", files / "model", files / "dev.jsonl", "--teacher", "", "--no-progress")
    assert result.exit_code == 0 and "teacher" not in result.output, result.output  # "" is none (a project var)


def test_evaluate_with_a_teacher_but_no_extra_says_which_extra(files, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    result = invoke("evaluate", files / "model", files / "dev.jsonl", "--teacher", "any-teacher")
    assert result.exit_code == 1
    assert "pip install 'spacy-siamese[teacher]'" in result.output and "Traceback" not in result.output


def test_teacher_help_shows_the_extra():
    result = runner.invoke(app, ["evaluate", "--help"], env={"COLUMNS": "200"})  # wide: no "…" cuts
    assert result.exit_code == 0
    assert "spacy-siamese[teacher]" in re.sub(r"[\s│]+", " ", result.output)


@pytest.mark.parametrize(
    "args,message",
    [
        (["{root}/model", "{root}/missing.jsonl"], "File not found"),
        (["{root}/missing_model", "{root}/dev.jsonl"], "Model not found"),
        (["{root}/blank", "{root}/dev.jsonl"], "no 'siamese_similarity' component"),
        (["{root}/model", "{root}/empty.jsonl"], "o pairs"),
        (["{root}/model", "{root}/bad.jsonl"], "bad.jsonl:2"),
        (["{root}/model", "{root}/dev.jsonl", "--baselines", "--vectors", "{root}/blank"], "no static word vectors"),
    ],
)
def test_evaluate_errors_are_messages(files, args, message):
    result = invoke("evaluate", *[a.format(root=files) for a in args])
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output


def test_the_table_is_printed_and_saved_before_a_failing_plot(files, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    out = tmp_path / "eval.json"
    result = invoke(
        "evaluate", files / "model", files / "dev.jsonl", "--output-json", out, "--plot", tmp_path / "c.png"
    )
    assert result.exit_code == 1
    assert "| method |" in result.output and out.exists()  # printed and saved first
    assert (
        result.output.rstrip().splitlines()[-1] == "Error: Plots need matplotlib: pip install 'spacy-siamese[project]'"
    )


STS_ROWS = [
    ("main-captions", "MSRvid", "A man is playing a guitar.", "A man plays the guitar.", 4.8),
    ("main-captions", "MSRvid", "A man is playing a guitar.", "A woman is slicing an onion.", 0.0),
    ("main-captions", "MSRvid", "A dog runs in the park.", "A dog is running on the grass.", 3.9),
    ("main-forums", "answers-forums", "How do I learn Python fast?", "Where can I buy a car?", 0.2),
    ("main-forums", "answers-forums", "Why is the sky blue?", "What makes the sky look blue?", 4.6),
    ("main-forums", "answers-forums", "What is love?", "How do you define love?", 3.1),
]


def write_sts(path):
    rows = (f"{g}\t{f}\t2015\t{i:04d}\t{y}\t{a}\t{b}\n" for i, (g, f, a, b, y) in enumerate(STS_ROWS))
    path.write_text("".join(rows), encoding="utf8")
    return path


def test_evaluate_scores_the_sts_source_files_apart_with_intervals(files, tmp_path):
    sts = write_sts(tmp_path / "sts-dev.csv")
    result = invoke(
        "evaluate", files / "model", sts, "--bootstrap", 100, "--confidence", 0.9, "--no-progress",
        "--output-json", tmp_path / "m.json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "m.json").read_text(encoding="utf8"))
    assert report["binary"] is False and list(report["groups"]) == ["MSRvid", "answers-forums"]
    assert report["bootstrap"]["confidence"] == 0.9 and report["bootstrap"]["n_resamples"] == 100
    assert "90% intervals (percentile bootstrap over the pairs, 100 resamples" in result.output
    assert "Spearman by group of pairs:" in result.output and "| answers-forums | 3 |" in result.output


def test_evaluate_refuses_a_negative_bootstrap(files):
    result = invoke("evaluate", files / "model", files / "dev.jsonl", "--bootstrap", -5)
    assert result.exit_code == 2 and "Invalid value for '--bootstrap'" in result.output


def test_evaluate_only_the_pairs_of_some_groups(files, tmp_path):
    sts = write_sts(tmp_path / "sts-dev.csv")
    result = invoke("evaluate", files / "model", sts, "--group", "MSRvid", "--output-json", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "m.json").read_text(encoding="utf8"))
    assert report["n_pairs"] == 3 and report["only_groups"] == ["MSRvid"] and "groups" not in report
    result = invoke("evaluate", files / "model", sts, "--group", "MSRvid", "--group", "answer-answer")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "No pairs of group 'answer-answer' in" in result.output
    assert "(its groups: MSRvid, answers-forums)" in result.output
    result = invoke("evaluate", files / "model", files / "dev.jsonl", "--group", "x")
    assert result.exit_code == 1 and "(its groups: none)" in result.output


def test_evaluate_compares_another_pipeline_with_the_lead_over_it(files, search_models, tmp_path):
    other = tmp_path / "other"
    search_models["cosine"].to_disk(other)
    args = ["evaluate", files / "model", files / "dev.jsonl", "--bootstrap", 20, "--no-progress"]
    result = invoke(*args, "--compare", other, "--output-json", tmp_path / "m.json")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "m.json").read_text(encoding="utf8"))
    method = f"compared: {other}"
    assert list(report["results"]) == [MODEL, method] and report["files"]["compared"] == [str(other)]
    assert report["results"][method]["threshold"] == search_models["cosine"].get_pipe("siamese_similarity").threshold
    assert set(report["bootstrap"]["differences"]) == {method}
    assert f"{method}: MWEEncoder.v2 + CosineSimilarity.v1, at its own stored threshold." in result.output
    for compare, message in [
        ([files / "model"], "the evaluated one"),
        ([other, other], "twice"),
        ([tmp_path / "missing"], "Model not found"),
        ([files / "blank"], "siamese_similarity"),
    ]:
        failed = invoke(*args, *[x for path in compare for x in ("--compare", path)])
        assert failed.exit_code == 1 and message in failed.output and "Traceback" not in failed.output


def test_evaluate_refuses_a_negative_limit_or_examples(files):
    for option in ("--limit", "--examples"):
        result = invoke("evaluate", files / "model", files / "dev.jsonl", option, -1)
        assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.output, result.output


def test_evaluate_sees_the_evaluated_pipeline_under_another_spelling(files, monkeypatch):
    """model/ (as a shell completes it), ./model and model are one pipeline: not compared with itself."""
    monkeypatch.chdir(files)
    for compare in ("model/", "./model", str(files / "model")):
        result = invoke("evaluate", "model", "dev.jsonl", "--compare", compare)
        assert result.exit_code == 1 and "the evaluated one" in result.output, (compare, result.output)
    result = invoke("evaluate", "model", "dev.jsonl", "--compare", "blank", "--compare", "blank/")
    assert result.exit_code == 1 and "names a pipeline twice or the evaluated one: blank" in result.output
