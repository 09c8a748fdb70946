"""Inputs of the displacy tests: a hand-built pair explanation, search hits and dedupe groups, and
a small TWEAK pipeline (which the explain module explains) with a saved index of a collection."""

import json

import pytest
import spacy
import srsly
from typer.testing import CliRunner

from spacy_siamese.cli import app

from ..search.conftest import CORPUS
from ..test_explain import _trained

TEXTS = [t for t in CORPUS if t]


def invoke_ok(*args):
    """Run a command of `python -m spacy_siamese`; it must succeed."""
    result = CliRunner().invoke(app, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    return result


def tokens(*rows):
    return [{"text": text, "ws": ws, "contribution": value} for text, ws, value in rows]


@pytest.fixture
def pair():
    """A pair explanation as `explain_pair(...).to_dict()` gives it, with a script in text A."""
    return {
        "method": "exact",
        "kind": "tweak",
        "score": 0.734512,
        "text_a": "learn <script>alert(1)</script> Python",
        "text_b": "Python & more",
        "tokens_a": tokens(("learn", " ", 0.2), ("<script>alert(1)</script>", " ", -0.1), ("Python", "", 0.4)),
        "tokens_b": tokens(("Python", " ", 0.4), ("&", " ", 0.0), ("more", "", -0.05)),
    }


@pytest.fixture
def hits():
    return {
        "query": "learn <b>Python</b>",
        "hits": [
            {"id": "q0", "text": "How do I learn Python fast?", "score": 0.91},
            {"id": 7, "text": "<i>tags</i> & entities", "score": 0.5},
        ],
    }


GROUPS = [
    {"group": 0, "size": 2, "members": [{"id": "a", "text": "Why is the sky blue?"}, {"id": "b", "text": "Sky: blue"}]},
    {
        "group": 1,
        "size": 3,
        "members": [
            {"id": "c", "text": "How do I learn Python fast?"},
            {"id": "d", "text": "Quickest way to learn Python?"},
            {"id": "e", "text": "<script>alert('x')</script>"},
        ],
    },
]


@pytest.fixture
def groups_file(tmp_path):
    path = tmp_path / "groups.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in GROUPS), encoding="utf8")
    return path


@pytest.fixture(scope="session")
def tweak_nlp():
    """A TWEAK pipeline with a cosine comparison, trained a few steps on the test pairs."""
    spacy.util.fix_random_seed(0)
    return _trained("tweak")


@pytest.fixture(scope="session")
def saved(tmp_path_factory, tweak_nlp):
    """The pipeline on disk, its index of TEXTS written by the `index` command (ids q0, q1, ...)."""
    root = tmp_path_factory.mktemp("displacy")
    tweak_nlp.to_disk(root / "model")
    srsly.write_jsonl(root / "texts.jsonl", [{"id": f"q{i}", "text": t} for i, t in enumerate(TEXTS)])
    invoke_ok("index", root / "model", root / "texts.jsonl", "--output", root / "index", "--no-progress")
    return root
