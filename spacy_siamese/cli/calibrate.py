"""`calibrate`: set a trained pipe's dedupe threshold from labelled pairs and save the pipeline."""

from pathlib import Path
from typing import Optional

import typer

from ..component import get_similarity_pipe
from ..pair_examples import make_pair_example
from .app import PAIRS_FORMAT, app, errors, fail, load_pipeline, read_pair_records


@app.command("calibrate")
def calibrate_command(
    model: Path = typer.Argument(..., help="Trained pipeline directory with a siamese_similarity pipe"),
    pairs: Path = typer.Argument(..., help="Labelled dev pairs (0/1), e.g. the dev file the pipeline was trained with"),
    precision: Optional[float] = typer.Option(
        None, "--precision", "-p", help="Precision the threshold must reach on the pairs (default: the pipe's setting)"
    ),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Save the pipeline here (default: in place)"),
    format: str = PAIRS_FORMAT,
) -> None:
    """Set the dedupe threshold: the lowest score at which the pairs' duplicates are found with
    the given precision. `dedupe` uses it by default; `spacy train` sets it with the decision
    threshold, so this is for pipelines trained before it existed or for another precision."""
    with errors():
        if not model.is_dir():
            fail(f"Not a pipeline directory: {model} (calibrate saves the pipeline, so it needs a directory)")
        nlp = load_pipeline(str(model))
        pipe = get_similarity_pipe(nlp, initialized=True)
        records = read_pair_records(pairs, format=format)
        examples = [make_pair_example(nlp, r.text1, r.text2, r.label) for r in records]
        before = pipe.dedupe_threshold
        threshold = pipe.calibrate_dedupe_threshold(examples, precision=precision)
        wanted = pipe.cfg["dedupe_precision"]
        if threshold is None:  # saving would drop the threshold the pipeline has
            kept = "none" if before is None else f"{before:g}"
            fail(
                f"No threshold reaches precision {wanted:g} on {len(records):,} pairs: nothing saved "
                f"(the pipeline's dedupe_threshold stays {kept}). Give a lower --precision or more pairs."
            )
        target = output or model
        target.parent.mkdir(parents=True, exist_ok=True)  # spaCy makes the last directory only
        nlp.to_disk(target)
        typer.echo(
            f"dedupe_threshold = {threshold:g} (precision {wanted:g} on {len(records):,} pairs); saved to {target}"
        )
