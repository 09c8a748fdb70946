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


def test_a_damaged_index_file_is_named_with_the_fix(collection, tmp_path):
    """An ids.jsonl cut short (or from another index) would crash or label hits with wrong ids."""
    assert invoke("index", collection / "model", collection / "texts.jsonl", "-o", tmp_path / "idx").exit_code == 0
    ids = tmp_path / "idx" / "ids.jsonl"
    ids.write_text("".join(ids.read_text(encoding="utf8").splitlines(keepends=True)[:3]), encoding="utf8")
    result = invoke("search", tmp_path / "idx", "How do I learn Python fast?", "-k", 5)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert f"{ids} is damaged or missing" in result.output and "build the index again" in result.output


def test_an_empty_learned_npy_is_named_with_the_fix(collection, tmp_path):
    """Before: a bare "Aborted." (numpy's EOFError on an empty file)."""
    assert invoke("index", collection / "model", collection / "texts.jsonl", "-o", tmp_path / "idx").exit_code == 0
    learned = tmp_path / "idx" / "learned.npy"
    learned.write_bytes(b"")
    result = invoke("search", tmp_path / "idx", "How do I learn Python fast?")
    assert result.exit_code == 1 and "Aborted" not in result.output and "Traceback" not in result.output, result.output
    assert f"{learned} is damaged or missing" in result.output and "build the index again" in result.output


def test_an_index_of_the_old_format_is_named(collection, tmp_path):
    (tmp_path / "idx").mkdir()
    (tmp_path / "idx" / "index.json").write_text('{"format": "spacy_siamese.index.v1"}', encoding="utf8")
    result = invoke("search", tmp_path / "idx", "How do I learn Python fast?")
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "is an index of an earlier version (spacy_siamese.index.v1, with index.json)" in result.output


def test_k_is_at_least_one_and_clamped_to_the_index(collection, tmp_path):
    """Before: -k 0 exited 0 with no hits; -k 1000000000 allocated queries x k (an OOM kill)."""
    assert invoke("index", collection / "model", collection / "texts.jsonl", "-o", tmp_path / "idx").exit_code == 0
    result = invoke("search", tmp_path / "idx", "a question", "-k", 0)
    assert result.exit_code == 2 and "Invalid value for '--top-k' / '-k'" in result.output, result.output
    result = invoke("search", tmp_path / "idx", "a question", "-k", 10**9, "--output-json", tmp_path / "hits.json")
    assert result.exit_code == 0, result.output
    assert len(json.loads((tmp_path / "hits.json").read_text())["results"][0]["hits"]) == len(TEXTS)


def test_an_empty_query_has_no_hits(collection, tmp_path):
    """Before: `search IDX ""` printed three arbitrary hits, where the page returns none."""
    assert invoke("index", collection / "model", collection / "texts.jsonl", "-o", tmp_path / "idx").exit_code == 0
    result = invoke("search", tmp_path / "idx", "", " ", "--output-json", tmp_path / "hits.json")
    assert result.exit_code == 0, result.output
    assert [r["hits"] for r in json.loads((tmp_path / "hits.json").read_text())["results"]] == [[], []]


def test_the_output_json_is_not_a_file_of_the_index(collection, tmp_path):
    assert invoke("index", collection / "model", collection / "texts.jsonl", "-o", tmp_path / "idx").exit_code == 0
    result = invoke("search", tmp_path / "idx", "a question", "--output-json", tmp_path / "idx" / "texts.jsonl.gz")
    assert result.exit_code == 1 and "is also an input" in result.output, result.output
    assert invoke("search", tmp_path / "idx", "a question").exit_code == 0


def test_a_dedupe_work_dir_is_searched_with_its_model(collection, tmp_path):
    out = tmp_path / "pairs.jsonl"
    args = ["dedupe", collection / "model", collection / "texts.jsonl", "-o", out, "-t", 0.9, "--keep-work-dir"]
    assert invoke(*args).exit_code == 0
    result = invoke("search", tmp_path / "pairs.jsonl.work", TEXTS[3], "-k", 1, "--model", collection / "model")
    assert result.exit_code == 0 and "1.0000  3" in result.output, result.output
