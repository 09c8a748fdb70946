"""Every command that writes files refuses, before any work, an output that is one of its inputs
(a file of an input directory, a hard link included) or another of its outputs."""

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
]


@pytest.fixture
def root(files, collection, tmp_path):
    shutil.copytree(files / "model", tmp_path / "model")
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
