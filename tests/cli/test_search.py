"""`python -m spacy_siamese search` on an index written by `index`."""

import json

import pytest
import spacy

from spacy_siamese import SimilarityIndex

from .conftest import TEXTS, invoke


def test_index_and_search(collection, tmp_path):
    result = invoke("index", collection / "model", collection / "texts.jsonl", "--output", tmp_path / "idx")
    assert result.exit_code == 0, result.output
    assert f"Indexed {len(TEXTS)} docs" in result.output
    result = invoke(
        "search",
        tmp_path / "idx",
        "How do I learn Python fast?",
        "Why is the sky blue?",
        "-k",
        3,
        "--output-json",
        tmp_path / "hits.json",
    )
    assert result.exit_code == 0, result.output
    hits = json.loads((tmp_path / "hits.json").read_text())["results"]
    assert [h["query"] for h in hits] == ["How do I learn Python fast?", "Why is the sky blue?"]
    assert hits[0]["hits"][0] == {"id": "q0", "score": pytest.approx(1.0), "text": TEXTS[0]}
    nlp = spacy.load(collection / "model")
    expected = SimilarityIndex.build(nlp, TEXTS, progress=False).search(["Why is the sky blue?"], k=3)[0]
    assert [(int(h["id"][1:]), h["score"]) for h in hits[1]["hits"]] == expected
    assert "Query: Why is the sky blue?" in result.output


def test_search_with_other_model_fails(collection, tmp_path, search_models):
    assert invoke("index", collection / "model", collection / "texts.txt", "-o", tmp_path / "idx").exit_code == 0
    search_models["cosine"].to_disk(tmp_path / "other")
    result = invoke("search", tmp_path / "idx", "a question", "--model", tmp_path / "other")
    assert result.exit_code == 1
    assert "was built by siamese_similarity model" in result.output


def test_search_without_index(tmp_path):
    result = invoke("search", tmp_path, "query")
    assert result.exit_code == 1
    assert "not a saved SimilarityIndex" in result.output


def test_ids_that_do_not_match_the_index_are_an_error(collection, tmp_path):
    """An ids.jsonl cut short (or from another index) would crash or label hits with wrong ids."""
    assert invoke("index", collection / "model", collection / "texts.jsonl", "-o", tmp_path / "idx").exit_code == 0
    ids = tmp_path / "idx" / "ids.jsonl"
    ids.write_text("".join(ids.read_text(encoding="utf8").splitlines(keepends=True)[:3]), encoding="utf8")
    result = invoke("search", tmp_path / "idx", "How do I learn Python fast?", "-k", 5)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"ids.jsonl has 3 ids for the {len(TEXTS)} items of the index" in result.output
