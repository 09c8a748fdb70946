"""`python -m spacy_siamese encode`."""

import numpy
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
