"""Files and helpers of the command line tests: pair files for the evaluation commands, a
collection for the search commands."""

import json

import pytest
import spacy
import srsly
from typer.testing import CliRunner

from spacy_siamese.cli import app
from spacy_siamese.corpora import DocRecord, write_documents

from ..conftest import PAIRS, train
from ..search.conftest import CORPUS, build_nlp

runner = CliRunner()
TEXTS = [t for t in CORPUS if t]
# Collection inputs the collection commands (index, dedupe) reject, and their messages.
INPUT_ERRORS = [
    ("bad.jsonl", "bad.jsonl:2: no 'text' field"),
    ("broken.jsonl", "broken.jsonl:2: not a JSON object"),
    ("latin1.txt", "latin1.txt:2: invalid UTF-8 (byte 0xe9 at column 4)"),
    ("empty.txt", "No texts in"),
    ("missing.txt", "File not found"),
]


def invoke(*args):
    return runner.invoke(app, [str(arg) for arg in args])


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf8").splitlines()]


@pytest.fixture(scope="session")
def files(tmp_path_factory, nlp):
    """Pair files, a document collection, the trained test model and a blank pipeline."""
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


@pytest.fixture(scope="session")
def search_models():
    """The Cauchy and cosine models of tests/search (same seed and steps)."""
    return {name: train(build_nlp(name), n_iter=15)[0] for name in ("cauchy", "cosine")}


@pytest.fixture(scope="session")
def collection(tmp_path_factory, search_models):
    """A collection as text and JSONL (ids q0, q1, ...), broken inputs, the Cauchy model."""
    root = tmp_path_factory.mktemp("search_cli")
    search_models["cauchy"].to_disk(root / "model")
    spacy.blank("en").to_disk(root / "blank")
    (root / "texts.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf8")
    srsly.write_jsonl(root / "texts.jsonl", [{"id": f"q{i}", "text": t} for i, t in enumerate(TEXTS)])
    (root / "empty.txt").write_text("\n\n", encoding="utf8")
    (root / "bad.jsonl").write_text('{"text": "a"}\n{"body": "b"}\n', encoding="utf8")
    (root / "broken.jsonl").write_text('{"text": "a"}\n{"text": \n', encoding="utf8")
    (root / "latin1.txt").write_text("first\ncaf\u00e9 au lait\n", encoding="latin-1")
    return root
