"""The `graded-distilled` workflow on the tiny mirror, once for each value of var graded (sts, then
sick in the same project): a CoSENT teacher fine-tuned from a tiny BERT built in the test (a real
run starts from all-MiniLM-L6-v2), its silver pairs (each training text's nearest, less gold
pairs), the base distilled by model2vec into the student's starting table, the student trained on
gold + silver, evaluated beside the teacher and the base, and
packaged with its model card; the student then loads and scores in a process without torch."""

import json
import os

import pytest
import spacy
import srsly

from spacy_siamese.teacher.train import native_bf16

from ..tiny_transformer import build_tiny_bert, require_teacher
from .conftest import TINY, Project, assert_model_card, scores_without_torch

pytestmark = pytest.mark.slow
SETTINGS = {
    **TINY,
    "graded_teacher_epochs": 1,
    "graded_silver_top_k": 2,
    "graded_distilled_eval_frequency": 2,
    "bootstrap": 20,
}
# Each dataset with its own settings: bf16 on (the default) for sts, off for sick.
RUNS = {
    "sts": {"graded_max_steps": 4},
    "sick": {"graded": "sick", "graded_max_steps": 3, "graded_teacher_bf16": ""},
}
SOURCES = {"sts": "STS Benchmark", "sick": "SICK"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    require_teacher()
    tmp = tmp_path_factory.mktemp("graded")
    project = Project(tmp)
    texts = [
        text
        for name in ("sts-train.csv", "sts-dev.csv", "SICK_train.txt", "SICK_trial.txt")
        for row in (project.mirror / "sts" / name).read_text(encoding="utf8").splitlines()
        for text in row.split("\t")
    ]
    base = build_tiny_bert(tmp / "base", texts)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for settings in RUNS.values():
        result = project("graded-distilled", env=env, graded_teacher_base=str(base), **SETTINGS, **settings)
        assert result.returncode == 0, result.output[-6000:]
    return project, base


def gold_pairs(project, graded):
    return list(srsly.read_jsonl(project.dir / f"corpus/{graded}/train.jsonl"))


@pytest.mark.parametrize("graded", RUNS)
def test_the_teacher_is_a_cosent_bi_encoder_on_the_gold_pairs(run, graded):
    project, _ = run
    st = require_teacher()
    teacher = project.dir / f"training/{graded}_teacher"
    info = json.loads((teacher / "spacy_siamese_teacher.json").read_text())
    assert info["kind"] == "cosent" and info["epochs"] == 1
    assert info["n_pairs"] == len(gold_pairs(project, graded))
    assert info["bf16"] is (graded == "sts" and native_bf16(info["device"]))  # float32 on a CPU without bfloat16
    assert st.SentenceTransformer(str(teacher)).encode(["a sentence"]).shape[0] == 1


@pytest.mark.parametrize("graded", RUNS)
def test_silver_pairs_are_each_texts_nearest_less_gold_pairs(run, graded):
    project, _ = run
    gold = gold_pairs(project, graded)
    corpus = project.dir / f"corpus/{graded}_distilled"
    assert list(srsly.read_jsonl(corpus / "gold.jsonl")) == gold
    silver = list(srsly.read_jsonl(corpus / "silver.jsonl"))
    texts = {t for r in gold for t in (r["text1"], r["text2"])}
    keys = [frozenset((r["text1"], r["text2"])) for r in silver]
    assert silver and len(silver) <= 2 * len(texts)  # top-k 2
    assert all(len(key) == 2 and key <= texts for key in keys)  # no self pairs, training texts only
    assert not set(keys) & {frozenset((r["text1"], r["text2"])) for r in gold}
    assert len(set(keys)) == len(keys) and all(0.0 <= r["label"] <= 1.0 for r in silver)


@pytest.mark.parametrize("graded", RUNS)
def test_the_student_trains_on_gold_and_silver_pairs(run, graded):
    project, _ = run
    config = spacy.load(project.dir / f"training/{graded}_distilled/model-best").config.interpolate()
    assert set(config["corpora"]["train"]["datasets"]) == {"gold", "silver"}
    assert config["training"]["max_steps"] == RUNS[graded]["graded_max_steps"]
    assert config["paths"]["dev"] == f"corpus/{graded}/dev.jsonl"
    # a static encoder started from the base model's model2vec distillation
    encoder = config["components"]["siamese_similarity"]["model"]["encoder"]
    assert encoder["@architectures"] == "spacy-siamese.StaticEncoder.v2"
    assert encoder["table"] == f"training/{graded}_table"
    assert (project.dir / f"training/{graded}_table/model.safetensors").is_file()


@pytest.mark.parametrize("graded", RUNS)
def test_the_student_is_evaluated_beside_its_teacher_and_the_base(run, graded):
    project, base = run
    report = json.loads((project.dir / f"metrics/{graded}_distilled.json").read_text())
    names = {entry["name"] for entry in report["teachers"].values()}
    assert names == {f"training/{graded}_teacher", f"{base.parent.name}/base"}  # directories by their last two parts
    assert set(report["teachers"]) <= set(report["results"])
    assert report["n_pairs"] == len(list(srsly.read_jsonl(project.dir / f"corpus/{graded}/dev.jsonl")))
    assert all("spearman" in figures for figures in report["results"].values())


@pytest.mark.parametrize("graded", RUNS)
def test_each_student_is_packaged_with_its_model_card(run, graded):
    project, _ = run
    meta = assert_model_card(project.dir / f"packages/en_siamese_{graded}_distilled-0.1.0")
    assert meta["name"] == f"siamese_{graded}_distilled"
    assert isinstance(meta["performance"][f"{graded}_distilled/spearman"], float)
    names = [source["name"] for source in meta["sources"] if "license" in source]
    assert names[0] == SOURCES[graded] and names[1].startswith("silver pairs labelled by a teacher")


@pytest.mark.parametrize("graded", RUNS)
def test_the_student_loads_and_scores_without_torch(run, graded):
    project, _ = run
    score = scores_without_torch(project.dir / f"training/{graded}_distilled/model-best")
    assert 0.0 <= score <= 1.0
