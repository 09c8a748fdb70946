"""The package as a spaCy user meets it: entry points, `spacy train` errors, and the six-dataset
config trained on tiny data."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from .conftest import GRADED, PAIRS

CONFIG = Path(__file__).parent.parent / "configs" / "quora_cauchy.cfg"
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
        "--corpora.train.format=auto",  # the raw file through convert's parser, as an older config reads it
    )  # fmt: skip
    assert result.returncode != 0
    assert f"train.tsv:{bad_line}" in result.stdout + result.stderr


@pytest.mark.slow
def test_spacy_train_without_paths_says_so(tmp_path):
    result = run("-m", "spacy", "train", str(CONFIG), "--output", str(tmp_path / "out"), NO_STATIC)
    assert result.returncode != 0
    assert "paths.train" in result.stdout + result.stderr


GENERAL = CONFIG.parent / "general.cfg"
GENERAL_DATASETS = {
    "quora": PAIRS,
    "stackexchange": PAIRS[::-1],
    "sts": GRADED,
    "sick": GRADED[::-1],
    "mrpc": PAIRS[2:],
    "twitter_url": PAIRS[:8],
}


@pytest.mark.slow
def test_spacy_train_general_config_on_six_tiny_datasets(tmp_path):
    """configs/general.cfg as the `general` workflow runs it: six datasets, one a batch, a loss each,
    model-best chosen on the average of the dev splits' main metrics."""
    corpus = tmp_path / "corpus"
    for name, pairs in GENERAL_DATASETS.items():
        (corpus / name).mkdir(parents=True)
        rows = "".join(json.dumps({"text1": a, "text2": b, "label": y}) + "\n" for a, b, y in pairs)
        for part in ("train", "dev"):
            (corpus / name / f"{part}.jsonl").write_text(rows, encoding="utf8")
    settings = (
        "--paths.corpus", str(corpus),
        "--components.siamese_similarity.model.encoder.encoder.include_static_vectors=false",
        "--components.siamese_similarity.model.encoder.encoder.proj_width=32", "--vars.lexical_width=64",
        "--training.max_steps=12", "--training.eval_frequency=6", "--vars.train_limit=5",
    )  # fmt: skip
    result = run("-m", "spacy", "train", str(GENERAL), "--output", str(tmp_path / "out"), *settings)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "SIM_AVG" in result.stdout
    meta = json.loads((tmp_path / "out/model-best/meta.json").read_text(encoding="utf8"))
    scores = meta["performance"]
    for name in ("quora", "stackexchange", "mrpc", "twitter_url"):
        assert 0.0 <= scores[f"sim_{name}_auc"] <= 1.0
    for name in ("sts", "sick"):
        assert -1.0 <= scores[f"sim_{name}_spearman"] <= 1.0
    mains = [scores[f"sim_{n}_auc"] for n in ("quora", "stackexchange", "mrpc", "twitter_url")]
    mains += [scores[f"sim_{n}_spearman"] for n in ("sts", "sick")]
    assert scores["sim_avg"] == pytest.approx(sum(mains) / 6, abs=1e-6)
    nlp = spacy.load(tmp_path / "out/model-best")
    a, b = nlp("How do I learn Python fast?"), nlp("What is the quickest way to learn Python?")
    assert 0.0 <= a.similarity(b) <= 1.0 and a.similarity(b) == b.similarity(a)
    # --paths.init_weights: the next training starts from the trained weights (its step-0 evaluation, after
    # one update at learning rate 0, is theirs)
    start = ("--paths.init_weights", str(tmp_path / "out/model-best"), "--training.optimizer.learn_rate=0.0")
    again = run("-m", "spacy", "train", str(GENERAL), "--output", str(tmp_path / "again"), *settings, *start)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    first_row = next(line.split() for line in again.stdout.splitlines() if line.split()[:2] == ["0", "0"])
    assert float(first_row[3]) == pytest.approx(100 * scores["sim_avg"], abs=0.01)
