"""project/scripts/oneshot.py on a tiny collection: split, then the few-shot table and plot."""

import json
import subprocess
import sys

import numpy
import pytest
import spacy
import srsly

from spacy_siamese import make_pair_example

from .conftest import PROJECT, small_vectors_pipeline

TOPICS = {
    "space": "orbit shuttle launch rocket moon satellite",
    "cars": "engine car sedan tires brakes clutch",
    "votes": "vote senate election policy congress tax",
    "food": "bread cheese pasta soup salad sauce",
}


def _documents(n=8):
    rng = numpy.random.default_rng(0)
    docs = []
    for topic, words in TOPICS.items():
        for i in range(n):
            text = " ".join(rng.choice(words.split(), size=6))
            docs.append({"text": text, "labels": [topic], "group": topic, "id": f"{topic}/{i}"})
    return docs


@pytest.mark.slow
def test_oneshot_split_and_run(tmp_path):
    srsly.write_jsonl(tmp_path / "documents.jsonl", _documents())
    script = str(PROJECT / "scripts" / "oneshot.py")
    out = tmp_path / "split"
    subprocess.run(
        [sys.executable, script, "split", str(tmp_path / "documents.jsonl"), str(out), "--held-out", "space,cars"],
        check=True,
    )
    seen = list(srsly.read_jsonl(out / "seen.jsonl"))
    assert {d["group"] for d in seen} == {"votes", "food"}
    # a small siamese model trained on the seen groups only
    nlp = spacy.blank("en")
    nlp.add_pipe("siamese_similarity", config={"model": {"encoder": {"width": 16, "depth": 1, "post_depth": 0}}})
    pairs = [
        make_pair_example(nlp, a["text"], b["text"], float(a["group"] == b["group"]))
        for a in seen[:6]
        for b in seen[-6:]
    ]
    optimizer = nlp.initialize(lambda: pairs)
    for _ in range(5):
        nlp.update(pairs, sgd=optimizer)
    nlp.to_disk(tmp_path / "model")
    small_vectors_pipeline(" ".join(TOPICS.values()).split()).to_disk(tmp_path / "vectors")
    subprocess.run(
        [
            sys.executable, script, "run", str(tmp_path / "model"), str(out / "unseen.jsonl"),
            "--fit-texts", str(out / "seen.jsonl"), "--vectors", str(tmp_path / "vectors"),
            "--output", str(tmp_path / "metrics" / "oneshot"), "--shots", "1,2", "--repeats", "2", "--max-test", "4",
        ],
        check=True,
    )  # fmt: skip
    result = json.loads((tmp_path / "metrics" / "oneshot.json").read_text())
    assert result["classes"] == ["cars", "space"]
    for per_k in result["accuracy"].values():
        assert set(per_k) == {"1", "2"}
        assert all(0.0 <= v["mean"] <= 1.0 for v in per_k.values())
    assert (tmp_path / "metrics" / "oneshot.png").stat().st_size > 0
    assert "| k = 1 | k = 2 |" in (tmp_path / "metrics" / "oneshot.md").read_text()


def test_split_refuses_an_unknown_group(tmp_path):
    srsly.write_jsonl(tmp_path / "documents.jsonl", _documents(2))
    script = str(PROJECT / "scripts" / "oneshot.py")
    args = [sys.executable, script, "split", str(tmp_path / "documents.jsonl"), str(tmp_path / "o"), "--held-out", "x"]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode != 0 and "no documents of the groups ['x']" in proc.stderr


@pytest.mark.parametrize(
    "option,value,message",
    [
        ("--shots", "0", "every class needs at least 1 exemplar, got '0'"),
        ("--shots", "-1,2", "every class needs at least 1 exemplar, got '-1,2'"),
        ("--shots", "1,two", "whole numbers separated by commas, got '1,two'"),
        ("--repeats", "0", "Invalid value for '--repeats': Input should be greater than or equal to 1"),
        ("--max-test", "0", "Invalid value for '--max-test': Input should be greater than or equal to 1"),
    ],
)
def test_run_refuses_counts_below_one(tmp_path, option, value, message):
    """Before anything is loaded: --shots 0 and --max-test 0 failed deep in numpy, --repeats 0 in
    srsly (NaN), and a negative shot count gave a table of quietly wrong numbers."""
    script = str(PROJECT / "scripts" / "oneshot.py")
    args = [sys.executable, script, "run", str(tmp_path / "model"), str(tmp_path / "unseen.jsonl")]
    args += ["--fit-texts", str(tmp_path / "seen.jsonl"), "--vectors", str(tmp_path / "vectors"), option, value]
    proc = subprocess.run(args, capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert message in " ".join(proc.stderr.replace("│", " ").split())


def test_split_refuses_to_hold_out_every_group(tmp_path):
    srsly.write_jsonl(tmp_path / "documents.jsonl", _documents(2))
    script = str(PROJECT / "scripts" / "oneshot.py")
    args = [sys.executable, script, "split", str(tmp_path / "documents.jsonl"), str(tmp_path / "o")]
    proc = subprocess.run([*args, "--held-out", ",".join(TOPICS)], capture_output=True, text=True)
    assert proc.returncode != 0 and "no documents left to train on" in " ".join(proc.stderr.replace("│", " ").split())
    assert not (tmp_path / "o").exists()


def test_split_names_a_document_without_a_group(tmp_path):
    docs = _documents(2)
    del docs[3]["group"]
    srsly.write_jsonl(tmp_path / "documents.jsonl", docs)
    script = str(PROJECT / "scripts" / "oneshot.py")
    args = [sys.executable, script, "split", str(tmp_path / "documents.jsonl"), str(tmp_path / "o")]
    proc = subprocess.run([*args, "--held-out", "food"], capture_output=True, text=True)
    message = " ".join(proc.stderr.replace("│", " ").split())
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert 'documents.jsonl:4:adocumentneedsa"group"string' in "".join(message.split())  # the panel wraps lines


def test_hierarchy_names_a_model_that_is_not_a_pipeline(tmp_path):
    srsly.write_jsonl(tmp_path / "documents.jsonl", _documents(2))
    script = str(PROJECT / "scripts" / "hierarchy.py")
    proc = subprocess.run(
        [sys.executable, script, str(tmp_path / "documents.jsonl"), str(tmp_path / "missing")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "is not a trained pipeline (no config.cfg)" in " ".join(proc.stderr.replace("│", " ").split())
