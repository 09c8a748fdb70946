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
    assert "log_df" in result.output and "python" in result.output and "exact term contributions" in result.output
    data = json.loads(out.read_text())
    assert data["kind"] == "tweak" and data["pair"]["terms"][0]["term"] in ("python", "learn")
    assert [t["text"] for t in data["pair"]["tokens_b"]] == ["learn", "python"]
    result = invoke("explain", tmp_path / "model", "only one text")
    assert result.exit_code == 1


def test_explain_cli_any_encoder(nlp, tmp_path):
    """A CNN Cauchy pipe: Shapley values per token, summing to the score minus the reference."""
    nlp.to_disk(tmp_path / "model")
    out = tmp_path / "explain.json"
    a, b = "How do I learn Python fast?", "What is the quickest way to learn Python?"
    result = invoke("explain", tmp_path / "model", a, b, "--output-json", out, "--top", "3")
    assert result.exit_code == 0, result.output
    assert "Shapley values" in result.output and "Python[" in result.output
    pair = json.loads(out.read_text())["pair"]
    assert pair["score"] == pytest.approx(nlp(a).similarity(nlp(b)), abs=1e-6)
    verdict = nlp.get_pipe("siamese_similarity").verdict(nlp(a), nlp(b))
    assert (pair["threshold"], pair["duplicate"]) == (verdict.threshold, verdict.duplicate)
    shown = "duplicate" if verdict.duplicate else "not a duplicate"
    assert f"threshold = {verdict.threshold:.4f}: {shown}" in result.output
    for side in "ab":
        total = sum(t["contribution"] for t in pair[f"tokens_{side}"])
        assert total == pytest.approx(pair["score"] - pair[f"reference_{side}"], abs=1e-6)
    result = invoke("explain", tmp_path / "model", a, b, "--method", "exact")
    assert result.exit_code == 1 and "method='shapley'" in result.output
    result = invoke("explain", tmp_path / "model")
    assert result.exit_code == 1 and "Give two texts" in result.output


def test_explain_refuses_a_negative_top(nlp, tmp_path):
    """--top -1 would show every token but the last."""
    nlp.to_disk(tmp_path / "model")
    result = invoke("explain", tmp_path / "model", "How do I learn Python fast?", "Learn Python", "--top", -1)
    assert result.exit_code == 2 and "Invalid value for '--top'" in result.output, result.output
