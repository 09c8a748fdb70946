"""`calibrate`: tune a trained pipe's decision and dedupe thresholds (and set a hybrid's lexical
weight) on labelled pairs and save the pipeline."""

from pathlib import Path
from typing import Optional

import typer

from .app import (
    IN_PLACE,
    OUTPUT_PIPELINE,
    PAIRS_FORMAT,
    app,
    errors,
    fail,
    load_pipeline,
    pipeline_target,
    read_pair_records,
    save_pipeline,
)


@app.command("calibrate")
def calibrate_command(
    model: Path = typer.Argument(..., help="Trained pipeline directory with a siamese_similarity pipe"),
    pairs: Path = typer.Argument(
        ...,
        help="Labelled dev pairs (0/1; graded ones with --lexical-weight only), e.g. the dev file the pipeline "
        "was trained with",
    ),
    dedupe_precision: Optional[float] = typer.Option(
        None,
        "--dedupe-precision",
        help="Precision the dedupe threshold must reach on the pairs (default: the pipe's dedupe_precision)",
    ),
    lexical_weight: Optional[float] = typer.Option(
        None,
        "--lexical-weight",
        help="A hybrid pipe (HybridSimilarity.v1): mix its TF-IDF part at this weight in [0, 1] and tune the "
        "decision threshold again too (0/1 pairs)",
    ),
    output: Optional[Path] = OUTPUT_PIPELINE,
    in_place: bool = IN_PLACE,
    format: str = PAIRS_FORMAT,
) -> None:
    """Tune a pipeline's decision and dedupe thresholds on 0/1 pairs, as training does.

    The decision threshold (`pipe.threshold`, the most accurate one, behind the pipe's verdicts)
    and the dedupe threshold (the lowest score at which the pairs' duplicates are found with the
    given precision; `dedupe` uses it by default), as the tune_thresholds.v1 training callback
    sets them: for a pipeline trained without it, other pairs, or another precision.

    With `--lexical-weight`, first set a hybrid pipe's weight of its lexical part (no training
    needed), then tune both thresholds on the pairs, print the pair figures
    at the old and the new weight and write the new ones to the meta's `performance`. The pipe
    gets a new model id: encode stored collections again. Graded pairs (e.g. STS-B dev) set the
    weight only (their Spearman and Pearson at both weights are printed and written), no threshold.

    The pipeline is saved to --output, or over MODEL with --in-place, whole or not at all."""
    from .. import get_lexical_weight
    from ..averaging import calibrate_pipeline
    from ..component import get_similarity_pipe
    from ..evaluation.report import SCORE_COLUMNS as COLUMNS
    from ..metrics import is_binary
    from ..pair_examples import make_pair_example

    with errors():
        if lexical_weight is not None and not 0.0 <= lexical_weight <= 1.0:  # before the slow part
            fail(f"--lexical-weight must be in [0, 1], got {lexical_weight:g}")
        if model.exists() and not model.is_dir():
            fail(f"Not a pipeline directory: {model} (calibrate saves the pipeline, so it needs a directory)")
        target = pipeline_target(model, output, in_place, [pairs])
        nlp = load_pipeline(str(model))
        pipe = get_similarity_pipe(nlp, initialized=True)
        old_weight = None if lexical_weight is None else get_lexical_weight(nlp)  # before the pairs are read
        records = read_pair_records(pairs, format=format)
        examples = [make_pair_example(nlp, r.text1, r.text2, r.label) for r in records]
        before = pipe.dedupe_threshold
        graded = not is_binary([r.label for r in records])
        if graded and (lexical_weight is None or dedupe_precision is not None):
            fail(
                "The dedupe threshold is calibrated on pairs labelled 0 or 1 (duplicates or not); "
                "graded pairs set a hybrid's --lexical-weight only."
            )
        result = calibrate_pipeline(nlp, examples, precision=dedupe_precision, lexical_weight=lexical_weight)
        if lexical_weight is not None and old_weight is not None:  # the pair figures at each weight
            tuned = "" if graded else ", thresholds tuned on them at each weight"
            typer.echo(f"On {len(examples):,} pairs{tuned}:")
            columns = COLUMNS["graded" if graded else "binary"].items()
            for weight, scores in ((old_weight, result["before"]), (lexical_weight, result["after"])):
                figures = ", ".join(
                    f"{title} {scores[key]:.3f}" for key, title in columns if scores.get(key) is not None
                )
                typer.echo(f"  lexical weight {weight:g}: {figures}")
        if graded:
            save_pipeline(nlp, target)
            typer.echo(f"lexical weight = {lexical_weight:g}; saved to {target}")
            return
        threshold = result["dedupe_threshold"]
        wanted = pipe.cfg["dedupe_precision"]
        if threshold is None:  # saving would drop the threshold the pipeline has
            kept = "none" if before is None else f"{before:g}"
            fail(
                f"No threshold reaches precision {wanted:g} on {len(records):,} pairs: nothing saved "
                f"(the pipeline's dedupe_threshold stays {kept}). Give a lower --dedupe-precision or more pairs."
            )
        save_pipeline(nlp, target)
        if lexical_weight is not None:
            typer.echo(f"lexical weight = {lexical_weight:g}")
        typer.echo(f"threshold = {pipe.threshold:g} (the most accurate on {len(records):,} pairs)")
        typer.echo(
            f"dedupe_threshold = {threshold:g} (precision {wanted:g} on {len(records):,} pairs); saved to {target}"
        )
