"""The error exits shared by convert.py and convert_documents.py: one `Error: ...` message
that says what to do, and exit code 1."""

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, NoReturn

import typer

from spacy_siamese.corpora import PairFormatError


def fail(message: str) -> NoReturn:
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(1)


def require_sources(sources: Path, assets_step: str) -> None:
    """Stop unless the assets step has written `sources`."""
    if not sources.is_file():
        fail(f"{sources} not found. Run the assets step first: spacy project run {assets_step}")


def require_output_dir(output_dir: Path) -> None:
    """Stop unless `output_dir` is a directory or can be made one."""
    for path in (output_dir, *output_dir.parents):
        if path.exists() and not path.is_dir():
            fail(f"{path} is a file: the converted files go in a directory, {output_dir}")


@contextmanager
def exit_on_error(name: str, records: str, assets_step: str) -> Iterator[None]:
    """Exit with a message on a malformed or empty dataset or any other reading error.
    `records` names what is read, e.g. "pair file" or "reuters collection"."""
    refetch = f"re-fetch it (delete it and run `spacy project run {assets_step}`)"
    try:
        yield
    except PairFormatError as err:  # DocumentFormatError is one too
        if err.line is None and records == "pair file":
            fail(f"empty dataset: {err.reason}. The file has no labelled pairs; {refetch} or fix the data source.")
        fail(f"malformed {records}: {err}\nFix or remove that record, or {refetch}, then re-run.")
    except (FileNotFoundError, KeyError, ValueError) as err:
        fail(f"cannot convert {name}: {err}")
