"""benchmarks/near_misses.py: wins, ties, margins and near-miss verdicts are counted as
`doc.similarity` and `pipe.verdict` say, overall and per kind, for a pipeline and a bi-encoder;
a bad line is an error naming the file and line; the command writes its table and results."""

import json

import pytest
import srsly
import typer
from typer.testing import CliRunner

import spacy_siamese.teacher.models as teacher_models
from spacy_siamese.corpora import PairFormatError

from ..conftest import PAIRS, FakeTeacher
from . import load_benchmark

near_misses = load_benchmark("near_misses")

A, B, C = PAIRS[0][0], PAIRS[0][1], PAIRS[1][1]
D, E = PAIRS[2][0], PAIRS[3][1]
# each answer is known whatever the model: a text scores highest against itself, and a tie is no win
TRIPLES = [
    {"anchor": A, "duplicate": A, "near_miss": C, "kind": "negation"},  # win
    {"anchor": A, "duplicate": B, "near_miss": A, "kind": "negation"},  # loss, near miss a duplicate
    {"anchor": D, "duplicate": E, "near_miss": E, "kind": "number"},  # tie: a loss
    {"anchor": D, "duplicate": D, "near_miss": E, "kind": "number"},  # win
    {"anchor": B, "duplicate": B, "near_miss": C, "kind": "role"},  # win
]


@pytest.fixture()
def triples_file(tmp_path):
    path = tmp_path / "triples.jsonl"
    srsly.write_jsonl(path, TRIPLES)
    return path


@pytest.fixture()
def fake_teacher(monkeypatch):
    monkeypatch.setattr(teacher_models, "load_teacher", lambda name: FakeTeacher())


def test_a_pipeline_is_counted_as_doc_similarity_says(nlp, triples_file):
    triples = near_misses.read_triples(triples_file)
    duplicate, near_miss, threshold = near_misses.pipeline_scores(nlp, triples)
    result = near_misses.tally(triples, duplicate, near_miss, threshold)
    sims = [
        (nlp(t["anchor"]).similarity(nlp(t["duplicate"])), nlp(t["anchor"]).similarity(nlp(t["near_miss"])))
        for t in TRIPLES
    ]
    assert duplicate.tolist() == pytest.approx([d for d, _ in sims]) and near_miss.tolist() == pytest.approx(
        [n for _, n in sims]
    )
    assert sims[0][0] > sims[0][1] and sims[1][0] < sims[1][1] and sims[2][0] == sims[2][1]
    judged = sum(n >= nlp.get_pipe("siamese_similarity").threshold for _, n in sims)
    assert judged >= 1 and threshold == nlp.get_pipe("siamese_similarity").threshold
    assert result["overall"] == {
        "wins": 3,
        "total": 5,
        "mean_margin": pytest.approx(sum(d - n for d, n in sims) / 5),
        "near_miss_duplicate": judged,
    }
    assert {kind: (c["wins"], c["total"]) for kind, c in result["kinds"].items()} == {
        "negation": (1, 2),
        "number": (1, 2),
        "role": (1, 1),
    }
    assert list(result["kinds"]) == ["negation", "number", "role"]
    assert result["kinds"]["number"]["mean_margin"] == pytest.approx(
        (sims[2][0] - sims[2][1] + sims[3][0] - sims[3][1]) / 2
    )
    assert [(loss["line"], loss["kind"]) for loss in result["losses"]] == [(2, "negation"), (3, "number")]


def test_a_bi_encoder_is_counted_by_cosine(fake_teacher, triples_file):
    triples = near_misses.read_triples(triples_file)
    duplicate, near_miss = near_misses.teacher_scores("fake-teacher", triples)
    # the teacher's vectors are float32
    vectors = {t: FakeTeacher().encode([t], 1, True, True, False)[0] for t in {A, B, C, D, E}}
    expected = [
        (vectors[t["anchor"]] @ vectors[t["duplicate"]], vectors[t["anchor"]] @ vectors[t["near_miss"]])
        for t in TRIPLES
    ]
    assert duplicate.tolist() == pytest.approx([d for d, _ in expected], abs=1e-6)
    assert near_miss.tolist() == pytest.approx([n for _, n in expected], abs=1e-6)
    result = near_misses.tally(triples, duplicate, near_miss, None)
    assert (result["overall"]["wins"], result["overall"]["near_miss_duplicate"]) == (3, None)


@pytest.mark.parametrize(
    "line,reason",
    [
        ('{"anchor": "a", "duplicate": "b", "near_miss": "c"}', "missing key(s) 'kind'"),
        (
            '{"anchor": "a", "duplicate": 3, "near_miss": "c", "kind": "k"}',
            "'duplicate' must be a non-blank string, found number",
        ),
        ('{"anchor": " ", "duplicate": "b", "near_miss": "c", "kind": "k"}', "'anchor' must be a non-blank string"),
        ('["a", "b", "c", "k"]', "expected a JSON object, found array"),
        ('{"anchor": "a",', ""),
    ],
)
def test_a_bad_line_names_file_and_line(tmp_path, line, reason):
    path = tmp_path / "triples.jsonl"
    path.write_text(json.dumps(TRIPLES[0]) + "\n\n" + line + "\n", encoding="utf8")
    with pytest.raises(PairFormatError, match=f"^{path}:3: ") as err:
        near_misses.read_triples(path)
    assert reason in str(err.value)


def test_a_file_without_triples_is_refused(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n", encoding="utf8")
    with pytest.raises(ValueError, match="no triples"):
        near_misses.read_triples(path)


def test_the_command_writes_its_table_and_results(nlp, fake_teacher, triples_file, tmp_path, monkeypatch):
    nlp.to_disk(tmp_path / "model")
    monkeypatch.chdir(tmp_path)
    app = typer.Typer()
    app.command()(near_misses.main)
    args = [
        str(triples_file),
        "model",
        "--teacher",
        "fake-teacher",
        "--output-json",
        "out/r.json",
        "--output-md",
        "out/r.md",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "out" / "r.json").read_text())
    assert report["n_triples"] == 5
    assert [(m["model"], m["type"], m["overall"]["wins"]) for m in report["models"]] == [
        ("model", "pipeline", 3),
        ("fake-teacher", "bi-encoder", 3),
    ]
    table = (tmp_path / "out" / "r.md").read_text().splitlines()
    assert (
        table[0] == "| model | duplicate wins | negation | number | role | near miss judged duplicate | mean margin |"
    )
    assert table[2].startswith("| model | 3/5 | 1/2 | 1/2 | 1/1 | ")
    assert table[3].startswith("| fake-teacher | 3/5 | 1/2 | 1/2 | 1/1 | n/a | ")
    assert table[0] in result.output


def test_the_command_reports_a_bad_line_without_a_traceback(tmp_path):
    path = tmp_path / "triples.jsonl"
    path.write_text('{"anchor": "a"}\n', encoding="utf8")
    app = typer.Typer()
    app.command()(near_misses.main)
    result = CliRunner().invoke(app, [str(path), "--teacher", "fake-teacher"])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert f"{path}:1: missing key(s)" in result.output and "Traceback" not in result.output
