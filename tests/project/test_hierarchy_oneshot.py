"""The `hierarchy` and `oneshot` workflows on a tiny 20 Newsgroups archive whose group names
form a tree: hierarchy-graded pairs -> two LSTM siamese models (exp(-L1), exp(-L2)) -> the
Table 1 MAE/MSE table with the sklearn baselines; seen/held-out split -> siamese model on the
seen groups -> few-shot accuracy table and plot beside the baselines."""

import io
import json
import random
import tarfile

import pytest

from .conftest import Project, assert_model_card, mirror_words, small_vectors_pipeline

pytestmark = pytest.mark.slow

GROUPS = {
    "comp.sys.ibm.pc.hardware": "motherboard bios ide controller jumper drive card slot",
    "comp.sys.mac.hardware": "mac apple powerbook quadra monitor simm nubus centris",
    "comp.graphics": "image render polygon bitmap jpeg gif pixel shading",
    "rec.sport.hockey": "goal puck nhl playoff goalie period ice penalty",
    "sci.space": "orbit shuttle launch rocket moon satellite nasa mission",
    "talk.politics.mideast": "israel arab peace treaty border minister land state",
}
HELD_OUT = "comp.graphics,sci.space"
TINY = {
    "hierarchy_n_pairs": 64,
    "hierarchy_dev_pairs": 16,
    "hierarchy_test_pairs": 32,
    "hierarchy_max_steps": 4,
    "hierarchy_eval_frequency": 2,
    "hierarchy_pca_width": 4,
    "hierarchy_lda_topics": 3,
    "oneshot_held_out": HELD_OUT,
    "oneshot_n_pairs": 100,
    "oneshot_max_epochs": 1,
    "oneshot_eval_frequency": 2,
    "oneshot_shots": "1,2",
    "oneshot_repeats": 2,
    "oneshot_max_test": 4,
    "s2net_width": 8,
    "package_build": "wheel",
}


def write_tree_archive(project: Project) -> None:
    """Replace the mirror's 20news archive by one of GROUPS x 16 two-sentence messages."""
    rng = random.Random(0)
    with tarfile.open(project.mirror / "documents" / "20news-bydate-train.tar.gz", "w:gz") as archive:
        for group, words in GROUPS.items():
            for i in range(16):
                sents = [" ".join(rng.choice(words.split()) for _ in range(8)).capitalize() + "." for _ in range(2)]
                data = f"From: x@example.com\nSubject: {group} {i}\n\n{' '.join(sents)}\n".encode("utf8")
                info = tarfile.TarInfo(f"20news-bydate-train/{group}/{2000 + i}")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    project.write_checksums()
    words = list(mirror_words(project.mirror)) + " ".join(GROUPS.values()).split()
    small_vectors_pipeline(words).to_disk(project.vectors)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    project = Project(tmp_path_factory.mktemp("graded"))
    write_tree_archive(project)
    return project


def test_hierarchy_workflow(project):
    result = project("hierarchy", **TINY)
    assert result.returncode == 0, result.output[-6000:]
    for norm in ("l1", "l2"):
        config = (project.dir / f"training/hierarchy_{norm}/model-best/config.cfg").read_text()
        assert "spacy-siamese.SentenceLSTMEncoder.v1" in config and f'norm = "{norm}"' in config
    report = json.loads((project.dir / "metrics/hierarchy.json").read_text())
    assert report["task"] == "hierarchy"
    # tree depth 3: comp.sys is the deepest shared node; four score values, balanced
    counts = report["score_counts"]["train"]
    assert set(counts) == {"0.125", "0.25", "0.5", "1.0"} and max(counts.values()) - min(counts.values()) <= 1
    names = set(report["results"])
    assert {"siamese SentenceLSTM + exp(-L1)", "siamese SentenceLSTM + exp(-L2)"} <= names
    for baseline in ("BoW + PCA (4) -> SVR", "BoW + PCA (4) -> MLP", "LDA (3 topics) -> SVR", "LDA (3 topics) -> MLP"):
        assert baseline in names
    for r in report["results"].values():
        for split in ("train", "test"):
            assert 0.0 <= r[split]["mae"] <= 1.0 and 0.0 <= r[split]["mse"] <= r[split]["mae"]
    table = (project.dir / "metrics/hierarchy.md").read_text()
    assert "| method | train MAE | train MSE | test MAE | test MSE | test Spearman |" in table


def test_oneshot_workflow(project):
    result = project("oneshot", **TINY)
    assert result.returncode == 0, result.output[-6000:]
    seen = (project.dir / "corpus/oneshot/seen.jsonl").read_text()
    assert "sci.space" not in seen and "comp.graphics" not in seen
    config = (project.dir / "training/oneshot/model-best/config.cfg").read_text()
    assert "corpus/oneshot/seen.jsonl" in config
    report = json.loads((project.dir / "metrics/oneshot.json").read_text())
    assert report["classes"] == sorted(HELD_OUT.split(",")) and report["repeats"] == 2
    assert len(report["accuracy"]) == 3  # the pipe and two baselines
    for per_k in report["accuracy"].values():
        assert set(per_k) == {"1", "2"} and all(0.0 <= v["mean"] <= 1.0 for v in per_k.values())
    assert (project.dir / "metrics/oneshot.png").stat().st_size > 0
    meta = assert_model_card(project.dir / "packages/en_siamese_oneshot-0.1.0")
    assert any(key.startswith("oneshot/") for key in meta["performance"]) and "20 Newsgroups" in meta["license"]
