"""`search`: the items of a saved index most similar to each query."""

from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

from .app import OUTPUT_JSON, PROGRESS, app, at_least, errors, fail, load_pipeline


@app.command("search")
def search_command(
    index_dir: Path = typer.Argument(..., help="Index directory written by `index` (or a `dedupe` work dir)"),
    queries: List[str] = typer.Argument(..., help="Query texts"),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Pipeline (default: the one that built the index)"),
    k: int = typer.Option(10, "--top-k", "-k", callback=at_least(1), help="Hits per query (at most the index's size)"),
    output_json: Optional[Path] = OUTPUT_JSON,
    progress: bool = PROGRESS,
) -> None:
    """Find the items of an index most similar to each query, with the pipeline's similarity."""
    from ..evaluation.report import write_json
    from ..files import check_outputs
    from ..search import SimilarityIndex
    from ..search.index import read_meta

    with errors():
        meta = read_meta(index_dir)
        model = model or meta.get("model")
        if not model:
            fail(f"The index at {index_dir} does not say which pipeline built it: pass --model")
        check_outputs([index_dir, model], [output_json])
        nlp = load_pipeline(model)
        index = SimilarityIndex.load(index_dir, nlp)
        keys = index.ids if index.ids is not None else list(range(len(index)))
        hits = index.search(queries, k=k, progress=progress)
        results: List[Dict[str, Any]] = []
        for query, row in zip(queries, hits):
            typer.echo(f"Query: {query}")
            found = []
            for rank, (i, score) in enumerate(row, start=1):
                text = index.texts[i] if index.texts is not None else ""
                typer.echo(f"  {rank:>3}  {score:.4f}  {keys[i]}  {text}")
                found.append({"id": keys[i], "score": score, "text": text})
            results.append({"query": query, "hits": found})
        if output_json:
            write_json({"index": str(index_dir), "k": k, "results": results}, output_json)
