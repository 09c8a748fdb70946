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
    assert srsly.read_json(tmp_path / "idx" / "manifest.json")["index"]["model"] == str(
        (collection / "model").resolve()
    )
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


def test_an_output_dir_that_holds_the_input_or_the_model_is_refused_before_any_work(collection, tmp_path, monkeypatch):
    """Before: `index M texts.jsonl -o .` replaced texts.jsonl."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "texts.jsonl").write_bytes((collection / "texts.jsonl").read_bytes())
    before = (tmp_path / "texts.jsonl").read_bytes()
    for output in (".", tmp_path, collection / "model"):
        result = invoke("index", collection / "model", "texts.jsonl", "-o", output)
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert "would replace the input" in result.output
    assert (tmp_path / "texts.jsonl").read_bytes() == before
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me", encoding="utf8")
    result = invoke("index", collection / "model", "texts.jsonl", "-o", "notes")
    assert result.exit_code == 1 and "not a vector store (it holds todo.txt)" in result.output, result.output


def test_index_with_approximate_candidates_and_search_it(collection, tmp_path):
    pytest.importorskip("faiss")
    args = ["index", collection / "model", collection / "texts.jsonl", "-o", tmp_path / "idx", "--candidates", "hnsw"]
    result = invoke(*args)
    assert result.exit_code == 0 and "(hnsw candidates)" in result.output, result.output
    assert (tmp_path / "idx" / "candidates-hnsw.faiss").exists()
    result = invoke("search", tmp_path / "idx", TEXTS[0], "-k", 1)
    assert result.exit_code == 0 and f"1.0000  q0  {TEXTS[0]}" in result.output, result.output
    result = invoke(*args[:-1], "faiss")
    assert result.exit_code == 1 and "candidates must be one of auto, flat, ivf, hnsw" in result.output
