"""The package as a spaCy user meets it: entry points and `spacy train` errors."""

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import PAIRS

CONFIG = Path(__file__).parent.parent / "project" / "configs" / "quora_cauchy.cfg"
NO_STATIC = "--components.siamese_similarity.model.encoder.include_static_vectors=false"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True)


@pytest.fixture
def pair_files(tmp_path):
    train = tmp_path / "train.tsv"
    rows = "".join(f"{y}\t{a}\t{b}\t\n" for a, b, y in PAIRS * 3)
    train.write_text("label\tquestion1\tquestion2\tquora_id\n" + rows, encoding="utf8")
    dev = tmp_path / "dev.jsonl"
    dev.write_text("".join(f'{{"text1": "{a}", "text2": "{b}", "label": {y}}}\n' for a, b, y in PAIRS), "utf8")
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


@pytest.mark.slow
def test_spacy_train_reports_malformed_line(pair_files, tmp_path):
    train, dev = pair_files
    with train.open("a", encoding="utf8") as file_:
        file_.write("1\tonly one question\n")
    bad_line = len(train.read_text(encoding="utf8").splitlines())
    result = run(
        "-m", "spacy", "train", str(CONFIG), "--output", str(tmp_path / "out"),
        "--paths.train", str(train), "--paths.dev", str(dev), NO_STATIC, "--training.max_steps=5",
    )  # fmt: skip
    assert result.returncode != 0
    assert f"train.tsv:{bad_line}" in result.stdout + result.stderr


@pytest.mark.slow
def test_spacy_train_without_paths_says_so(tmp_path):
    result = run("-m", "spacy", "train", str(CONFIG), "--output", str(tmp_path / "out"), NO_STATIC)
    assert result.returncode != 0
    assert "paths.train" in result.stdout + result.stderr
