"""`index`: encode a collection and save a searchable index."""

from pathlib import Path
from typing import Optional

import typer

from .app import (
    BATCH,
    CANDIDATES_HELP,
    COLLECTION,
    DIMS,
    FIELD,
    MODEL,
    N_PROCESS,
    PRECISION,
    PROGRESS,
    TEXTS_FORMAT,
    app,
    errors,
    load_pipeline,
    read_collection,
)


@app.command("index")
def index_command(
    model: str = MODEL,
    input: Path = COLLECTION,
    output: Path = typer.Option(..., "--output", "-o", help="Directory to write the index to (replaced whole)"),
    format: str = TEXTS_FORMAT,
    field: str = FIELD,
    candidates: str = typer.Option(
        "flat",
        "--candidates",
        help=f"{CANDIDATES_HELP}. flat by default here: a search scans the index once a query, where dedupe "
        "compares every doc with every other (dedupe: auto)",
    ),
    batch_size: int = BATCH,
    n_process: int = N_PROCESS,
    precision: str = PRECISION,
    dims: Optional[int] = DIMS,
    progress: bool = PROGRESS,
) -> None:
    """Encode a collection with a trained pipeline and save a searchable index (with --precision or
    --dims, compact: a search rescores its candidates on the full vectors of their texts)."""
    from ..files import check_outputs
    from ..search import SimilarityIndex
    from ..search.compact import check_candidates
    from ..search.precision import check_precision
    from ..search.store import check_replaceable

    with errors():
        pipeline = [model] if Path(model).exists() else []  # a directory, not a package name
        check_outputs([input, *pipeline], [], output_dirs=[output])
        check_candidates(candidates)
        check_precision(precision, dims, 10**9)
        check_replaceable(output)
        collection = read_collection(input, format, field)
        nlp = load_pipeline(model)
        index = SimilarityIndex.build(
            nlp, list(collection.texts()), candidates=candidates, batch_size=batch_size, n_process=n_process,
            progress=progress, precision=precision, dims=dims,
        )  # fmt: skip
        # an absolute path, so that `search` finds the pipeline from any directory
        index.save(output, model=str(Path(model).resolve()) if Path(model).exists() else model, ids=collection.ids)
        typer.echo(f"Indexed {len(index):,} docs ({index.kind} candidates) in {output}")
