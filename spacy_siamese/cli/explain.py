"""`explain`: which tokens of two texts make their score, and a TWEAK pipe's feature weights."""

from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Optional

import typer

from ..defaults import EXPLAIN_METHODS as METHODS
from ..defaults import SAMPLES
from .app import OUTPUT_JSON, app, errors, fail, load_pipeline

if TYPE_CHECKING:
    from ..explain import PairExplanation


@app.command("explain")
def explain_command(
    model: str = typer.Argument(..., help="Trained pipeline with a siamese_similarity pipe"),
    text_a: Optional[str] = typer.Argument(None, help="First text of a pair to explain"),
    text_b: Optional[str] = typer.Argument(None, help="Second text of the pair"),
    method: str = typer.Option(
        "auto", "--method", help=f"One of {', '.join(METHODS)}: auto = exact for TWEAK/S2Net, else shapley"
    ),
    samples: int = typer.Option(SAMPLES, "--samples", help="Shapley permutations per text of more than 8 tokens"),
    top: int = typer.Option(10, "--top", min=0, help="Tokens (and terms) to show per text, by absolute contribution"),
    output_json: Optional[Path] = OUTPUT_JSON,
) -> None:
    """Print the tokens behind a pair's similarity, and a TWEAK pipe's feature weights.

    Each token's contribution: exact term contributions for TWEAK and S2Net; Shapley values for
    every other encoder (a text's values sum to its score minus the score with that text
    emptied). Without texts, a TWEAK pipe's learned feature weights."""
    from ..component import get_similarity_pipe
    from ..evaluation.report import write_json
    from ..explain import explain_pair, model_kind, tweak_weights
    from ..files import check_outputs

    with errors():
        if (text_a is None) != (text_b is None):
            fail("Give two texts to explain a pair, or none for a TWEAK pipe's feature weights")
        if method not in METHODS:
            fail(f"--method must be one of {', '.join(METHODS)}, not {method!r}")
        check_outputs([model], [output_json])
        nlp = load_pipeline(model)
        kind = model_kind(get_similarity_pipe(nlp, initialized=True))
        out: Dict[str, Any] = {"model": model, "kind": kind}
        if text_a is None and kind != "tweak":
            fail(f"Give two texts to explain: only a TWEAK pipe has feature weights, this one is {kind!r}")
        if kind == "tweak":
            weights = tweak_weights(nlp)
            out["feature_weights"] = weights
            typer.echo("TWEAK feature weights (term weight = softplus(sum of weight * feature)):")
            for name, value in weights.items():
                typer.echo(f"  {name:<16} {value:+.4f}")
        if text_a is not None and text_b is not None:
            explanation = explain_pair(nlp, text_a, text_b, method=method, samples=samples)
            out["pair"] = explanation.to_dict(top)
            show(explanation, top)
        if output_json:
            write_json(out, output_json)


def show(ex: "PairExplanation", top: int) -> None:
    from ..explain import EXACT_SHAPLEY_TOKENS

    how = {"exact": "exact term contributions", "shapley": "Shapley values", "occlusion": "leave-one-token-out"}
    sampled = f", {ex.samples} permutations for a text of over {EXACT_SHAPLEY_TOKENS} tokens" if ex.samples else ""
    verdict = "duplicate" if ex.duplicate else "not a duplicate"
    typer.echo(
        f"sim = {ex.score:.4f}, threshold = {ex.threshold:.4f}: {verdict}  ({ex.kind}; {how[ex.method]}{sampled})"
    )
    for label, tokens, reference in (("a", ex.tokens_a, ex.reference_a), ("b", ex.tokens_b, ex.reference_b)):
        total = sum(t.contribution for t in tokens)
        inline = "".join(f"{t.text}[{t.contribution:+.2f}]{t.ws}" for t in tokens)
        typer.echo(f"text {label}: {inline}")
        what = "the sum over its tokens" if ex.method != "occlusion" else "the sum of the leave-one-out falls"
        typer.echo(f"  score without text {label}: {reference:.4f}; {what}: {total:+.4f}")
        for token in sorted(tokens, key=lambda t: -abs(t.contribution))[:top]:
            typer.echo(f"  {token.contribution:+.4f}  {token.text}")
    if ex.terms:
        part = "terms" if ex.method == "exact" else "lexical part's terms (exact)"
        typer.echo(f"{part}:")
        shown = ex.top(top)
        for term, value in shown:
            typer.echo(f"  {value:+.4f}  {term}")
        if len(ex.terms) > len(shown):
            others = sum(v for _, v in ex.terms) - sum(v for _, v in shown)
            typer.echo(f"  {others:+.4f}  ({len(ex.terms) - len(shown)} other terms)")
    if abs(ex.rest) > 1e-6:
        typer.echo(f"  {ex.rest:+.4f}  (hash collisions and clipping)")
    if ex.offset:
        typer.echo(f"  {ex.offset:+.4f}  (rescaled cosine offset)")
