"""`teacher-evaluate`: score a labelled pair file with sentence-transformers teachers."""

import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from .app import CONFIDENCE, OUTPUT_JSON, OUTPUT_MD, PAIRS_FORMAT, PROGRESS, app, errors, read_pair_records, versions


@app.command("teacher-evaluate")
def teacher_evaluate_command(
    pairs: Path = typer.Argument(..., help="Labelled pair file (a format of spacy_siamese.corpora.read_pairs)"),
    teachers: List[str] = typer.Option(
        ...,
        "--teacher",
        help="sentence-transformers model (name or directory) or CrossEncoder directory; repeat for several",
    ),
    format: str = PAIRS_FORMAT,
    limit: int = typer.Option(0, "--limit", "-n", min=0, help="Evaluate on the first N pairs only (0 = all)"),
    teacher_cache: Optional[Path] = typer.Option(None, "--teacher-cache", help="Cache bi-encoders' vectors here"),
    bootstrap: int = typer.Option(
        0, "--bootstrap", min=0, help="Resample the pairs N times for confidence intervals (0 = none)"
    ),
    confidence: float = CONFIDENCE,
    output_json: Optional[Path] = OUTPUT_JSON,
    output_md: Optional[Path] = OUTPUT_MD,
    progress: bool = PROGRESS,
) -> None:
    r"""Score a labelled pair file with teachers (pip install 'spacy-siamese\[distill]').

    A CrossEncoder directory (e.g. from teacher-train) scores a pair with its probability, a
    bi-encoder with the cosine of the texts' vectors, each read at its accuracy-optimal threshold
    on this file. --bootstrap N adds intervals, and of the first teacher's lead over each other."""
    import numpy

    from ..distill import teacher_label, teacher_pair_scores
    from ..evaluation.pair_evaluation import score_method
    from ..evaluation.report import fmt, intervals_markdown, markdown_table, write_report
    from ..evaluation.uncertainty import check_bootstrap, pair_intervals
    from ..util import given_path

    with errors():
        check_bootstrap(bootstrap, confidence)
        records = read_pair_records(pairs, format=format, limit=limit)
        labels = numpy.asarray([r.label for r in records], dtype="f8")
        scores: Dict[str, numpy.ndarray] = {}
        seconds: Dict[str, float] = {}
        for teacher in teachers:
            start = time.perf_counter()
            name = teacher_label(teacher)
            scores[name] = teacher_pair_scores(
                teacher, [(r.text1, r.text2) for r in records], cache_dir=teacher_cache, progress=progress
            )
            seconds[name] = round(time.perf_counter() - start, 1)
        results = {name: score_method(s, labels, None) for name, s in scores.items()}
        report: Dict[str, Any] = {
            "task": "pairs",
            "n_pairs": len(records),
            "n_positive": int((labels >= 0.5).sum()),
            "results": results,
            "seconds": seconds,
            "files": {"pairs": given_path(pairs)},
            "limit": limit,
            "versions": versions(),
        }
        binary = next(iter(results.values()))["auc"] is not None
        keys = ("acc", "f", "auc", "ap") if binary else ("spearman", "pearson")
        lines = markdown_table(
            ["teacher", *keys, "threshold", "seconds"],
            [
                [name, *(fmt(r.get(k)) for k in keys), fmt(r["threshold"]), f"{seconds[name]:.0f}"]
                for name, r in results.items()
            ],
        )
        if bootstrap:
            thresholds = {name: r["threshold"] for name, r in results.items()}
            report["bootstrap"] = pair_intervals(
                scores, labels, thresholds, reference=next(iter(scores)), n_resamples=bootstrap, confidence=confidence
            )
            lines += ["", *intervals_markdown(report)]
        table = f"{len(records):,} pairs of {given_path(pairs)}\n\n" + "\n".join(lines) + "\n"
        write_report(report, table, output_json, output_md)
        typer.echo(table)
