"""`python -m spacy_siamese explain`."""

import json

import pytest

from ..test_explain import _trained
from .conftest import invoke


@pytest.fixture(scope="module")
def tweak_nlp():
    return _trained("tweak")


def test_explain_cli(tweak_nlp, tmp_path):
    tweak_nlp.to_disk(tmp_path / "model")
    out = tmp_path / "explain.json"
    result = invoke("explain", tmp_path / "model", "How do I learn Python?", "learn python", "--output-json", out)
    assert result.exit_code == 0, result.output
    assert "log_df" in result.output and "python" in result.output
    data = json.loads(out.read_text())
    assert data["kind"] == "tweak" and data["pair"]["terms"][0]["term"] in ("python", "learn")
    result = invoke("explain", tmp_path / "model", "only one text")
    assert result.exit_code == 1
