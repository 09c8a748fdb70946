"""Distil a sentence-transformers model into a model2vec static model (Minish Lab's `model2vec.distill`):
the table a static student starts from (`StaticEncoder.v2`'s `table`, as `--paths.table`).

The output directory is written whole when the distillation has finished, with a marker file; an
existing directory without that marker (not this script's output) is refused.

Usage:
    python scripts/static_table.py sentence-transformers/all-MiniLM-L6-v2 training/static_table
"""

from pathlib import Path

import srsly
import typer

from spacy_siamese.files import PathConflictError, atomic_directory

MARKER = "spacy_siamese_table.json"
MODEL2VEC = ("a model2vec model directory written by scripts/static_table.py", lambda names: MARKER in names)


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
            srsly.write_json(scratch / MARKER, {"base": base, "pca_dims": pca_dims})
    except PathConflictError as err:
        raise SystemExit(f"Error: {err}") from None
    except (OSError, ValueError) as err:  # no such model, or not a sentence-transformers model
        raise SystemExit(f"Error: cannot distil {base}: {err}") from None
    typer.echo(f"{base} distilled into {output} ({pca_dims} dimensions)")


if __name__ == "__main__":
    typer.run(main)
