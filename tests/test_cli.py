"""The package as a spaCy user meets it: entry points, configs, `spacy train`."""
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from .conftest import PAIRS

CONFIGS = sorted((Path(__file__).parent.parent / "configs").glob("*.cfg"))
NO_STATIC = "--components.siamese_similarity.model.encoder.include_static_vectors=false"


def run(*args, cwd=None):
    result = subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd)
    return result


@pytest.fixture
def pair_files(tmp_path):
    train = tmp_path / "train.tsv"
    train.write_text(
        "label\tquestion1\tquestion2\tquora_id\n" + "".join(f"{y}\t{a}\t{b}\t\n" for a, b, y in PAIRS * 3),
        encoding="utf8",
    )
    dev = tmp_path / "dev.jsonl"
    dev.write_text(
        "".join(f'{{"text1": "{a}", "text2": "{b}", "label": {y}}}\n' for a, b, y in PAIRS), encoding="utf8"
    )
    return train, dev


def test_factory_needs_no_import():
    code = (
        "import spacy, sys\n"
        "assert 'spacy_siamese' not in sys.modules\n"
        "nlp = spacy.blank('en')\n"
        "nlp.add_pipe('siamese_similarity')\n"
        "print(type(nlp.get_pipe('siamese_similarity')).__name__)\n"
    )
    result = run("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "SiameseSimilarity"


@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_configs_pass_debug_config(config, pair_files):
    train, dev = pair_files
    result = run("-m", "spacy", "debug", "config", str(config), "--paths.train", str(train), "--paths.dev", str(dev))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Config is valid" in result.stdout


def test_spacy_train_on_pairs(pair_files, tmp_path):
    train, dev = pair_files
    out = tmp_path / "out"
    result = run(
        "-m", "spacy", "train", str(CONFIGS[0]), "--output", str(out),
        "--paths.train", str(train), "--paths.dev", str(dev), NO_STATIC,
        "--components.siamese_similarity.model.encoder.width=32",
        "--training.max_steps=30", "--training.eval_frequency=10",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SIM_ACC" in result.stdout and "SIM_AUC" in result.stdout
    nlp = spacy.load(out / "model-best")
    pipe = nlp.get_pipe("siamese_similarity")
    assert 0.0 <= pipe.threshold <= 1.0
    a, b = nlp("How do I learn Python fast?"), nlp("What is the quickest way to learn Python?")
    assert 0 < a.similarity(b) <= 1 and a.similarity(b) == b.similarity(a)


def test_spacy_train_reports_malformed_line(pair_files, tmp_path):
    train, dev = pair_files
    with train.open("a", encoding="utf8") as f:
        f.write("1\tonly one question\n")
    bad_line = len(train.read_text(encoding="utf8").splitlines())
    result = run(
        "-m", "spacy", "train", str(CONFIGS[0]), "--output", str(tmp_path / "out"),
        "--paths.train", str(train), "--paths.dev", str(dev), NO_STATIC, "--training.max_steps=5",
    )  # fmt: skip
    assert result.returncode != 0
    assert f"train.tsv:{bad_line}" in result.stdout + result.stderr


def test_spacy_train_without_paths_says_so(tmp_path):
    result = run("-m", "spacy", "train", str(CONFIGS[0]), "--output", str(tmp_path / "out"), NO_STATIC)
    assert result.returncode != 0
    assert "paths.train" in result.stdout + result.stderr
