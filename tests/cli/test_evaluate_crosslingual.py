"""`python -m spacy_siamese evaluate-crosslingual`."""

import json

import pytest

from spacy_siamese.corpora.parallel import ParallelPair, write_parallel_jsonl
from spacy_siamese.evaluation.crosslingual import CL_LSI, JOINT_TFIDF, OPCA, WORD_TFIDF
from spacy_siamese.evaluation.pair_evaluation import MODEL

from ..architectures.test_crosslingual import PAIRS, _train
from .conftest import invoke


@pytest.fixture(scope="module")
def xling(tmp_path_factory):
    root = tmp_path_factory.mktemp("xling")
    _train(n_iter=10).to_disk(root / "model")
    train = [ParallelPair(a, b, i, "tatoeba", "sentences") for i, (a, b) in enumerate(PAIRS, 1)]
    dev = train[:4] + [p._replace(group="documents") for p in train[4:]]
    write_parallel_jsonl(train, root / "train.jsonl", ("en", "es"))
    write_parallel_jsonl(dev, root / "dev.jsonl", ("en", "es"))
    return root


def test_evaluate_crosslingual(xling, tmp_path):
    result = invoke(
        "evaluate-crosslingual", xling / "model", xling / "dev.jsonl", "--train", xling / "train.jsonl",
        "--name", "tiny", "--output-json", tmp_path / "x.json", "--output-md", tmp_path / "x.md",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "x.json").read_text(encoding="utf8"))
    assert set(report["groups"]) == {"sentences", "documents"} and report["groups"]["sentences"]["n"] == 4
    methods = report["groups"]["documents"]["results"]
    assert set(methods) == {MODEL, WORD_TFIDF, JOINT_TFIDF, CL_LSI, OPCA}
    assert all(0.0 <= m["acc@1"] <= 1.0 and 0.0 < m["mrr"] <= 1.0 for m in methods.values())
    assert "## sentences (4 pairs)" in result.output and "acc@1 es->en" in (tmp_path / "x.md").read_text()


def test_evaluate_crosslingual_model_only_and_errors(xling):
    result = invoke(
        "evaluate-crosslingual", xling / "model", xling / "dev.jsonl", "--group", "documents", "--langs", "en,es"
    )
    assert result.exit_code == 0, result.output
    assert "## documents (4 pairs)" in result.output and "sentences" not in result.output
    result = invoke("evaluate-crosslingual", xling / "model", xling / "dev.jsonl", "--langs", "en,fr")
    assert result.exit_code == 1 and "dev.jsonl:1: missing key 'fr'" in result.output
    result = invoke("evaluate-crosslingual", xling / "model", xling / "dev.jsonl", "--group", "news")
    assert result.exit_code == 1 and "no pair of group(s) news" in result.output


# Issue 75, defect 6: degenerate input was scored (1.000 for one language twice, exit 0 for an empty
# dev file, 0.000 for repeated pairs, a row with both kinds of fields read as a translation).


def test_evaluate_crosslingual_refuses_degenerate_input(xling, tmp_path):
    result = invoke("evaluate-crosslingual", xling / "model", xling / "dev.jsonl", "--langs", "en,en")
    assert result.exit_code == 1 and "two different language keys" in result.output
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf8")
    result = invoke("evaluate-crosslingual", xling / "model", empty)
    assert result.exit_code == 1 and f"no pairs found in {empty}" in result.output
    both = tmp_path / "both.jsonl"
    both.write_text('{"en": "a", "es": "b"}\n{"en": "c", "es": "d", "text1": "c", "text2": "d", "label": 1}\n')
    result = invoke("evaluate-crosslingual", xling / "model", both)
    assert result.exit_code == 1 and "both.jsonl:2: ambiguous row" in result.output and "'text1'" in result.output


def test_evaluate_crosslingual_repeated_pairs_score_as_once(xling, tmp_path):
    dev = [ParallelPair(a, b, i, "tatoeba", "sentences") for i, (a, b) in enumerate(PAIRS, 1)]
    reports = []
    for name, pairs in (("once", dev), ("twice", dev + dev)):
        write_parallel_jsonl(pairs, tmp_path / f"{name}.jsonl", ("en", "es"))
        args = ["--train", xling / "train.jsonl", "--no-opca", "--output-json", tmp_path / f"{name}.json"]
        result = invoke("evaluate-crosslingual", xling / "model", tmp_path / f"{name}.jsonl", *args)
        assert result.exit_code == 0, result.output
        reports.append(json.loads((tmp_path / f"{name}.json").read_text(encoding="utf8")))
    once, twice = (r["groups"]["sentences"]["results"] for r in reports)
    assert once[MODEL]["acc@1"] > 0.0
    assert {m: r["acc@1"] for m, r in twice.items()} == {m: r["acc@1"] for m, r in once.items()}
