"""The convert steps: the question-disjoint split, and the error exits on malformed or empty data."""

import json
import subprocess
import sys

import pytest

from .conftest import PROJECT

pytestmark = pytest.mark.slow


def test_malformed_line_fails(project):
    path = project.mirror / "stackexchange/askubuntu.tsv"
    n_lines = len(path.read_text(encoding="utf8").splitlines())
    with path.open("a", encoding="utf8") as file_:
        file_.write("duplicate\tonly one question here\n")
    project.write_checksums()  # a well-copied file with a bad line
    assert project("assets").returncode == 0
    result = project("convert-stackexchange")
    assert result.returncode != 0
    assert f"askubuntu.tsv:{n_lines + 1}: expected 3 tab-separated fields" in result.output
    assert "malformed pair file" in result.output


def test_empty_dataset_fails(project):
    (project.mirror / "quora/dev.tsv").write_text("", encoding="utf8")
    project.write_checksums()
    assert project("assets", dataset="quora").returncode == 0
    result = project("convert-quora")
    assert result.returncode != 0
    assert "empty dataset: no pairs found in" in result.output and "quora/dev.tsv" in result.output


@pytest.mark.parametrize(
    "script,name,step", [("convert.py", "quora", "assets"), ("convert_documents.py", "reuters", "assets-documents")]
)
def test_convert_without_assets_says_which_step_to_run(tmp_path, script, name, step):
    script = str(PROJECT / "scripts" / script)
    cmd = [sys.executable, script, name, str(tmp_path / "sources.json"), str(tmp_path / "out")]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 1
    assert f"sources.json not found. Run the assets step first: spacy project run {step}" in result.stderr


def test_malformed_collection_fails_with_file_and_record(project):
    """A malformed document that passes the checksum (listed as is) stops convert-reuters."""
    sgm = project.mirror / "documents/reuters21578/reut2-003.sgm"
    sgm.write_text(sgm.read_text(encoding="latin-1")[:200], encoding="latin-1")
    project.write_checksums()
    assert project("assets-documents").returncode == 0
    result = project("convert-reuters")
    assert result.returncode != 0
    assert "malformed reuters collection" in result.output
    assert "reut2-003.sgm" in result.output and "not closed" in result.output


def _official_quora_file(path, n=300):
    rows = ['"id"\t"qid1"\t"qid2"\t"question1"\t"question2"\t"is_duplicate"']
    for i in range(n):  # chains of questions, so components have several pairs
        a, b = f"Question number {i // 3}?", f"question number {i // 3 + 1000} ?"
        if i % 3 == 2:
            b = f"Another question {i}"
        rows.append(f'"{i}"\t"{2 * i}"\t"{2 * i + 1}"\t"{a}"\t"{b}"\t"{i % 2}"')
    path.write_text("\n".join(rows) + "\n", encoding="utf8")


def _convert(sources, out, seed):
    cmd = [sys.executable, str(PROJECT / "scripts/convert.py"), "quora", str(sources), str(out),
           "--seed", str(seed), "--dev-fraction", "0.1"]  # fmt: skip
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "stats.json").read_text())


def test_official_quora_file_gets_a_seeded_question_disjoint_split(tmp_path):
    raw = tmp_path / "quora_duplicate_questions.tsv"
    _official_quora_file(raw)
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps({"source": "official", "files": [
        {"name": "quora/quora_duplicate_questions.tsv", "path": str(raw)}]}))  # fmt: skip
    stats = _convert(sources, tmp_path / "out", seed=1)
    assert stats["questions_on_both_sides"] == 0
    assert stats["train"]["pairs"] + stats["dev"]["pairs"] == 300
    assert 20 <= stats["dev"]["pairs"] <= 30
    dev = [json.loads(line) for line in (tmp_path / "out/dev.jsonl").read_text().splitlines()]
    train = [json.loads(line) for line in (tmp_path / "out/train.jsonl").read_text().splitlines()]
    numbers = lambda pairs: {t.lower().strip(" ?") for p in pairs for t in (p["text1"], p["text2"])}  # noqa: E731
    assert not numbers(dev) & numbers(train)
    _convert(sources, tmp_path / "again", seed=1)
    assert (tmp_path / "again/dev.jsonl").read_bytes() == (tmp_path / "out/dev.jsonl").read_bytes()
    _convert(sources, tmp_path / "other", seed=2)
    assert (tmp_path / "other/dev.jsonl").read_bytes() != (tmp_path / "out/dev.jsonl").read_bytes()
