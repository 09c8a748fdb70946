"""`encode`: the learned vectors of a collection as a .npy array."""

from pathlib import Path

import typer

from .app import (
    BATCH,
    COLLECTION,
    FIELD,
    MODEL,
    N_PROCESS,
    PROGRESS,
    TEXTS_FORMAT,
    app,
    errors,
    fail,
    load_pipeline,
    read_collection,
)


@app.command("encode")
def encode_command(
    model: str = MODEL,
    input: Path = COLLECTION,
    output: Path = typer.Option(..., "--output", "-o", help="The vectors, float32 (N, width), as .npy"),
    format: str = TEXTS_FORMAT,
    field: str = FIELD,
    batch_size: int = BATCH,
    n_process: int = N_PROCESS,
    progress: bool = PROGRESS,
) -> None:
    """Write the pipe's learned vector of every text of a collection (`pipe.encode`), row i for
    the text with position i; the ids go beside it as OUTPUT.ids.json."""
    import numpy
    import srsly

    from ..component import get_similarity_pipe
    from ..files import atomic_write, check_outputs

    with errors():
        if output.suffix != ".npy":  # numpy.save would add .npy: the vectors would not be at OUTPUT
            fail(f"The output must be a .npy file, got {output}")
        check_outputs([input, model], [output, ids_path(output)])
        collection = read_collection(input, format, field)
        nlp = load_pipeline(model)
        pipe = get_similarity_pipe(nlp)
        vectors = pipe.encode(collection.texts(), batch_size=batch_size, n_process=n_process, progress=progress)
        output.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(output) as file:  # whole or not at all
            numpy.save(file, vectors, allow_pickle=False)
        with atomic_write(ids_path(output)) as file:
            file.write((srsly.json_dumps(collection.ids, indent=2) + "\n").encode("utf8"))
        typer.echo(f"Wrote {vectors.shape[0]:,} x {vectors.shape[1]} vectors to {output}")


def ids_path(output: Path) -> Path:
    """Where `encode` writes the ids of the vectors at `output`."""
    return output.with_name(output.name + ".ids.json")
