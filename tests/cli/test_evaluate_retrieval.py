"""`python -m spacy_siamese evaluate-retrieval`."""

import json

from spacy_siamese.evaluation.pair_evaluation import MODEL
from spacy_siamese.evaluation.retrieval import LSA

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
    width = report["results"][MODEL]["width"]  # the vector width, not a top-k cut-off
    assert width > 0 and 1 <= report["results"][LSA]["width"] <= width
    assert "| method | width | MRR |" in result.output and f"| {MODEL} | {width} |" in result.output
    result = invoke("evaluate-retrieval", files / "model", files / "documents.jsonl", "--split", "test")
    assert result.exit_code == 1 and "no test part" in result.output


def test_evaluate_retrieval_refuses_negative_counts(files):
    for option in ("--max-docs", "--eval-pairs"):
        result = invoke("evaluate-retrieval", files / "model", files / "documents.jsonl", option, -1)
        assert result.exit_code == 2 and f"Invalid value for '{option}'" in result.output, result.output
