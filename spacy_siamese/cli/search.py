"""`index`, `search` and `dedupe`: collections at scale."""

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import srsly
import typer

from ..evaluation.report import (
    write_json,
)
from ..search import SimilarityIndex, duplicate_pairs, group_pairs
from ..search.index import BACKENDS, read_meta
from ..search.texts import read_texts
from .app import OUTPUT_JSON, PROGRESS, app, errors, fail, load_pipeline, require_file, write_jsonl

TEXTS_FORMAT = typer.Option("auto", "--format", "-f", help="auto (JSONL for .jsonl), text (one doc a line) or jsonl")
FIELD = typer.Option("text", "--field", help="JSONL field with the text (an 'id' field is kept)")
BACKEND = typer.Option(
    "exact", "--backend", "-b", help=f"Search backend: {', '.join(BACKENDS)} (faiss: spacy-siamese[ann])"
)
BATCH_SIZE = typer.Option(256, "--batch-size", help="Docs per batch when encoding")
N_PROCESS = typer.Option(1, "--n-process", help="Processes for encoding (nlp.pipe n_process)")


@app.command("index")
def index_command(
    model: str = typer.Argument(..., help="Trained pipeline with a siamese_similarity pipe (directory or package)"),
    texts: Path = typer.Argument(..., help="Text file (one doc a line) or JSONL with a text field"),
    output: Path = typer.Option(..., "--output", "-o", help="Directory to write the index to"),
    format: str = TEXTS_FORMAT,
    field: str = FIELD,
    backend: str = BACKEND,
    batch_size: int = BATCH_SIZE,
    n_process: int = N_PROCESS,
    progress: bool = PROGRESS,
) -> None:
    """Encode a collection with a trained pipeline and save a searchable index."""
    with errors():
        index, _, ids = build_index(model, texts, format, field, backend, batch_size, n_process, progress)
        index.save(output, model=model)
        srsly.write_jsonl(output / "ids.jsonl", ({"id": key} for key in ids))
        typer.echo(f"Indexed {len(index):,} docs ({backend}) in {output}")


@app.command("search")
def search_command(
    index_dir: Path = typer.Argument(..., help="Index directory written by `index`"),
    queries: List[str] = typer.Argument(..., help="Query texts"),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Pipeline (default: the one that built the index)"),
    k: int = typer.Option(10, "-k", help="Hits per query"),
    output_json: Optional[Path] = OUTPUT_JSON,
    progress: bool = PROGRESS,
) -> None:
    """Find the items of an index most similar to each query, with the pipeline's similarity."""
    with errors():
        meta = read_meta(index_dir)
        model = model or meta.get("model")
        if not model:
            fail(f"The index at {index_dir} does not say which pipeline built it: pass --model")
        nlp = load_pipeline(model)
        index = SimilarityIndex.load(index_dir, nlp)
        ids_path = index_dir / "ids.jsonl"
        keys = [r["id"] for r in srsly.read_jsonl(ids_path)] if ids_path.exists() else list(range(len(index)))
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


@app.command("dedupe")
def dedupe_command(
    model: str = typer.Argument(..., help="Trained pipeline with a siamese_similarity pipe (directory or package)"),
    input: Path = typer.Argument(..., help="Text file (one doc a line) or JSONL with a text field"),
    output: Path = typer.Option(..., "--output", "-o", help="JSONL of duplicate pairs (groups with --clusters)"),
    threshold: Optional[float] = typer.Option(None, "--threshold", "-t", help="Minimum score (default: the pipe's)"),
    k: int = typer.Option(10, "-k", help="Compare each doc with its k most similar others"),
    clusters: bool = typer.Option(False, "--clusters", help="Write groups of duplicates instead of pairs"),
    method: str = typer.Option("components", "--method", help="Groups: components or communities"),
    min_size: int = typer.Option(2, "--min-size", help="Smallest group to write"),
    format: str = TEXTS_FORMAT,
    field: str = FIELD,
    backend: str = BACKEND,
    batch_size: int = BATCH_SIZE,
    n_process: int = N_PROCESS,
    progress: bool = PROGRESS,
) -> None:
    """Find the duplicate pairs (or groups) of a collection with a trained pipeline."""
    with errors():
        index, texts, ids = build_index(model, input, format, field, backend, batch_size, n_process, progress)
        pairs = duplicate_pairs(index, threshold=threshold, k=k, progress=progress)
        if clusters:
            groups = group_pairs(pairs, len(texts), method=method, min_size=min_size)
            rows: List[Dict[str, Any]] = [
                {"group": g, "size": len(members), "members": [{"id": ids[i], "text": texts[i]} for i in members]}
                for g, members in enumerate(groups)
            ]
        else:
            rows = [
                {"id1": ids[i], "id2": ids[j], "score": score, "text1": texts[i], "text2": texts[j]}
                for i, j, score in pairs
            ]
        write_jsonl(output, rows)
        what = f"{len(rows):,} groups" if clusters else f"{len(rows):,} duplicate pairs"
        typer.echo(f"Wrote {what} among {len(texts):,} docs to {output}")


def build_index(
    model: str, path: Path, format: str, field: str, backend: str, batch_size: int, n_process: int, progress: bool
) -> Tuple[SimilarityIndex, List[str], List[Any]]:
    """The index of a text or JSONL collection, its texts and its ids."""
    require_file(path)
    texts, ids = read_texts(path, format=format, field=field)
    nlp = load_pipeline(model)
    index = SimilarityIndex.build(
        nlp, texts, backend=backend, batch_size=batch_size, n_process=n_process, progress=progress
    )
    return index, texts, ids
