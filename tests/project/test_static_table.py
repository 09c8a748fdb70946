"""`scripts/static_table.py`: a model2vec distillation of a sentence-transformers model, written whole,
never over a directory of the user's."""

import subprocess
import sys

import pytest

from ..tiny_transformer import build_tiny_bert, require_model2vec
from .conftest import PROJECT

pytestmark = pytest.mark.slow
SCRIPT = PROJECT / "scripts" / "static_table.py"
TEXTS = ["the cat sat on the mat", "a dog barks", "the cat and the dog"]


def distil(base, output):
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(base), str(output), "--pca-dims", "8"], capture_output=True, text=True
    )


def test_distils_and_rewrites_only_its_own_output(tmp_path):
    model2vec = require_model2vec()
    base = build_tiny_bert(tmp_path / "base", TEXTS)
    result = distil(base, tmp_path / "table")
    assert result.returncode == 0, result.stderr
    static = model2vec.StaticModel.from_pretrained(tmp_path / "table", force_download=False)
    assert static.encode(["the cat"]).shape == (1, static.embedding.shape[1])
    assert distil(base, tmp_path / "table").returncode == 0  # its own output: replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    refused = distil(base, mine)
    assert refused.returncode == 1 and "is not a model2vec model directory" in refused.stderr
    assert (mine / "notes.txt").read_text() == "keep" and len(list(mine.iterdir())) == 1


def test_a_missing_base_is_named(tmp_path):
    require_model2vec()
    result = distil(tmp_path / "no-such-model", tmp_path / "table")
    assert result.returncode == 1 and "cannot distil" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "table").exists()
