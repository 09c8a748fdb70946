"""`python -m spacy_siamese encode`."""

import numpy
import pytest
import spacy
import srsly

from .conftest import TEXTS, invoke


def test_encode_writes_the_docs_vectors_and_ids(collection, tmp_path):
    out = tmp_path / "v.npy"
    result = invoke("encode", collection / "model", collection / "texts.jsonl", "--output", out)
    assert result.exit_code == 0, result.output
    nlp = spacy.load(collection / "model")
    numpy.testing.assert_array_equal(numpy.load(out), numpy.vstack([nlp(t).vector for t in TEXTS]))
    assert srsly.read_json(tmp_path / "v.npy.ids.json") == [f"q{i}" for i in range(len(TEXTS))]


def test_encode_errors_are_messages(collection, tmp_path):
    result = invoke("encode", collection / "model", collection / "bad.jsonl", "--output", tmp_path / "v.npy")
    assert result.exit_code == 1 and "bad.jsonl:2" in result.output and "Traceback" not in result.output


def test_encode_without_progress_bar_writes_the_same_vectors(collection, tmp_path):
    result = invoke("encode", collection / "model", collection / "texts.txt", "-o", tmp_path / "v.npy", "--no-progress")
    assert result.exit_code == 0, result.output
    nlp = spacy.load(collection / "model")
    expected = nlp.get_pipe("siamese_similarity").encode(TEXTS)
    numpy.testing.assert_array_equal(numpy.load(tmp_path / "v.npy"), expected)


def test_encode_refuses_a_pipeline_it_cannot_encode_with(collection, tmp_path):
    untrained = spacy.blank("en")
    untrained.add_pipe("siamese_similarity")
    untrained.to_disk(tmp_path / "untrained")
    cases = [(tmp_path / "untrained", "saved before it was initialized"), (collection / "blank", "has no 'siamese")]
    for model, message in cases:
        result = invoke("encode", model, collection / "texts.txt", "--output", tmp_path / "v.npy")
        assert result.exit_code == 1 and message in result.output and "Traceback" not in result.output
        assert not (tmp_path / "v.npy").exists()


def test_encode_refuses_an_output_numpy_would_rename(collection, tmp_path):
    """numpy.save adds .npy to any other name: the vectors would not be where the message says."""
    for out in (tmp_path / "vectors", tmp_path):
        result = invoke("encode", collection / "model", collection / "texts.txt", "--output", out)
        assert result.exit_code == 1 and "must be a .npy file" in result.output, result.output
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("n_process", [0, -2])
def test_encode_refuses_a_number_of_processes_nlp_pipe_cannot_run(collection, tmp_path, n_process):
    result = invoke(
        "encode", collection / "model", collection / "texts.txt", "-o", tmp_path / "v.npy", "--n-process", n_process
    )
    assert result.exit_code == 2 and "Invalid value for '--n-process'" in result.output, result.output
    assert "n_process must be -1 (one process per CPU core) or at least 1" in " ".join(
        result.output.replace("│", "").split()
    )
