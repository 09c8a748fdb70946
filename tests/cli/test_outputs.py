"""Every command that writes files refuses, before any work, an output that is one of its inputs
(a file of an input directory, a hard link included), another of its outputs, or a directory that
is not of the kind it writes (issue 75, defects 1 and 2)."""

import json
import os
import shutil

import pytest

from .conftest import invoke

# (command line with {root} for the test's directory, what the refused output is)
CASES = [
    ("convert {root}/dev.spacy {root}/dev.spacy --format jsonl", "also an input"),
    ("encode {root}/model {root}/texts.jsonl -o {root}/link.npy", "also an input"),  # a hard link of texts.jsonl
    ("encode {root}/model {root}/v.npy.ids.json --format jsonl -o {root}/v.npy", "also an input"),  # the ids file
    ("evaluate {root}/model {root}/dev.jsonl --output-json {root}/dev.jsonl", "also an input"),
    ("evaluate {root}/model {root}/dev.jsonl --output-md {root}/model/meta.json", "also an input"),
    ("evaluate {root}/model {root}/dev.jsonl --output-json {root}/a.md --output-md {root}/a.md", "Two outputs"),
    ("evaluate-duplicates {root}/model {root}/dev.jsonl --output-md {root}/./dev.jsonl", "also an input"),
    ("evaluate-retrieval {root}/model {root}/documents.jsonl --output-json {root}/documents.jsonl", "also an input"),
    ("teacher-pairs no-teacher {root}/dev.jsonl -o {root}/dev.jsonl", "also an input"),
    ("teacher-pairs no-teacher {root}/table/texts.json -o {root}/p.jsonl --vectors-output {root}/table", "an input"),
    ("teacher-pairs no-teacher {root}/table/texts.json --vectors-output {root}/table", "also an input"),
    # one case for each other command that writes (`serve` writes nothing)
    ("average {root}/model {root}/model --dev {root}/dev.jsonl -o {root}/notes", "is not a pipeline directory"),
    ("calibrate {root}/model {root}/dev.jsonl -o {root}/notes", "is not a pipeline directory"),
    ("dedupe {root}/model {root}/texts.jsonl -o {root}/model/config.cfg", "also an input"),
    ("dedupe-ray {root}/model {root}/texts.jsonl --vectors-output {root}/v -o {root}/texts.jsonl", "also an input"),
    ("evaluate-crosslingual {root}/model {root}/para.jsonl --output-json {root}/para.jsonl", "also an input"),
    ("explain {root}/model a b --output-json {root}/model/config.cfg", "also an input"),
    ("index {root}/model {root}/texts.jsonl -o {root}/notes", "is not a vector store"),
    ("report {root}/eval.json --output-md {root}/eval.json", "also an input"),
    ("search {root}/index q --model {root}/model --output-json {root}/model/meta.json", "also an input"),
    ("teacher-train {root}/dev.jsonl -o {root}/notes --base no-base", "is not a teacher directory"),
]


@pytest.fixture(scope="module")
def index(files, collection, tmp_path_factory):
    path = tmp_path_factory.mktemp("outputs") / "index"
    result = invoke("index", files / "model", collection / "texts.jsonl", "-o", path, "--no-progress")
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def root(files, collection, index, tmp_path):
    shutil.copytree(files / "model", tmp_path / "model")
    shutil.copytree(index, tmp_path / "index")
    (tmp_path / "notes" / "sub").mkdir(parents=True)  # the user's folder of defect 1
    (tmp_path / "notes" / "notes.txt").write_text("mine", encoding="utf8")
    (tmp_path / "notes" / "sub" / "thesis.tex").write_text("mine", encoding="utf8")
    (tmp_path / "para.jsonl").write_text(json.dumps({"en": "a cat", "es": "un gato"}) + "\n", encoding="utf8")
    (tmp_path / "eval.json").write_text(json.dumps({"task": "pairs", "results": {}}), encoding="utf8")
    for name in ("dev.jsonl", "documents.jsonl"):
        shutil.copy(files / name, tmp_path / name)
    shutil.copy(files / "dev.jsonl", tmp_path / "dev.spacy")
    shutil.copy(collection / "texts.jsonl", tmp_path / "texts.jsonl")
    shutil.copy(collection / "texts.jsonl", tmp_path / "v.npy.ids.json")
    os.link(tmp_path / "texts.jsonl", tmp_path / "link.npy")
    (tmp_path / "table").mkdir()
    shutil.copy(files / "dev.jsonl", tmp_path / "table" / "texts.json")
    return tmp_path


def _contents(root):
    return {path: path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


@pytest.mark.parametrize("command,message", CASES)
def test_an_output_that_is_an_input_is_refused_before_any_work(root, command, message):
    before = _contents(root)
    result = invoke(*command.format(root=root).split())
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and message in result.output and "Traceback" not in result.output
    assert _contents(root) == before  # nothing written, nothing cut


def test_a_directory_that_is_not_a_pipeline_is_named_in_one_line(tmp_path):
    """Issue 75, defect 8: a non-pipeline --model DIR was walked whole for its empty files (/usr: a
    75 KB error)."""
    (tmp_path / "usr" / "lib").mkdir(parents=True)
    for i in range(500):
        (tmp_path / "usr" / "lib" / f"empty{i}").write_bytes(b"")
    result = invoke("explain", tmp_path / "usr", "a", "b")
    assert (
        result.exit_code == 1
        and result.output == f"Error: {tmp_path / 'usr'} is not a spaCy pipeline (it has no config.cfg)\n"
    )
