"""benchmarks/encoder_front.py: variants are trained once (a rerun with the same settings only
times them), the overrides reach `spacy train`, unknown variants are refused, the plot is drawn."""

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from . import load_benchmark

front = load_benchmark("encoder_front")
SETTINGS = {"paths.train": "train.jsonl", "training.max_steps": "10"}


def test_slug_names_a_directory():
    assert front.slug("width 128, depth 2 (the config)") == "width-128-depth-2-the-config"
    assert len({front.slug(name) for name in front.VARIANTS}) == len(front.VARIANTS)


def test_a_variant_trains_with_its_overrides_then_is_reused(tmp_path, monkeypatch):
    calls = []

    def fake_run(args, check):
        calls.append(args)
        best = Path(args[args.index("--output") + 1]) / "model-best"
        best.mkdir(parents=True)
        (best / "meta.json").write_text("{}")

    monkeypatch.setattr(front.subprocess, "run", fake_run)
    overrides = front.VARIANTS["width 64"]
    out = tmp_path / "w64"
    best = front.train_variant("width 64", overrides, config=front.CONFIG, output=out, settings=SETTINGS)
    assert best == out / "model-best" and len(calls) == 1
    args = calls[0]
    assert args[args.index(f"--{front.MWE}.width") + 1] == "64"
    assert args[args.index("--training.max_steps") + 1] == "10"
    front.train_variant("width 64", overrides, config=front.CONFIG, output=out, settings=SETTINGS)
    assert len(calls) == 1  # same settings: reused
    stamp = json.loads((out / "front.json").read_text())
    assert stamp["overrides"] == overrides and stamp["settings"] == SETTINGS


def test_other_settings_train_again(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(front.subprocess, "run", lambda args, check: calls.append(args))
    out = tmp_path / "v"
    (out / "model-best").mkdir(parents=True)
    (out / "model-best" / "meta.json").write_text("{}")
    (out / "front.json").write_text(json.dumps({"config": "x.cfg", "overrides": {}, "settings": {}}))
    front.train_variant("depth 4", front.VARIANTS["depth 4"], config=front.CONFIG, output=out, settings=SETTINGS)
    assert len(calls) == 1


def test_an_unknown_variant_is_refused(tmp_path):
    app = typer.Typer()
    app.command()(front.main)
    data = tmp_path / "pairs.jsonl"
    data.write_text('{"text1": "a", "text2": "b", "label": 1}\n')
    result = CliRunner().invoke(
        app,
        ["--train", str(data), "--dev", str(data), "--vectors", str(tmp_path), "--output-dir", str(tmp_path),
         "--variant", "width 1000", "--output-json", str(tmp_path / "r.json")],
    )  # fmt: skip
    assert result.exit_code != 0 and "unknown variant" in result.output


def test_draw_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    results = [
        {"variant": "a", "share_of_tokenizer": 0.04, "dev": {"sim_auc": 0.8}},
        {"variant": "b", "share_of_tokenizer": 0.08, "dev": {"sim_auc": 0.7}},
    ]
    front.draw(results, tmp_path / "front.png", title="t", budget=0.05)
    assert (tmp_path / "front.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("name", list(front.VARIANTS))
def test_every_variant_builds_its_encoder(name):
    """The overrides are what `spacy train` parses from its command line: the changed encoder builds."""
    from spacy.cli._util import parse_config_overrides
    from spacy.util import load_config, registry

    args = [arg for key, value in front.VARIANTS[name].items() for arg in (f"--{key}", value)]
    config = load_config(front.CONFIG, overrides=parse_config_overrides(args), interpolate=True)
    section = config["components"]["siamese_similarity"]["model"]["encoder"]["encoder"]
    for key, value in front.VARIANTS[name].items():  # a setting, or the whole encoder section
        target = config
        for part in key.split("."):
            target = target[part]
        assert target == json.loads(value)
    encoder = registry.resolve({"encoder": section})["encoder"]
    width = section["width"] if "width" in section else section["tok2vec"]["encode"]["width"]
    assert encoder.get_dim("nO") == (section["proj_width"] or 2 * width)
