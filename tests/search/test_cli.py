"""`python -m spacy_siamese index | search | dedupe`."""

import json

import pytest
import spacy
import srsly
from typer.testing import CliRunner

from spacy_siamese import SimilarityIndex, cluster_duplicates, find_duplicates
from spacy_siamese.cli import app

from .conftest import CORPUS

runner = CliRunner()
TEXTS = [t for t in CORPUS if t]


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]


def invoke(*args):
    return runner.invoke(app, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory, models):
    root = tmp_path_factory.mktemp("search_cli")
    models["cauchy"].to_disk(root / "model")
    spacy.blank("en").to_disk(root / "blank")
    (root / "texts.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf8")
    srsly.write_jsonl(root / "texts.jsonl", [{"id": f"q{i}", "text": t} for i, t in enumerate(TEXTS)])
    (root / "empty.txt").write_text("\n\n", encoding="utf8")
    (root / "bad.jsonl").write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf8")
    (root / "broken.jsonl").write_text('{"text": "a"}\n{"text": \n', encoding="utf8")
    return root


def test_index_and_search(files, tmp_path):
    result = invoke("index", files / "model", files / "texts.jsonl", "--output", tmp_path / "idx")
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
    nlp = spacy.load(files / "model")
    expected = SimilarityIndex.build(nlp, TEXTS, progress=False).search(["Why is the sky blue?"], k=3)[0]
    assert [(int(h["id"][1:]), h["score"]) for h in hits[1]["hits"]] == expected
    assert "Query: Why is the sky blue?" in result.output


def test_search_with_other_model_fails(files, tmp_path, models):
    assert invoke("index", files / "model", files / "texts.txt", "-o", tmp_path / "idx").exit_code == 0
    models["cosine"].to_disk(tmp_path / "other")
    result = invoke("search", tmp_path / "idx", "a question", "--model", tmp_path / "other")
    assert result.exit_code == 1
    assert "was built by siamese_similarity model" in result.output


def test_dedupe_pairs_and_clusters(files, tmp_path):
    nlp = spacy.load(files / "model")
    out = tmp_path / "pairs.jsonl"
    result = invoke("dedupe", files / "model", files / "texts.jsonl", "--output", out, "--threshold", 0.6, "-k", 5)
    assert result.exit_code == 0, result.output
    rows = read_jsonl(out)
    expected = find_duplicates(nlp, TEXTS, threshold=0.6, k=5, progress=False)
    assert [(r["id1"], r["id2"], r["score"]) for r in rows] == [(f"q{i}", f"q{j}", s) for i, j, s in expected]
    assert rows[0]["text1"] == TEXTS[int(rows[0]["id1"][1:])]
    out = tmp_path / "groups.jsonl"
    result = invoke("dedupe", files / "model", files / "texts.txt", "-o", out, "-t", 0.6, "--clusters")
    assert result.exit_code == 0, result.output
    groups = read_jsonl(out)
    expected_groups = cluster_duplicates(nlp, TEXTS, threshold=0.6, progress=False)
    assert [[m["id"] - 1 for m in g["members"]] for g in groups] == expected_groups  # ids are line numbers


def test_dedupe_faiss_backend(files, tmp_path):
    pytest.importorskip("faiss")
    out = tmp_path / "pairs.jsonl"
    result = invoke("dedupe", files / "model", files / "texts.txt", "-o", out, "--backend", "faiss", "-t", 0.9)
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "input,message",
    [
        ("bad.jsonl", "bad.jsonl:2: no 'text' field"),
        ("broken.jsonl", "broken.jsonl:2: not a JSON object"),
        ("empty.txt", "No texts in"),
        ("missing.txt", "File not found"),
    ],
)
def test_input_errors(files, tmp_path, input, message):
    for command in (
        ["dedupe", files / "model", files / input, "-o", tmp_path / "o.jsonl"],
        ["index", files / "model", files / input, "-o", tmp_path / "idx"],
    ):
        result = invoke(*command)
        assert result.exit_code == 1
        assert message in result.output
        assert "Traceback" not in result.output


def test_model_without_pipe(files, tmp_path):
    for command in (
        ["dedupe", files / "blank", files / "texts.txt", "-o", tmp_path / "o.jsonl"],
        ["index", files / "blank", files / "texts.txt", "-o", tmp_path / "idx"],
    ):
        result = invoke(*command)
        assert result.exit_code == 1
        assert "no 'siamese_similarity' component" in result.output


def test_search_without_index(tmp_path):
    result = invoke("search", tmp_path, "query")
    assert result.exit_code == 1
    assert "not a saved SimilarityIndex" in result.output
