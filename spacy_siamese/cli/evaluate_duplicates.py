"""`evaluate-duplicates`: duplicate retrieval on a pair file, for a pipeline and TF-IDF cosine."""

import json
from pathlib import Path
from typing import List, Optional

import typer

from ..evaluation.duplicates import evaluate_duplicates
from ..evaluation.report import duplicates_markdown, write_json, write_text
from ..util import given_path
from .app import (
    COMPARE,
    CONFIDENCE,
    FIT_LIMIT,
    NAME,
    OUTPUT_JSON,
    OUTPUT_MD,
    PROGRESS,
    app,
    check_paths,
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

    One text of each sampled duplicate pair queries every other distinct text of the file:
    MRR, MRR@k and recall@k of its partner's rank. Ranks are pessimistic (ties count against
    the partner); the TF-IDF cosine baseline is fitted on the distinct texts of the first
    --fit-limit pairs of --fit-texts, as `evaluate --baselines` fits it.
    --compare ranks with other trained pipelines on the same queries; --bootstrap N adds
    intervals of every figure and of the pipeline's MRR@10 lead over each other method (the
    same resampled queries for both).
    """
    with errors():
        for path in (pairs, fit_texts):
            require_file(path)  # before the model loads
        check_paths([pairs, fit_texts, model, *(compare or [])], [output_json, output_md])
        nlp = None if model == BASELINES_ONLY else load_pipeline(model)
        others = compared_pipelines(model, compare or [])
        records = read_pair_records(pairs)
        fit, fit_note = read_fit_texts(fit_texts, fit_limit) if fit_texts is not None else (None, None)
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
            versions=versions(),
        )
        if output_json:
            write_json(report, output_json)
        if output_md:
            write_text(duplicates_markdown(report), output_md)
        typer.echo(json.dumps(report, indent=2))
