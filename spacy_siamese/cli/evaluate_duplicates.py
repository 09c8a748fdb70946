"""`evaluate-duplicates`: duplicate retrieval on a pair file, for a pipeline and TF-IDF cosine."""

import json
from pathlib import Path
from typing import List, Optional

import typer

from .app import (
    COMPARE,
    CONFIDENCE,
    FIT_LIMIT,
    NAME,
    OUTPUT_JSON,
    OUTPUT_MD,
    PROGRESS,
    app,
    compared_pipelines,
    errors,
    load_pipeline,
    read_fit_texts,
    read_pair_records,
    require_file,
    versions,
)

BASELINES_ONLY = "-"


@app.command("evaluate-duplicates")
def evaluate_duplicates_command(
    model: str = typer.Argument(
        ..., help=f"Trained pipeline (directory or package), or '{BASELINES_ONLY}' for the baseline only"
    ),
    pairs: Path = typer.Argument(..., help="Labelled pair file whose distinct texts form the collection"),
    fit_texts: Optional[Path] = typer.Option(
        None, "--fit-texts", help="Pair file whose texts fit the TF-IDF cosine baseline (default: no baseline)"
    ),
    fit_limit: int = FIT_LIMIT,
    compare: Optional[List[str]] = COMPARE,
    label_threshold: Optional[float] = typer.Option(
        None,
        "--label-threshold",
        help="Graded labels (e.g. STS scores in [0, 1]): the pairs labelled at least this are the duplicates",
    ),
    n_pairs: int = typer.Option(1000, "--n-pairs", min=1, help="Duplicate pairs sampled as queries"),
    seed: int = typer.Option(0, "--seed", help="Seed of the query sample (and of the --bootstrap resamples)"),
    bootstrap: int = typer.Option(
        0, "--bootstrap", min=0, help="Resample the queries N times for confidence intervals (0 = none)"
    ),
    confidence: float = CONFIDENCE,
    name: str = NAME,
    output_json: Optional[Path] = OUTPUT_JSON,
    output_md: Optional[Path] = OUTPUT_MD,
    progress: bool = PROGRESS,
) -> None:
    """Rank each sampled duplicate's partner among all texts of a pair file, printed as JSON
    (--output-md: as a table, which `report` also makes of the JSON).

    One text of each sampled duplicate pair queries every other distinct text of the file: MRR,
    MRR@k and recall@k of its partner's rank (ties count against it). --fit-texts adds TF-IDF
    cosine, fitted as `evaluate --baselines` fits it; --compare ranks with other pipelines on the
    same queries; --bootstrap N adds intervals, and of the pipeline's MRR@10 lead over each other
    method. Duplicates are the pairs labelled 1; graded labels need --label-threshold."""
    from ..evaluation.duplicates import duplicate_records, evaluate_duplicates
    from ..evaluation.report import duplicates_markdown, write_report
    from ..files import check_outputs
    from ..util import given_path

    with errors():
        require_file(pairs, fit_texts)  # before the model loads
        check_outputs([pairs, fit_texts, model, *(compare or [])], [output_json, output_md])
        nlp = None if model == BASELINES_ONLY else load_pipeline(model)
        others = compared_pipelines(model, compare or [])
        records = duplicate_records(read_pair_records(pairs), label_threshold, pairs)
        fit, fit_note = read_fit_texts(fit_texts, fit_limit)
        report = evaluate_duplicates(
            nlp,
            records,
            fit_texts=fit,
            fit_note=fit_note,
            compare=others,
            n_pairs=n_pairs,
            seed=seed,
            bootstrap=bootstrap,
            confidence=confidence,
            progress=progress,
        )
        report.update(
            name=name,
            pairs=given_path(pairs),
            model_path=given_path(model),
            fit_limit=fit_limit,
            label_threshold=label_threshold,
            versions=versions(),
        )
        write_report(report, duplicates_markdown(report), output_json, output_md)
        typer.echo(json.dumps(report, indent=2))
