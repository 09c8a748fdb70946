"""`evaluate`: score a labelled pair file with a trained pipeline, optionally against baselines."""

from pathlib import Path
from typing import List, Optional

import typer

from .app import (
    COMPARE,
    CONFIDENCE,
    FIT_LIMIT,
    MODEL,
    NAME,
    OUTPUT_JSON,
    OUTPUT_MD,
    PAIRS_FORMAT,
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


@app.command("evaluate")
def evaluate_command(
    model: str = MODEL,
    pairs: Path = typer.Argument(..., help="Labelled pair file (a format of spacy_siamese.corpora.read_pairs)"),
    format: str = PAIRS_FORMAT,
    limit: int = typer.Option(0, "--limit", min=0, help="Evaluate on the first N pairs only (0 = all)"),
    group: Optional[List[str]] = typer.Option(
        None, "--group", help="Evaluate only the pairs of this group (repeat for several; e.g. an STS source file)"
    ),
    baselines: bool = typer.Option(False, "--baselines", help="Also score TF-IDF cosine and averaged word vectors"),
    fit_texts: Optional[Path] = typer.Option(
        None, "--fit-texts", help="Pair file whose texts fit the TF-IDF (default: the evaluated texts)"
    ),
    fit_limit: int = FIT_LIMIT,
    vectors: Optional[str] = typer.Option(
        None, "--vectors", help="Pipeline whose static vectors the vectors baseline uses (default: the model's own)"
    ),
    teachers: Optional[List[str]] = typer.Option(
        None,
        "--teacher",
        help="Also score a teacher: a sentence-transformers model's cosine (name or directory) or a CrossEncoder "
        "directory's probability (e.g. from teacher-train); repeat for several; extra spacy-siamese\\[teacher]",
    ),
    teacher_cache: Optional[Path] = typer.Option(
        None, "--teacher-cache", help="Cache the teachers' vectors and scores in this directory"
    ),
    compare: Optional[List[str]] = COMPARE,
    name: str = NAME,
    output_json: Optional[Path] = OUTPUT_JSON,
    output_md: Optional[Path] = OUTPUT_MD,
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write ROC and precision-recall curves as PNG"),
    examples: int = typer.Option(8, "--examples", min=0, help="Show N example pairs with every method's score"),
    bootstrap: int = typer.Option(
        0, "--bootstrap", min=0, help="Resample the pairs N times for confidence intervals of every figure (0 = none)"
    ),
    confidence: float = CONFIDENCE,
    progress: bool = PROGRESS,
) -> None:
    """Score a labelled pair file with a trained pipeline, optionally against baselines.

    The pipeline and the --compare ones use their stored thresholds; --baselines (TF-IDF cosine,
    averaged word vectors) and each --teacher the accuracy-optimal threshold on the file.
    Pairs of several groups (e.g. the STS Benchmark's source files) are also scored per group;
    --bootstrap N adds intervals, and of the pipeline's lead over each other method."""
    from ..evaluation.baselines import load_vectors
    from ..evaluation.pair_evaluation import evaluate_pairs, only_groups, teacher_scorers
    from ..evaluation.report import examples_markdown, pairs_markdown, plot_curves, write_report
    from ..files import check_outputs
    from ..util import given_path

    with errors():
        require_file(pairs, fit_texts)  # before the model loads
        outputs = [output_json, output_md, plot, teacher_cache]
        check_outputs([pairs, fit_texts, model, vectors, *(compare or [])], outputs)
        scorers, teachers_report = teacher_scorers(teachers or [], cache_dir=teacher_cache, progress=progress)
        nlp = load_pipeline(model)
        others = compared_pipelines(model, compare or [])
        records = only_groups(read_pair_records(pairs, format=format, limit=limit), group or [], pairs)
        fit, fit_note = read_fit_texts(fit_texts if baselines else None, fit_limit)
        vectors_nlp = load_vectors(vectors) if baselines and vectors else None
        result = evaluate_pairs(
            nlp,
            records,
            baselines=baselines,
            fit_texts=fit,
            fit_note=fit_note,
            vectors=vectors_nlp,
            teachers=scorers,
            compare=others,
            n_examples=examples,
            bootstrap=bootstrap,
            confidence=confidence,
            progress=progress,
        )
        report = result.report
        if teachers_report:
            report["teachers"] = teachers_report
        files = {  # as given if relative, else the last part: a results file names no machine path
            "pairs": given_path(pairs),
            "model": given_path(model),
            "compared": compare or None,  # as given: the labels of their results, which must stay distinct
            "fit_texts": None if fit_texts is None else given_path(fit_texts),
            "vectors": None if vectors is None else given_path(vectors),
        }
        report.update(
            name=name,
            files=files,
            format=format,
            limit=limit,
            only_groups=group or None,
            fit_limit=fit_limit,
            versions=versions(),
        )
        table = pairs_markdown(report)
        examples_md = examples_markdown(report)
        for note in result.notes:
            typer.echo(note, err=True)
        markdown = table + ("\n#### Example pairs\n\n" + examples_md if examples_md else "")
        write_report(report, markdown, output_json, output_md)
        typer.echo(table)
        if examples_md:
            typer.echo(examples_md)
        check = report["similarity_check"]
        diff = check["max_abs_diff"]
        typer.echo(f"doc.similarity vs the pipe's batch scores on {check['n_pairs']} pairs: max |diff| {diff:.2e}")
        if plot:  # last: the table is printed and saved even if the plot fails (matplotlib missing)
            plot_curves(plot, result.labels, result.scores, f"{name or pairs.name} ({len(records):,} pairs)")
