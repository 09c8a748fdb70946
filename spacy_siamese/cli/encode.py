"""`encode`: the learned vectors of a collection as a .npy array."""

from pathlib import Path
from typing import Optional

import typer

from .app import (
    BATCH,
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
    precision: str = PRECISION,
    dims: Optional[int] = DIMS,
    progress: bool = PROGRESS,
) -> None:
    """Write the pipe's learned vector of every text of a collection (`pipe.encode`), row i for
    the text with position i; the ids go beside it as OUTPUT.ids.json.

    With --precision or --dims, OUTPUT holds the compact learned columns
    (`spacy_siamese.search.precision.layout`), a hybrid's lexical columns go exactly to
    OUTPUT.lexical.npz and the settings to OUTPUT.precision.json:
    `spacy_siamese.search.precision.load_vectors(OUTPUT)` reads the float32 vectors back."""
    import numpy
    import srsly

    from ..component import get_similarity_pipe
    from ..files import atomic_write, check_outputs
    from ..search.precision import check_precision, save_vectors
    from ..space import vector_space

    with errors():
        if output.suffix != ".npy":  # numpy.save would add .npy: the vectors would not be at OUTPUT
            fail(f"The output must be a .npy file, got {output}")
        compact = precision != "float32" or dims is not None
        ids = output.with_name(output.name + ".ids.json")
        beside = [output.with_name(output.name + end) for end in (".lexical.npz", ".precision.json")] if compact else []
        check_outputs([input, model], [output, ids, *beside])
        check_precision(precision, dims, 10**9)
        collection = read_collection(input, format, field)
        nlp = load_pipeline(model)
        pipe = get_similarity_pipe(nlp)
        lexical_width = vector_space(pipe.comparison).lexical_width
        check_precision(precision, dims, pipe.encoder.get_dim("nO") - lexical_width)
        vectors = pipe.encode(collection.texts(), batch_size=batch_size, n_process=n_process, progress=progress)
        output.parent.mkdir(parents=True, exist_ok=True)
        if compact:
            save_vectors(output, vectors, precision, dims, lexical_width)
        else:
            with atomic_write(output) as file:  # whole or not at all
                numpy.save(file, vectors, allow_pickle=False)
        with atomic_write(ids) as file:
            file.write((srsly.json_dumps(collection.ids, indent=2) + "\n").encode("utf8"))
        typer.echo(f"Wrote {vectors.shape[0]:,} x {vectors.shape[1]} vectors to {output}")
