"""`python -m spacy_siamese convert`: pair files as canonical JSONL, and as .spacy files for spaCy's own tools."""

import json
import subprocess
import sys

import pytest
import spacy
from spacy.cli.evaluate import evaluate as spacy_evaluate

from spacy_siamese.corpora import read_pairs
from spacy_siamese.evaluation.pair_evaluation import MODEL

from ..conftest import PAIRS
from .conftest import invoke


@pytest.fixture(scope="module")
def converted(files):
    result = invoke("convert", files / "dev.jsonl", files / "dev.spacy")
    assert result.exit_code == 0, result.output
    assert "Wrote 10 pairs" in result.output
    return files / "dev.spacy"


def test_spacy_evaluate_on_a_converted_file_matches_the_pipe(files, converted, tmp_path):
    invoke("evaluate", files / "model", files / "dev.jsonl", "--output-json", tmp_path / "m.json")
    ours = json.loads((tmp_path / "m.json").read_text(encoding="utf8"))["results"][MODEL]
    scores = spacy_evaluate(str(files / "model"), converted, per_component=True)["siamese_similarity"]
    for key in ("acc", "p", "r", "f", "auc", "ap", "threshold"):
        assert scores[f"sim_{key}"] == pytest.approx(ours[key], abs=1e-6)


@pytest.mark.slow
def test_spacy_evaluate_command_writes_the_pipe_scores(files, converted, tmp_path):
    command = [
        "-m",
        "spacy",
        "evaluate",
        files / "model",
        converted,
        "--output",
        tmp_path / "s.json",
    ]
    result = subprocess.run([sys.executable, *map(str, command)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    saved = json.loads((tmp_path / "s.json").read_text(encoding="utf8"))
    expected = spacy_evaluate(str(files / "model"), converted, per_component=True)["siamese_similarity"]
    assert {key: saved[key] for key in expected} == pytest.approx(expected)


def test_spacy_corpus_reader_reads_converted_pairs(files, converted, nlp):
    corpus = spacy.registry.resolve(
        {"corpus": {"@readers": "spacy.Corpus.v1", "path": str(converted), "gold_preproc": False}}
    )["corpus"]
    examples = list(corpus(nlp))
    pipe = nlp.get_pipe("siamese_similarity")
    scores, labels = pipe.pair_scores(examples)
    assert list(labels) == [y for _, _, y in PAIRS]
    assert [eg.predicted.text for eg in examples] == [a for a, _, _ in PAIRS]


def test_convert_writes_the_canonical_jsonl_pair_file(tmp_path):
    """Any format in, JSONL out: the pairs the reader gives for the raw file, group included."""
    raw = tmp_path / "pairs.tsv"
    raw.write_text("text1\ttext2\tlabel\nHow do I learn Python?\tBest way to learn Python?\t1\nA\tB\t0\n", "utf8")
    result = invoke("convert", raw, tmp_path / "out" / "train.jsonl")
    assert result.exit_code == 0 and "Wrote 2 pairs" in result.output, result.output
    lines = (tmp_path / "out" / "train.jsonl").read_text(encoding="utf8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"text1": "How do I learn Python?", "text2": "Best way to learn Python?", "label": 1.0},
        {"text1": "A", "text2": "B", "label": 0.0},
    ]
    assert [(r.text1, r.text2, r.label) for r in read_pairs(tmp_path / "out" / "train.jsonl")] == [
        (r.text1, r.text2, r.label) for r in read_pairs(raw)
    ]
    grouped = tmp_path / "grouped.jsonl"
    grouped.write_text(json.dumps({"text1": "a", "text2": "b", "label": 0.5, "group": "g"}) + "\n", "utf8")
    result = invoke("convert", grouped, tmp_path / "again.jsonl", "--limit", 1)
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "again.jsonl").read_text(encoding="utf8")) == json.loads(grouped.read_text("utf8"))


def test_convert_errors_and_model_tokenizer(files, tmp_path):
    result = invoke("convert", files / "dev.jsonl", tmp_path / "dev.json")
    assert result.exit_code == 1 and "must be a .jsonl or .spacy file" in result.output
    result = invoke("convert", files / "missing.tsv", tmp_path / "dev.spacy")
    assert result.exit_code == 1 and "File not found" in result.output
    result = invoke("convert", files / "dev.jsonl", tmp_path / "dev.spacy", "--model", files / "model", "--limit", 3)
    assert result.exit_code == 0 and "Wrote 3 pairs" in result.output


def test_convert_refuses_a_negative_limit(files, tmp_path):
    result = invoke("convert", files / "dev.jsonl", tmp_path / "dev.spacy", "--limit", -1)
    assert result.exit_code == 2 and "Invalid value for '--limit'" in result.output, result.output
    assert not (tmp_path / "dev.spacy").exists()


def test_convert_keeps_empty_texts_and_shows_the_warning(tmp_path):
    path = tmp_path / "pairs.jsonl"
    rows = [("a", "", 1), ("b", "c", 0), ("  ", "d", 0)]
    path.write_text("".join(json.dumps({"text1": a, "text2": b, "label": y}) + "\n" for a, b, y in rows), "utf8")
    result = invoke("convert", path, tmp_path / "pairs.spacy")
    assert result.exit_code == 0 and "Wrote 3 pairs" in result.output, result.output
    assert f"Warning: 2 of the 3 pair(s) read from {path} have an empty" in result.output
    assert "(line 1, 3)" in result.output


def test_convert_to_jsonl_gives_the_pairs_a_reader_gets_from_the_raw_file(tmp_path):
    """A raw file converted to the canonical JSON lines trains on the same pairs as the raw file
    read through the same parser (format = "auto"), groups included."""
    from spacy_siamese.corpora import PairCorpus, read_pairs
    from spacy_siamese.pair_examples import get_label, partner_text

    from ..corpora.test_sts import STS

    raw = tmp_path / "sts-train.csv"
    raw.write_text(STS, encoding="utf8")
    result = invoke("convert", raw, tmp_path / "sts" / "train.jsonl")
    assert result.exit_code == 0 and "Wrote 3 pairs" in result.output, result.output
    converted = list(read_pairs(tmp_path / "sts" / "train.jsonl", format="jsonl"))
    assert [r[:3] + (r.group,) for r in converted] == [r[:3] + (r.group,) for r in read_pairs(raw)]
    nlp = spacy.blank("en")

    def pairs(corpus):
        return [(eg.predicted.text, partner_text(eg), get_label(eg)) for eg in corpus(nlp)]

    assert pairs(PairCorpus(tmp_path / "sts" / "train.jsonl", format="jsonl")) == pairs(PairCorpus(raw))
    assert len(pairs(PairCorpus(raw))) == 3
