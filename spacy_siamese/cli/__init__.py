"""Command line: `python -m spacy_siamese COMMAND`, one command a module. Pairs: `evaluate`,
`evaluate-duplicates`, `convert`, `report`; documents: `evaluate-retrieval`; collections:
`index`, `search`, `dedupe`, `dedupe-ray`, `encode`, `calibrate`; the tokens behind a pair's
score: `explain`; the page in a browser: `serve`; pairs labelled by a teacher: `teacher-pairs`."""

import inspect

from . import (  # noqa: F401  (each module registers its command)
    calibrate,
    convert,
    dedupe,
    dedupe_ray,
    encode,
    evaluate,
    evaluate_duplicates,
    evaluate_retrieval,
    explain,
    index,
    report,
    search,
    serve,
    teacher_pairs,
)
from .app import app

# Typer's rich help lists each command with the first paragraph of its docstring and keeps that
# paragraph's line breaks: give the list the paragraph on one line.
for _command in app.registered_commands:
    if _command.short_help is None and _command.callback is not None and _command.callback.__doc__:
        _command.short_help = " ".join(inspect.cleandoc(_command.callback.__doc__).split("\n\n")[0].split())

__all__ = ["app"]
