import json

import numpy
import pytest

from spacy_siamese.corpora import PairRecord
from spacy_siamese.evaluation import (
    evaluate_duplicates,
    evaluate_pairs,
    examples_markdown,
    pairs_markdown,
    plot_curves,
    retrieval_markdown,
    summary_markdown,
    write_json,
)
from spacy_siamese.evaluation.pair_evaluation import MODEL, TFIDF, teacher_method
from spacy_siamese.evaluation.report import duplicates_markdown

from ..conftest import PAIRS


@pytest.fixture(scope="module")
def result(nlp):
    records = [PairRecord(a, b, float(y), i + 1) for i, (a, b, y) in enumerate(PAIRS)]
    records.append(PairRecord("A | B", "C", 0.0, 99))  # a pipe inside a table cell
    result = evaluate_pairs(nlp, records, baselines=True, n_examples=20)
    result.report["name"] = "tiny"
    return result


RETRIEVAL = {
    "task": "retrieval",
    "name": "docs",
    "split": "dev",
    "n_heldout_docs": 12,
    "n_eval_pairs": 100,
    "model": {"encoder": "spacy-siamese.S2NetEncoder.v1", "comparison": "spacy-siamese.CosineSimilarity.v1"},
    "tfidf": {"source": "the pipe's own featuriser", "n_terms": 30},
    "results": {
        MODEL: {"mrr": 0.9, "p@1": 0.8, "p@10": 0.3, "map": 0.7, "auc": 0.95, "width": 4},
        TFIDF: {"mrr": 0.8, "p@1": 0.7, "p@10": 0.3, "map": 0.6, "auc": 0.9},
    },
}


def test_pairs_markdown(result):
    md = pairs_markdown(result.report)
    assert md.startswith("### Pair similarity on tiny (11 pairs, 5 positive)")
    assert "| method | acc | P | R | F1 | AUC | AP | threshold |" in md
    rows = [line for line in md.splitlines() if line.startswith(f"| {TFIDF} |")]
    assert len(rows) == 1 and rows[0].endswith("* |")  # the tuned threshold is marked
    assert "best_threshold" in md and "`tfidf` layer" in md


def test_graded_table_has_correlation_columns(result):
    report = dict(result.report, binary=False)
    assert "| Pearson | Spearman | MSE | MAE |" in pairs_markdown(report)


def test_examples_markdown_escapes_table_cells(result):
    md = examples_markdown(result.report)
    assert md.splitlines()[0] == "| text 1 | text 2 | gold | trained | TF-IDF |"
    assert len(md.splitlines()) == 2 + 11
    assert "A \\| B" in md


def test_json_round_trip(result, tmp_path):
    write_json(result.report, tmp_path / "out" / "tiny.json")
    data = json.loads((tmp_path / "out" / "tiny.json").read_text(encoding="utf8"))
    assert data == json.loads(json.dumps(result.report))
    assert data["results"][MODEL]["threshold_source"] == "stored (pipe.threshold)"


def test_retrieval_markdown():
    md = retrieval_markdown(RETRIEVAL)
    assert "| method | width | MRR | P@1 | P@10 | MAP | pair AUC |" in md
    assert f"| {MODEL} | 4 | 0.9000 | 0.8000 | 0.3000 | 0.7000 | 0.9500 |" in md
    assert f"| {TFIDF} | - |" in md


def test_summary_has_one_table_per_task(result):
    md = summary_markdown({"tiny": result.report, "docs": RETRIEVAL})
    assert "## Pair similarity" in md and "## Document retrieval" in md
    assert "| tiny | MWEEncoder.v" in md and " + CauchySimilarity.v1 | 11 |" in md
    assert "| evaluation | model | width | query docs | MRR |" in md
    assert "| docs | S2NetEncoder.v1 + CosineSimilarity.v1 | 4 | 12 | 0.9000 |" in md
    assert md.count("### ") == 2  # then each evaluation's own table


def test_duplicate_retrieval_has_its_table_and_summary_row_with_intervals(nlp):
    records = [PairRecord(a, b, float(y), i + 1) for i, (a, b, y) in enumerate(PAIRS)]
    texts = [t for r in records for t in (r.text1, r.text2)]
    report = evaluate_duplicates(nlp, records, fit_texts=texts, compare={"again": nlp}, bootstrap=50)
    report["name"] = "dups"
    md = duplicates_markdown(report)
    ours, tfidf = report["results"][MODEL], report["results"][TFIDF]
    assert "### Duplicate retrieval on dups: 5 duplicate pairs, one text querying 15 distinct texts" in md
    assert "| method | MRR@10 | recall@1 | recall@10 | median rank |" in md
    assert f"| {TFIDF} | {tfidf['mrr@10']:.3f} | {tfidf['recall@1']:.3f} |" in md
    assert "compared: again: MWEEncoder.v2 + CauchySimilarity.v1." in md
    assert "| method | recall@1 | MRR@10 | recall@10 | trained MRR@10 minus this |" in md  # intervals
    summary = summary_markdown({"tiny": {**report, "name": "tiny"}, "docs": RETRIEVAL})
    assert "## Duplicate retrieval" in summary and "## Document retrieval" in summary
    row = summary.split("| tiny |")[1].split("\n")[0]
    low, high = report["bootstrap"]["intervals"][MODEL]["mrr@10"]
    assert f"| 5 | {ours['mrr@10']:.3f} [{low:.3f}, {high:.3f}] | {ours['recall@1']:.3f} |" in row
    assert summary.count("### ") == 2


def test_plot_curves(result, tmp_path):
    pytest.importorskip("matplotlib")
    plot_curves(tmp_path / "curves.png", result.labels, result.scores, "tiny")
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="both classes"):
        plot_curves(tmp_path / "one.png", numpy.ones(3), {"x": numpy.ones(3)})


def test_summary_puts_graded_reports_in_their_own_table(result, nlp):
    scores = (0.9, 0.1, 0.8, 0.2, 0.7, 0.0, 0.6, 0.3)
    records = [PairRecord(a, b, y, i + 1) for i, ((a, b, _), y) in enumerate(zip(PAIRS, scores))]
    graded = evaluate_pairs(nlp, records, baselines=True).report
    graded["name"] = "graded"
    assert graded["binary"] is False
    md = summary_markdown({"tiny": result.report, "graded": graded})
    assert "## Pair similarity" in md and "## Graded similarity" in md
    pair_table, graded_table = md.split("## Graded similarity")[0], md.split("## Graded similarity")[1].split("###")[0]
    assert "| tiny |" in pair_table and "| graded |" not in pair_table
    ours, tfidf = graded["results"][MODEL], graded["results"][TFIDF]
    row = f"| graded | MWEEncoder.v2 + CauchySimilarity.v1 | 8 | {ours['spearman']:.3f} | {ours['pearson']:.3f} |"
    assert row in graded_table
    assert f"| {tfidf['spearman']:.3f} |" in graded_table


def test_summary_has_a_teacher_column_only_where_a_teacher_was_scored(result, nlp):
    records = [PairRecord(a, b, float(y), i + 1) for i, (a, b, y) in enumerate(PAIRS)]
    with_teacher = evaluate_pairs(nlp, records, teachers={"t": lambda pairs: numpy.arange(len(pairs))}).report
    md = summary_markdown({"tiny": result.report, "taught": with_teacher})
    assert "| TF-IDF AUC | vectors AUC | teacher AUC |" in md
    teacher_auc = with_teacher["results"][teacher_method("t")]["auc"]
    assert md.split("| taught |")[1].split("\n")[0].rstrip().endswith(f"| {teacher_auc:.3f} |")
    assert "teacher AUC" not in summary_markdown({"tiny": result.report})


def test_intervals_and_groups_are_tables_of_the_pair_report(nlp):
    records = [
        PairRecord(a, b, float(y), i + 1, "odd | group" if i % 4 > 1 else "") for i, (a, b, y) in enumerate(PAIRS)
    ]
    report = evaluate_pairs(nlp, records, baselines=True, bootstrap=50).report
    text = pairs_markdown(report)
    assert "95% intervals (percentile bootstrap over the pairs, 50 resamples; acc at each method's threshold):" in text
    assert "| method | acc | AUC | trained AUC minus this |" in text
    ours = report["results"][MODEL]
    low, high = report["bootstrap"]["intervals"][MODEL]["auc"]
    assert f"| {MODEL} | {ours['acc']:.3f} [" in text and f"{ours['auc']:.3f} [{low:.3f}, {high:.3f}] | - |" in text
    assert "AUC by group of pairs:" in text and "| group | pairs | trained | TF-IDF |" in text
    assert "| odd \\| group | 4 |" in text and "| (no group) | 6 |" in text


def test_the_summary_gives_the_main_figure_with_its_interval(nlp):
    records = [PairRecord(a, b, float(y), i + 1) for i, (a, b, y) in enumerate(PAIRS)]
    report = evaluate_pairs(nlp, records, baselines=True, bootstrap=50).report
    md = summary_markdown({"boot": report})
    row = md.split("| boot |")[1].split("\n")[0]
    ours, tfidf = report["results"][MODEL], report["results"][TFIDF]
    low, high = report["bootstrap"]["intervals"][TFIDF]["auc"]
    assert f"| {ours['acc']:.3f} | {ours['f']:.3f} | {ours['auc']:.3f} [" in row  # acc and F1 without
    assert row.rstrip().endswith(f"| {tfidf['auc']:.3f} [{low:.3f}, {high:.3f}] | n/a |")  # no vectors here


def test_a_label_with_a_pipe_or_a_line_break_stays_in_its_cell(result):
    """A --compare label or a report name is any string: every table escapes its cells."""
    report = json.loads(json.dumps(result.report))
    report["results"]["models/a|b"] = report["results"][MODEL]
    md = pairs_markdown(report)
    row = next(line for line in md.splitlines() if line.startswith("| models/a"))
    assert row.startswith("| models/a\\|b |") and row.count(" | ") == md.splitlines()[2].count(" | ")
    summary = summary_markdown({"two\nlines | name": result.report})
    assert "| two lines \\| name |" in summary


def test_reports_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from spacy_siamese import files
    from spacy_siamese.evaluation.report import write_json

    path = tmp_path / "report.json"
    write_json({"auc": 0.5}, path)

    def killed(*args):  # the process dies before the new file is moved into place
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", killed)
    with pytest.raises(OSError):
        write_json({"auc": 0.9}, path)
    assert json.loads(path.read_text(encoding="utf8")) == {"auc": 0.5}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]  # no scratch file left
