"""The command line: `python -m spacy_siamese evaluate | evaluate-retrieval | convert | report`."""

import json
import subprocess
import sys

import pytest
import spacy
from spacy.cli.evaluate import evaluate as spacy_evaluate
from typer.testing import CliRunner

from spacy_siamese.cli import app
from spacy_siamese.corpora import DocRecord, write_documents
from spacy_siamese.evaluation.pairs import MODEL, TFIDF

from .conftest import PAIRS

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(arg) for arg in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory, nlp):
    root = tmp_path_factory.mktemp("cli")
    nlp.to_disk(root / "model")
    spacy.blank("en").to_disk(root / "blank")
    (root / "dev.jsonl").write_text(
        "".join(json.dumps({"text1": a, "text2": b, "label": y}) + "\n" for a, b, y in PAIRS), encoding="utf8"
    )
    rows = "".join(f"{y}\t{a}\t{b}\n" for a, b, y in PAIRS)
    (root / "train.tsv").write_text("label\tquestion1\tquestion2\n" + rows, encoding="utf8")
    (root / "empty.jsonl").write_text("", encoding="utf8")
    (root / "bad.jsonl").write_text('{"text1": "a", "text2": "b", "label": 1}\n{"text1": "a"}\n', encoding="utf8")
    docs = [DocRecord(f"{t} {t}s about {t} number {i}", (t,), "", str(i)) for i in range(30) for t in ("cat", "car")]
    write_documents(docs, root / "documents.jsonl")
    return root


def test_module_help_lists_the_commands():
    result = subprocess.run([sys.executable, "-m", "spacy_siamese", "--help"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    for command in ("evaluate", "evaluate-retrieval", "convert", "report"):
        assert command in result.stdout


def test_evaluate_writes_json_markdown_and_plot(files, tmp_path):
    result = invoke(
        "evaluate", files / "model", files / "dev.jsonl", "--baselines", "--fit-texts", files / "train.tsv",
        "--name", "tiny", "--examples", 4, "--no-progress", "--output-json", tmp_path / "m.json",
        "--output-md", tmp_path / "m.md", "--plot", tmp_path / "m.png",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "### Pair similarity on tiny (10 pairs, 5 positive)" in result.output
    assert "Skipped the averaged word vectors baseline" in result.output  # the model has no vectors
    report = json.loads((tmp_path / "m.json").read_text(encoding="utf8"))
    assert report["task"] == "pairs" and report["name"] == "tiny" and list(report["results"]) == [MODEL, TFIDF]
    assert report["tfidf"]["fitted_on"].endswith(f"pairs of {files / 'train.tsv'}")
    assert report["files"]["fit_texts"] == str(files / "train.tsv") and len(report["examples"]) == 4
    assert "| method | acc | P | R | F1 | AUC | AP | threshold |" in (tmp_path / "m.md").read_text(encoding="utf8")
    assert (tmp_path / "m.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    "args,message",
    [
        (["{root}/model", "{root}/missing.jsonl"], "File not found"),
        (["{root}/missing_model", "{root}/dev.jsonl"], "Model not found"),
        (["{root}/blank", "{root}/dev.jsonl"], "no 'siamese_similarity' component"),
        (["{root}/model", "{root}/empty.jsonl"], "o pairs"),
        (["{root}/model", "{root}/bad.jsonl"], "bad.jsonl:2"),
        (["{root}/model", "{root}/dev.jsonl", "--baselines", "--vectors", "{root}/blank"], "no static word vectors"),
    ],
)
def test_evaluate_errors_are_messages(files, args, message):
    result = invoke("evaluate", *[a.format(root=files) for a in args])
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output


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


def test_convert_errors_and_model_tokenizer(files, tmp_path):
    result = invoke("convert", files / "dev.jsonl", tmp_path / "dev.json")
    assert result.exit_code == 1 and "must be a .spacy file" in result.output
    result = invoke("convert", files / "missing.tsv", tmp_path / "dev.spacy")
    assert result.exit_code == 1 and "File not found" in result.output
    result = invoke("convert", files / "dev.jsonl", tmp_path / "dev.spacy", "--model", files / "model", "--limit", 3)
    assert result.exit_code == 0 and "Wrote 3 pairs" in result.output


def test_evaluate_retrieval(files, tmp_path):
    result = invoke(
        "evaluate-retrieval", files / "model", files / "documents.jsonl", "--baselines", "--max-docs", 8,
        "--eval-pairs", 50, "--name", "docs", "--output-json", tmp_path / "r.json", "--output-md", tmp_path / "r.md",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "### Retrieval on docs: 8 held-out query documents (dev split)" in result.output
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf8"))
    assert report["task"] == "retrieval" and report["n_heldout_docs"] == 8 and len(report["results"]) == 3
    assert report["n_train_docs"] == 48  # the other 80% of the seeded split
    result = invoke("evaluate-retrieval", files / "model", files / "documents.jsonl", "--split", "test")
    assert result.exit_code == 1 and "no test part" in result.output


def test_report_summarises_saved_evaluations(files, tmp_path, monkeypatch):
    invoke("evaluate", files / "model", files / "dev.jsonl", "--name", "tiny", "--output-json", tmp_path / "tiny.json")
    invoke("evaluate-retrieval", files / "model", files / "documents.jsonl", "--output-json", tmp_path / "docs.json")
    (tmp_path / "other.json").write_text("[1, 2]", encoding="utf8")
    monkeypatch.chdir(tmp_path.parent)
    relative = f"{tmp_path.name}/*.json"  # as a project command passes it: unexpanded
    for args in ([tmp_path / "tiny.json", tmp_path / "docs.json"], [tmp_path], [f"{tmp_path}/*.json"], [relative]):
        result = invoke("report", *args, "--output-md", tmp_path / "README.md")
        assert result.exit_code == 0, result.output
        summary = (tmp_path / "README.md").read_text(encoding="utf8")
        assert "| tiny |" in summary and "| docs |" in summary and "## Document retrieval" in result.output
    result = invoke("report", tmp_path / "other.json")
    assert result.exit_code == 1 and "is not an evaluation" in result.output
    result = invoke("report", tmp_path / "nothing")
    assert result.exit_code == 1 and "No evaluation JSON files" in result.output
