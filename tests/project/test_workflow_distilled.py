"""The `quora-distilled` workflow on the tiny mirror: a teacher fine-tuned from a tiny BERT built
in the test (a real run starts from all-MiniLM-L6-v2), its silver pairs, the base distilled by
model2vec into the static student's starting table, the student trained on gold + silver pairs,
evaluated and packaged with its model card; the student then loads and scores in a process
without torch."""

import json
import os

import pytest
import spacy
import srsly

from ..tiny_transformer import build_tiny_bert, require_teacher
from .conftest import TINY, Project, assert_model_card, scores_without_torch

pytestmark = pytest.mark.slow
SETTINGS = {
    **TINY,
    "quora_teacher_pairs": 24,
    "quora_teacher_batch_size": 8,
    "quora_silver_pairs": 30,
    "quora_static_max_steps": 4,
    "bootstrap": 20,
    "package_build": "wheel",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    require_teacher()
    tmp = tmp_path_factory.mktemp("distilled")
    project = Project(tmp)
    texts = [text for row in (project.mirror / "quora/train.tsv").read_text().splitlines() for text in row.split("\t")]
    base = build_tiny_bert(tmp / "base", texts)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = project("quora-distilled", env=env, quora_teacher_base=str(base), **SETTINGS)
    assert result.returncode == 0, result.output[-6000:]
    return project, base


def test_the_teacher_is_a_cross_encoder(run):
    project, _ = run
    st = require_teacher()
    teacher = project.dir / "training/quora_teacher"
    assert json.loads((teacher / "spacy_siamese_teacher.json").read_text())["n_pairs"] == 24
    assert st.CrossEncoder(str(teacher)).predict([("a question", "another question")]).shape == (1,)


def test_silver_pairs_are_labelled_by_the_teacher(run):
    project, _ = run
    rows = list(srsly.read_jsonl(project.dir / "corpus/quora_silver/train.jsonl"))
    assert len(rows) == 30 and all(0.0 < r["label"] < 1.0 for r in rows)
    gold = {t for r in srsly.read_jsonl(project.dir / "corpus/quora/train.jsonl") for t in (r["text1"], r["text2"])}
    assert all(r["text1"] in gold and r["text2"] in gold for r in rows)
    assert list((project.dir / "corpus/quora_silver").glob("scores-*.npy"))  # the teacher's scores, cached


def test_the_static_student_trains_on_the_same_pairs(run):
    project, _ = run
    config = spacy.load(project.dir / "training/quora_static/model-best").config.interpolate()
    encoder = config["components"]["siamese_similarity"]["model"]["encoder"]
    assert encoder["@architectures"] == "spacy-siamese.StaticEncoder.v2"
    assert encoder["table"] == "training/quora_table"
    assert (project.dir / "training/quora_table/model.safetensors").is_file()
    assert set(config["corpora"]["train"]["datasets"]) == {"quora", "silver"}
    assert json.loads((project.dir / "metrics/quora_static.json").read_text())["n_pairs"] == 80


def test_the_static_student_is_packaged_with_its_model_card(run):
    project, _ = run
    meta = assert_model_card(project.dir / "packages/en_siamese_quora_static-0.1.0")
    assert {"quora_static/auc", "thresholds/threshold"} <= set(meta["performance"])
    assert any(key.startswith("quora_static_duplicates/") for key in meta["performance"])


def test_the_student_loads_and_scores_without_torch(run):
    project, _ = run
    assert 0.0 <= scores_without_torch(project.dir / "training/quora_static/model-best") <= 1.0
