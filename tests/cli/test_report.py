"""`python -m spacy_siamese report`: one summary of saved evaluations."""

from .conftest import invoke


def test_report_summarises_saved_evaluations(files, tmp_path, monkeypatch):
    invoke("evaluate", files / "model", files / "dev.jsonl", "--name", "tiny", "--output-json", tmp_path / "tiny.json")
    invoke("evaluate-retrieval", files / "model", files / "documents.jsonl", "--output-json", tmp_path / "docs.json")
    invoke(
        "evaluate-duplicates",
        files / "model",
        files / "dev.jsonl",
        "--name",
        "dups",
        "--output-json",
        tmp_path / "d.json",
    )
    (tmp_path / "other.json").write_text("[1, 2]", encoding="utf8")
    monkeypatch.chdir(tmp_path.parent)
    relative = f"{tmp_path.name}/*.json"  # as a project command passes it: unexpanded
    named = [tmp_path / "tiny.json", tmp_path / "docs.json", tmp_path / "d.json"]
    for args in (named, [tmp_path], [f"{tmp_path}/*.json"], [relative]):
        result = invoke("report", *args, "--output-md", tmp_path / "README.md")
        assert result.exit_code == 0, result.output
        summary = (tmp_path / "README.md").read_text(encoding="utf8")
        assert "| tiny |" in summary and "| docs |" in summary and "## Document retrieval" in result.output
        assert "| dups |" in summary and "### Duplicate retrieval on dups" in summary
    result = invoke("report", tmp_path / "other.json")
    assert result.exit_code == 1 and "is not an evaluation" in result.output
    result = invoke("report", tmp_path / "nothing")
    assert result.exit_code == 1 and "No evaluation JSON files" in result.output
