"""`scripts/check_model.py`: the package steps refuse a half-written pipeline."""

import subprocess
import sys

import pytest

from ..conftest import make_nlp, train
from .conftest import PROJECT

pytestmark = pytest.mark.slow
SCRIPT = PROJECT / "scripts" / "check_model.py"


@pytest.fixture
def model_dir(tmp_path):
    nlp, _ = train(make_nlp(), n_iter=5)
    nlp.to_disk(tmp_path / "model-best")
    return tmp_path / "model-best"


def check(path):
    return subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True)


def test_a_complete_pipeline_passes(model_dir):
    result = check(model_dir)
    assert result.returncode == 0, result.stderr
    assert "loads and scores" in result.stdout


def test_a_truncated_pipeline_is_not_packaged(model_dir):
    weights = model_dir / "siamese_similarity" / "model"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    result = check(model_dir)
    assert result.returncode == 1
    assert str(model_dir) in result.stderr
    assert "cannot be packaged" in result.stderr
