"""`scripts/model_card.py` writes the meta.json that the package steps give `spacy package --meta`,
its figures read from the evaluation JSON; `scripts/check_package.py` refuses a package whose model
card is not filled."""

import json
import subprocess
import sys

import srsly

from ..conftest import PAIRS
from .conftest import PROJECT

SCRIPTS = PROJECT / "scripts"
MODEL = "siamese_similarity (trained)"


def card(tmp_path, nlp, *options):
    model = tmp_path / "model-best"
    nlp.to_disk(model)
    srsly.write_jsonl(tmp_path / "dev.jsonl", [{"text1": a, "text2": b, "label": y} for a, b, y in PAIRS])
    report = {
        "task": "pairs",
        "name": "quora",
        "results": {MODEL: {"acc": 0.81234567, "auc": 0.9, "threshold": 0.5}, "TF-IDF cosine": {"acc": 0.6}},
        "bootstrap": {MODEL: {"acc": [0.8, 0.82]}},
    }
    srsly.write_json(tmp_path / "quora.json", report)
    cmd = [sys.executable, str(SCRIPTS / "model_card.py"), str(model), str(tmp_path / "card.json")]
    cmd += ["--metrics", str(tmp_path / "quora.json"), "--dev", str(tmp_path / "dev.jsonl")]
    cmd += ["--description", "Scores questions.", "--limits", "English only.", *options]
    return subprocess.run(cmd, capture_output=True, text=True)


def test_the_card_has_the_evaluations_figures_the_thresholds_the_data_and_the_speed(tmp_path, nlp):
    result = card(tmp_path, nlp, "--data", "quora", "--data", "teacher")
    assert result.returncode == 0, result.stderr
    meta = json.loads((tmp_path / "card.json").read_text())
    performance = meta["performance"]
    assert performance["quora/acc"] == 0.8123 and performance["quora/auc"] == 0.9  # the pipeline's, not TF-IDF's
    assert not any("TF-IDF" in key or "bootstrap" in key for key in performance)
    assert performance["thresholds/threshold"] == nlp.get_pipe("siamese_similarity").threshold
    assert meta["description"] == "Scores questions. Known limits: English only."
    assert "Quora's non-commercial terms" in meta["license"] and "Apache 2.0" in meta["license"]
    assert [source["name"][:5] for source in meta["sources"] if "license" in source] == ["Quora", "pairs"]
    assert meta["speed"]["cpu"] > 0 and meta["speed"]["nwords"] > 0


def test_an_unknown_dataset_or_a_missing_evaluation_is_named(tmp_path, nlp):
    result = card(tmp_path, nlp, "--data", "imdb")
    assert result.returncode == 1 and "unknown dataset ['imdb']" in result.stderr
    (tmp_path / "quora.json").unlink()
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "model_card.py"), str(tmp_path / "model-best"), str(tmp_path / "card.json"),
         "--data", "quora", "--metrics", str(tmp_path / "quora.json"), "--dev", str(tmp_path / "dev.jsonl"),
         "--description", "x", "--limits", "y"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 1 and "quora.json" in result.stderr and not (tmp_path / "card.json").exists()


def test_a_package_without_a_filled_model_card_is_refused(tmp_path):
    package = tmp_path / "en_siamese_quora-0.1.0"
    package.mkdir()
    meta = {"lang": "en", "name": "siamese_quora", "requirements": ["spacy-siamese>=0.1.0"], "performance": {}}
    srsly.write_json(package / "meta.json", meta)
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "check_package.py"), str(package)], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert "meta.json has no description, sources, license, performance, speed" in result.stderr
