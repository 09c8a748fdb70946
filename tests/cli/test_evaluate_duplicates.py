"""`python -m spacy_siamese evaluate-duplicates`: duplicate retrieval on a pair file."""

import json

from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF

from .conftest import invoke


def test_model_and_baseline(files, tmp_path):
    out = tmp_path / "out.json"
    result = invoke(
        "evaluate-duplicates", files / "model", files / "dev.jsonl", "--fit-texts", files / "dev.jsonl",
        "--output-json", out, "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text(encoding="utf8"))
    assert report["n_queries"] == 5 and "TF-IDF cosine" in report["results"]
    assert set(report["results"]) == {MODEL, TFIDF}
    assert json.loads(result.stdout) == report  # the same report, printed
    assert report["model_path"] == "model" and report["pairs"] == "dev.jsonl"  # no machine path
    assert set(report["versions"]) == {"python", "spacy", "spacy_siamese"}


def test_baseline_only_and_options(files, tmp_path):
    result = invoke(
        "evaluate-duplicates", "-", files / "dev.jsonl", "--fit-texts", files / "train.tsv", "--n-pairs", 3,
        "--seed", 1,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report["results"]) == {TFIDF} and report["n_queries"] == 3 and report["seed"] == 1
    assert report["model_path"] == "-" and "model" not in report


def test_relative_paths_are_kept_as_given(files, monkeypatch):
    monkeypatch.chdir(files)
    result = invoke("evaluate-duplicates", "model", "dev.jsonl")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["model_path"] == "model" and report["pairs"] == "dev.jsonl" and list(report["results"]) == [MODEL]


def test_errors_are_messages(files):
    for args, message in (
        (["-", files / "missing.jsonl"], "File not found"),
        ([files / "missing_model", files / "dev.jsonl"], "Model not found"),
        ([files / "model", files / "empty.jsonl"], "o pairs"),
        (["-", files / "dev.jsonl", "--fit-texts", files / "missing.tsv"], "File not found"),
    ):
        result = invoke("evaluate-duplicates", *args)
        assert result.exit_code == 1, result.output
        assert message in result.output and "Traceback" not in result.output
