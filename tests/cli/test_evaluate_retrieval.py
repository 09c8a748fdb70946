"""`python -m spacy_siamese evaluate-retrieval`."""

import json

from .conftest import invoke


def test_evaluate_retrieval(files, tmp_path):
    result = invoke(
        "evaluate-retrieval", files / "model", files / "documents.jsonl", "--baselines", "--max-docs", 8,
        "--eval-pairs", 50, "--name", "docs", "--output-json", tmp_path / "r.json", "--output-md", tmp_path / "r.md",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "### Retrieval on docs: 8 held-out query documents (dev split)" in result.output
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf8"))
    assert report["task"] == "retrieval" and report["n_heldout_docs"] == 8 and len(report["results"]) == 3
    assert report["n_train_docs"] == 48  # the other 80% of the seeded split
    result = invoke("evaluate-retrieval", files / "model", files / "documents.jsonl", "--split", "test")
    assert result.exit_code == 1 and "no test part" in result.output


def test_evaluate_retrieval_refuses_negative_counts(files):
    for option in ("--max-docs", "--eval-pairs"):
        result = invoke("evaluate-retrieval", files / "model", files / "documents.jsonl", option, -1)
        assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.output, result.output
