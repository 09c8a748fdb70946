"""The `crosslingual` workflow on tiny line-aligned en-es files: convert (dev split and
pseudo-documents), train cross-lingual S2Net, evaluate against TF-IDF, CL-LSI and OPCA, package."""

import json

import pytest
import spacy

from .conftest import Project, assert_model_card

pytestmark = pytest.mark.slow
WORDS = [
    ("cat", "gato"), ("dog", "perro"), ("house", "casa"), ("water", "agua"), ("book", "libro"),
    ("city", "ciudad"), ("bank", "banco"), ("president", "presidente"), ("market", "mercado"), ("school", "escuela"),
]  # fmt: skip


def _write_data(root):
    en, es, source = [], [], []
    for i in range(60):
        (a, b), (c, d) = WORDS[i % 10], WORDS[(i * 3 + 1) % 10]
        origin = "tatoeba-challenge" if i < 30 else ("newstest2011" if i < 45 else "newstest2012")
        en.append(f"The {a} and the {c} number {i}.")
        es.append(f"El {b} y el {d} número {i}.")
        source.append(origin)
    data = root / "en-es"
    data.mkdir(parents=True)
    for name, lines in (("train.en", en), ("train.es", es), ("train.source", source)):
        (data / name).write_text("\n".join(lines) + "\n", encoding="utf8")
    return root


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("crosslingual")
    project = Project(tmp)
    data = _write_data(tmp / "parallel")
    result = project(
        "crosslingual", xling_data_dir=str(data), xling_lang="es", xling_dev_sentences=6, xling_max_epochs=1,
        xling_window=3, package_build="wheel",
    )  # fmt: skip
    assert result.returncode == 0, result.output[-6000:]
    return project


def test_convert_splits_and_makes_documents(run):
    stats = json.loads((run.dir / "corpus/crosslingual/en-es/stats.json").read_text())
    assert stats["dev"] == {"sentences": 6, "news": 15, "documents": 5}
    assert stats["train"]["documents"] == 5


def test_trained_pipeline_scores_across_languages(run):
    nlp = spacy.load(run.dir / "training/crosslingual_en-es/model-last")
    assert nlp.lang == "xx"
    en, es = nlp("The cat and the dog."), nlp("El gato y el perro.")
    assert en.similarity(es) == es.similarity(en)


def test_evaluation_has_every_group_and_baseline(run):
    report = json.loads((run.dir / "metrics/crosslingual_en-es.json").read_text())
    assert set(report["groups"]) == {"sentences", "news", "documents"}
    assert len(report["groups"]["news"]["results"]) == 5
    assert (run.dir / "metrics/crosslingual_en-es.md").exists()


def test_package_carries_its_model_card(run):
    meta = assert_model_card(run.dir / "packages/xx_siamese_crosslingual_en_es-0.1.0")
    assert "crosslingual_en-es/groups/sentences/acc@1" in meta["performance"] and "Tatoeba" in meta["license"]
