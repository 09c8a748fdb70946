"""Check that a trained pipeline loads and scores before it is packaged.

`spacy train` writes its checkpoints in place, so a run that was interrupted can leave a
half-written `model-best` or `model-last`. Packaging one would ship a pipeline that fails on
`spacy.load`; this check stops the workflow first, naming the directory.

Usage:
    python scripts/check_model.py training/quora/model-best
"""

import math
from pathlib import Path

import spacy
import typer

TEXTS = ("How do I learn Python fast?", "What is the quickest way to learn Python?")


def main(model: Path = typer.Argument(..., help="Trained pipeline directory")) -> None:
    try:
        nlp = spacy.load(model)
        pipe = nlp.get_pipe("siamese_similarity")
        a, b = (nlp(text) for text in TEXTS)
        score = a.similarity(b)
    except Exception as err:  # any failure means the directory must not be packaged
        typer.echo(
            f"Error: the pipeline in {model} cannot be packaged: {err}\n"
            "If its training was interrupted, train again or package the other checkpoint.",
            err=True,
        )
        raise typer.Exit(1) from None
    low, high = pipe.score_range
    if not math.isfinite(score) or not low <= score <= high:
        typer.echo(f"Error: the pipeline in {model} scores {score}, outside its range {pipe.score_range}.", err=True)
        raise typer.Exit(1)
    typer.echo(f"{model}: loads and scores ({score:.3f} for two similar questions)")


if __name__ == "__main__":
    typer.run(main)
