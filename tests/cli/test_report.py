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
        (tmp_path / "README.md").unlink(missing_ok=True)  # each run writes its own summary
        result = invoke("report", *args, "--output-md", tmp_path / "README.md")
        assert result.exit_code == 0, result.output
        summary = (tmp_path / "README.md").read_text(encoding="utf8")
        assert "| tiny |" in summary and "| docs |" in summary and "## Document retrieval" in result.output
        assert "| dups |" in summary and "### Duplicate retrieval on dups" in summary
    result = invoke("report", tmp_path / "other.json")
    assert result.exit_code == 1 and "is not an evaluation" in result.output
    result = invoke("report", tmp_path / "nothing")
    assert result.exit_code == 1 and "No evaluation JSON files" in result.output


def test_report_refuses_two_evaluations_of_one_name(files, tmp_path):
    for out in ("a.json", "b.json"):
        args = ("evaluate", files / "model", files / "dev.jsonl", "--name", "tiny", "--output-json", tmp_path / out)
        assert invoke(*args).exit_code == 0
    result = invoke("report", tmp_path)
    assert result.exit_code == 1
    assert "a.json and " in result.output and "b.json are both named 'tiny'" in result.output
    result = invoke("report", tmp_path / "a.json", tmp_path / "a.json")  # one file named twice: one row
    assert result.exit_code == 0 and result.output.count("| tiny |") == 1


def test_a_file_that_is_not_json_is_named(files, tmp_path):
    invoke("evaluate", files / "model", files / "dev.jsonl", "--name", "tiny", "--output-json", tmp_path / "tiny.json")
    (tmp_path / "notes.json").write_text('{"half": ', encoding="utf8")
    (tmp_path / "latin1.json").write_bytes(b'{"caf\xe9": 1}')
    result = invoke("report", tmp_path)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "latin1.json: not a JSON file" in result.output
    result = invoke("report", tmp_path / "tiny.json", tmp_path / "notes.json")
    assert result.exit_code == 1 and "notes.json: not a JSON file (Expecting value" in result.output, result.output
