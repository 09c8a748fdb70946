"""Distil a sentence-transformers model into a model2vec static model (Minish Lab's `model2vec.distill`):
the table a static student starts from (`StaticEncoder.v2`'s `table`, as `--paths.table`).

The output directory is written whole when the distillation has finished; an existing directory
that is not a model2vec model is refused.

Usage:
    python scripts/static_table.py sentence-transformers/all-MiniLM-L6-v2 training/static_table
"""

from pathlib import Path

import typer

from spacy_siamese.files import PathConflictError, atomic_directory

MODEL2VEC = ("a model2vec model directory", lambda names: {"config.json", "model.safetensors"} <= set(names))


def main(
    base: str = typer.Argument(..., help="sentence-transformers model name or directory to distil"),
    output: Path = typer.Argument(..., help="Directory of the model2vec model (new, or one written before)"),
    pca_dims: int = typer.Option(256, "--pca-dims", help="Width of the table (the student's `width`)"),
) -> None:
    try:
        from model2vec.distill import distill
    except ImportError as err:
        raise SystemExit(
            f"Error: distilling needs model2vec's distiller: pip install 'spacy-siamese[teacher]' ({err})"
        ) from None
    try:
        with atomic_directory(output, kind=MODEL2VEC) as scratch:
            distill(base, pca_dims=pca_dims).save_pretrained(scratch)
    except PathConflictError as err:
        raise SystemExit(f"Error: {err}") from None
    except (OSError, ValueError) as err:  # no such model, or not a sentence-transformers model
        raise SystemExit(f"Error: cannot distil {base}: {err}") from None
    typer.echo(f"{base} distilled into {output} ({pca_dims} dimensions)")


if __name__ == "__main__":
    typer.run(main)
