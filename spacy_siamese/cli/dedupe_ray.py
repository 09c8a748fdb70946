"""`dedupe-ray`: the duplicate pairs of a JSONL collection on Ray Data (extra `spacy-siamese[ray]`)."""

from pathlib import Path
from typing import Dict, Optional

import typer

from .app import (
    CANDIDATES_HELP,
    N_CANDIDATES,
    PROGRESS,
    THRESHOLD,
    K,
    app,
    at_least,
    dedupe_limit,
    errors,
    load_pipeline,
    require_file,
    versions,
)


@app.command("dedupe-ray")
def dedupe_ray_command(
    model: str = typer.Argument(..., help="Trained pipeline directory, readable on every node"),
    input: str = typer.Argument(..., help="JSONL file or directory (top level) with 'text' and unique 'id' fields"),
    vectors_output: str = typer.Option(..., "--vectors-output", help="Directory to write the Parquet vectors to"),
    output: Path = typer.Option(..., "--output", "-o", help="JSONL file of duplicate pairs"),
    threshold: Optional[float] = THRESHOLD,
    k: int = K,
    candidates: str = typer.Option("auto", "--candidates", help=CANDIDATES_HELP),
    n_candidates: int = N_CANDIDATES,
    workers: int = typer.Option(2, "--workers", callback=at_least(1), help="Ray actors that encode and search"),
    stats_json: Optional[Path] = typer.Option(None, "--stats-json", help="Write stage timings and settings as JSON"),
    progress: bool = PROGRESS,
) -> None:
    r"""Find the duplicate pairs of a JSONL collection on Ray Data (pip install 'spacy-siamese\[ray]').

    Encodes the collection on an actor pool, writes its vectors as Parquet to --vectors-output (a local
    directory whole or not at all) and its duplicate pairs by 'id' as JSONL: the pairs of `dedupe`.
    Set RAY_ADDRESS to use a running cluster; a Ray started here ends with the command, even a killed one."""
    import srsly

    from ..distributed import dedupe_jsonl
    from ..files import check_outputs, write_jsonl
    from ..util import import_extra, is_uri

    with errors():
        local = not is_uri(input)  # Ray reads and writes remote paths itself
        require_file(Path(input) if local else None)
        inputs = [model, *([input] if local else [])]
        check_outputs(inputs, [output, stats_json], output_dirs=[] if is_uri(vectors_output) else [vectors_output])
        import_extra("ray", "ray", "The Ray engine")  # first: without it nothing else matters
        nlp = load_pipeline(model)  # a clear error now, not in the actors
        threshold = dedupe_limit(nlp, threshold)  # the value used, for the stats too
        stages: Dict[str, float] = {}
        pairs = dedupe_jsonl(
            model,
            input,
            vectors_output,
            threshold=threshold,
            k=k,
            candidates=candidates,
            c=n_candidates,
            workers=workers,
            progress=progress,
            nlp=nlp,
            stages=stages,
        )
        write_jsonl(output, [{"id1": a, "id2": b, "score": score} for a, b, score in pairs])
        typer.echo(f"Wrote {len(pairs):,} duplicate pairs to {output}")
        typer.echo("Stages: " + ", ".join(f"{name} {seconds:.1f} s" for name, seconds in stages.items()))
        if stats_json is not None:
            settings = {"workers": workers, "k": k, "candidates": candidates, "c": n_candidates, "threshold": threshold}
            stats = {"n_pairs": len(pairs), "stages_s": {n: round(s, 2) for n, s in stages.items()}}
            srsly.write_json(stats_json, {**stats, "settings": settings, "versions": versions()})
