"""`index`: encode a collection and save a searchable index."""

from pathlib import Path

import srsly
import typer

from .app import (
    BACKEND,
    BATCH_SIZE,
    COLLECTION,
    FIELD,
    MODEL,
    N_PROCESS,
    PROGRESS,
    TEXTS_FORMAT,
    app,
    build_index,
    errors,
)


@app.command("index")
def index_command(
    model: str = MODEL,
    input: Path = COLLECTION,
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
        index, _, ids = build_index(model, input, format, field, backend, batch_size, n_process, progress)
        # an absolute path, so that `search` finds the pipeline from any directory
        index.save(output, model=str(Path(model).resolve()) if Path(model).exists() else model)
        srsly.write_jsonl(output / "ids.jsonl", ({"id": key} for key in ids))
        typer.echo(f"Indexed {len(index):,} docs ({backend}) in {output}")
