"""The `spacy project` in project/, run as a user runs it (`python -m spacy project run ...`
in a subprocess) on a copy of the project in a temporary directory, with a tiny data
mirror (tests/data/project_mirror plus generated document collections), a tiny vectors
pipeline and tiny training settings."""

import hashlib
import io
import json
import random
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Dict, Optional, Tuple

import numpy
import pytest
import spacy
from spacy.vectors import Vectors

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "project"
SAMPLE = ROOT / "tests" / "data" / "project_mirror"
VECTORS_WIDTH = 16
# Tiny training: a few steps each, evaluated twice.
TINY = {
    "quora_max_steps": 4,
    "quora_eval_frequency": 2,
    "tweak_stackexchange_max_steps": 4,
    "tweak_stackexchange_eval_frequency": 2,
    "package_build": "wheel",
}
TINY_EXPERIMENTS = {"continue_steps": 4, "eval_frequency": 2, "bootstrap": 100}
TINY_RETRIEVAL = {"s2net_width": 8, "s2net_max_epochs": 1, "s2net_n_pairs": 200, "retrieval_max_docs": 0}
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


def small_vectors_pipeline(words, name: str = "test_vectors", version: str = "0.0.0") -> spacy.language.Language:
    """A blank English pipeline with random static vectors for `words`."""
    nlp = spacy.blank("en")
    words = sorted(set(words))
    data = numpy.random.RandomState(0).normal(size=(len(words), VECTORS_WIDTH)).astype("float32")
    nlp.vocab.vectors = Vectors(strings=nlp.vocab.strings, data=data, keys=[nlp.vocab.strings.add(w) for w in words])
    nlp.meta.update(name=name, version=version)
    return nlp


def mirror_words(mirror: Path):
    tokenizer = spacy.blank("en").tokenizer
    for path in sorted(mirror.rglob("*")):
        if path.suffix not in (".tsv", ".csv", ".txt"):
            continue
        for doc in tokenizer.pipe(path.read_text(encoding="utf8").split("\t")):
            yield from (t.text for t in doc)


def write_checksums(mirror: Path, dest: Path) -> None:
    lines = []
    for path in sorted(mirror.rglob("*")):
        if path.is_file() and path.name != "README.md":
            data = path.read_bytes()
            lines.append(f"{hashlib.sha256(data).hexdigest()}  {len(data)}  {path.relative_to(mirror).as_posix()}")
    dest.write_text("\n".join(lines) + "\n", encoding="utf8")


def write_document_sample(mirror: Path) -> None:
    """Tiny 20 Newsgroups (3 groups x 16 messages) and Reuters-21578 (22 .sgm files, 60
    ModApte training documents on three topics, plus test documents that must be left out)."""
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
            topics = f"<D>{topic}</D>"
            blocks.append(SGM_DOC.format(split=split, i=i + 1, topics=topics, title=f"{topic} {i}", body=body))
        (docs / "reuters21578" / f"reut2-{f:03d}.sgm").write_text("".join(blocks), encoding="latin-1")


class Project:
    """A copy of project/ and of the configs it reads (../configs) with a tiny data mirror and
    its checksum file. Call it to run `spacy project run TARGET`."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.dir = tmp / "project"
        shutil.copytree(
            PROJECT,
            self.dir,
            ignore=shutil.ignore_patterns(
                "assets", "corpus", "training", "metrics", "packages", "project.lock", "__pycache__"
            ),
        )
        shutil.copytree(ROOT / "configs", tmp / "configs", ignore=shutil.ignore_patterns("*.local.cfg"))
        self.mirror = tmp / "mirror"
        shutil.copytree(SAMPLE, self.mirror)
        write_document_sample(self.mirror)
        for path in self.mirror.rglob("*"):
            path.chmod(0o644 if path.is_file() else 0o755)
        self.checksums = tmp / "checksums.sha256"
        self.write_checksums()
        self.vectors = tmp / "vectors"
        small_vectors_pipeline(mirror_words(self.mirror)).to_disk(self.vectors)

    def write_checksums(self) -> None:
        write_checksums(self.mirror, self.checksums)

    def __call__(self, target: str, env: Optional[Dict[str, str]] = None, **overrides) -> subprocess.CompletedProcess:
        args = {"mirror": str(self.mirror), "checksums": str(self.checksums), "vectors": str(self.vectors)}
        args = {**args, "library_source": str(ROOT), **overrides}
        cmd = [sys.executable, "-m", "spacy", "project", "run", target, str(self.dir)]
        cmd += [f"--vars.{k}={v}" for k, v in args.items()]
        result = subprocess.run(cmd, capture_output=True, text=True, cwd=str(self.tmp), env=env)
        result.output = result.stdout + result.stderr
        return result


class Experiments:
    """A copy of experiments/ beside a Project's copy (as ../project), with the benchmark scripts
    beside both (as ../benchmarks). Call it to run `spacy project run TARGET` there."""

    def __init__(self, project: Project) -> None:
        self.dir = project.tmp / "experiments"
        shutil.copytree(
            ROOT / "experiments",
            self.dir,
            ignore=shutil.ignore_patterns("corpus", "training", "metrics", "project.lock", "__pycache__"),
        )
        shutil.copytree(ROOT / "benchmarks", project.tmp / "benchmarks", ignore=shutil.ignore_patterns("results", ".*"))

    def __call__(self, target: str, **overrides) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "spacy", "project", "run", target, str(self.dir)]
        cmd += [f"--vars.{k}={v}" for k, v in overrides.items()]
        result = subprocess.run(cmd, capture_output=True, text=True, cwd=str(self.dir.parent))
        result.output = result.stdout + result.stderr
        return result


def weights(nlp: spacy.language.Language) -> numpy.ndarray:
    """Every parameter of a pipeline's siamese_similarity model, flattened into one array."""
    model = nlp.get_pipe("siamese_similarity").model
    return numpy.concatenate(
        [node.get_param(name).ravel() for node in model.walk() for name in node.param_names if node.has_param(name)]
    )


def assert_model_card(package_dir: Path) -> Dict:
    """The meta.json of a package built by a package step: its model card is filled (what it is for
    and its limits, its training data and their licences, dev figures from the evaluation JSON,
    thresholds from the pipe, speed). Returns it."""
    meta = json.loads((package_dir / "meta.json").read_text(encoding="utf8"))
    assert "Known limits:" in meta["description"] and meta["license"]
    assert all(source["name"] and source["license"] for source in meta["sources"] if "license" in source)
    assert any("license" in source for source in meta["sources"])
    evaluated = [key for key in meta["performance"] if "/" in key and not key.startswith("thresholds/")]
    assert evaluated and all(isinstance(meta["performance"][key], float) for key in evaluated)
    assert meta["speed"]["cpu"] > 0 and meta["speed"]["nwords"] > 0
    assert list((package_dir / "dist").glob("*.whl"))
    return meta


def scores_without_torch(model: Path) -> float:
    """Load a trained pipeline in a new process in which any import of torch fails, and return its
    score of one pair of questions; fails with the process's error output if it cannot."""
    code = (
        "import importlib.abc, sys\n"
        "class NoTorch(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name.split('.')[0] == 'torch':\n"
        "            raise ImportError('no torch in this process')\n"
        "sys.meta_path.insert(0, NoTorch())\n"
        "import spacy\n"
        f"nlp = spacy.load({str(model)!r})\n"
        "print(round(nlp('How do I learn Python?').similarity(nlp('How can I learn Python?')), 6))\n"
        "assert 'torch' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    return float(result.stdout.strip().splitlines()[-1])


def run_workflow(tmp: Path, workflow: str, **overrides) -> Tuple[Project, subprocess.CompletedProcess]:
    """Run a workflow in a new project copy under `tmp`; fails with the output's tail if it fails."""
    project = Project(tmp)
    result = project(workflow, **overrides)
    assert result.returncode == 0, result.output[-6000:]
    return project, result


@pytest.fixture
def project(tmp_path) -> Project:
    return Project(tmp_path)
