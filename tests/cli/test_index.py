"""`python -m spacy_siamese index`."""

import numpy
import pytest
import spacy
import srsly

from spacy_siamese import SimilarityIndex

from .conftest import INPUT_ERRORS, TEXTS, invoke


def test_index_saves_vectors_texts_and_ids(collection, tmp_path):
    result = invoke("index", collection / "model", collection / "texts.jsonl", "--output", tmp_path / "idx")
    assert result.exit_code == 0, result.output
    assert f"Indexed {len(TEXTS)} docs" in result.output
    index = SimilarityIndex.load(tmp_path / "idx", spacy.load(collection / "model"))
    assert index.texts == TEXTS and len(index) == len(TEXTS)
    assert [r["id"] for r in srsly.read_jsonl(tmp_path / "idx" / "ids.jsonl")] == [f"q{i}" for i in range(len(TEXTS))]
    assert numpy.isfinite(index.vectors).all()


@pytest.mark.parametrize("input,message", INPUT_ERRORS)
def test_input_errors(collection, tmp_path, input, message):
    result = invoke("index", collection / "model", collection / input, "-o", tmp_path / "idx")
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output


def test_model_without_pipe(collection, tmp_path):
    result = invoke("index", collection / "blank", collection / "texts.txt", "-o", tmp_path / "idx")
    assert result.exit_code == 1
    assert "no 'siamese_similarity' component" in result.output


def test_search_finds_the_model_from_another_directory(collection, tmp_path, monkeypatch):
    monkeypatch.chdir(collection)
    assert invoke("index", "model", "texts.txt", "--output", tmp_path / "idx").exit_code == 0
    assert srsly.read_json(tmp_path / "idx" / "index.json")["model"] == str((collection / "model").resolve())
    monkeypatch.chdir(tmp_path)
    result = invoke("search", "idx", TEXTS[0], "-k", 2)
    assert result.exit_code == 0, result.output
    assert TEXTS[0] in result.output


def test_index_refuses_zero_processes(collection, tmp_path):
    result = invoke("index", collection / "model", collection / "texts.txt", "-o", tmp_path / "idx", "--n-process", 0)
    assert result.exit_code == 2 and "Invalid value for '--n-process'" in result.output, result.output
    assert not (tmp_path / "idx").exists()


def test_collection_argument_is_named_as_in_encode_and_dedupe():
    for command in ("index", "encode", "dedupe"):
        result = invoke(command, "--help")
        assert result.exit_code == 0
        assert "{model} {input}" in result.output, (command, result.output)
