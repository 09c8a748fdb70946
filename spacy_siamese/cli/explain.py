"""`explain`: the learned TWEAK feature weights and the terms behind one pair's score."""

from pathlib import Path
from typing import Any, Dict, Optional

import typer

from ..component import get_similarity_pipe
from ..evaluation.report import write_json
from ..explain import explain_pair, model_kind, tweak_weights
from .app import OUTPUT_JSON, app, errors, fail, load_pipeline


@app.command("explain")
def explain_command(
    model: str = typer.Argument(..., help="Trained pipeline with a TWEAK or S2Net siamese_similarity pipe"),
    text_a: Optional[str] = typer.Argument(None, help="First text of a pair to explain"),
    text_b: Optional[str] = typer.Argument(None, help="Second text of the pair"),
    top: int = typer.Option(10, "--top", "-n", help="Terms to show, by absolute contribution"),
    output_json: Optional[Path] = OUTPUT_JSON,
) -> None:
    """Print a TWEAK pipe's feature weights, and the terms behind a pair's similarity.

    For a pair of texts, the terms that contribute most to their similarity (exact for TWEAK
    and S2Net: the contributions sum to the score).
    """
    with errors():
        if (text_a is None) != (text_b is None):
            fail("Give two texts to explain a pair, or none for the feature weights only")
        nlp = load_pipeline(model)
        kind = model_kind(get_similarity_pipe(nlp))
        out: Dict[str, Any] = {"model": model, "kind": kind}
        if kind == "tweak":
            weights = tweak_weights(nlp)
            out["feature_weights"] = weights
            typer.echo("TWEAK feature weights (term weight = softplus(sum of weight * feature)):")
            for name, value in weights.items():
                typer.echo(f"  {name:<16} {value:+.4f}")
        if text_a is not None and text_b is not None:
            explanation = explain_pair(nlp, text_a, text_b)
            out["pair"] = {"text_a": text_a, "text_b": text_b, **explanation.to_dict(top)}
            typer.echo(f"sim = {explanation.score:.4f}  ({kind})")
            for term, value in explanation.top(top):
                typer.echo(f"  {value:+.4f}  {term}")
            shown = len(explanation.top(top))
            others = sum(v for _, v in explanation.contributions) - sum(v for _, v in explanation.top(top))
            if len(explanation.contributions) > shown:
                typer.echo(f"  {others:+.4f}  ({len(explanation.contributions) - shown} other terms)")
            if abs(explanation.rest) > 1e-6:
                typer.echo(f"  {explanation.rest:+.4f}  (hash collisions)")
            if explanation.offset:
                typer.echo(f"  {explanation.offset:+.4f}  (rescaled cosine offset)")
        if output_json:
            write_json(out, output_json)
