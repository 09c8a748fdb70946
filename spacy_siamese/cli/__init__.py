"""Command line: `python -m spacy_siamese COMMAND`, one command a module. Pairs: `evaluate`,
`evaluate-duplicates`, `convert`, `report`; documents: `evaluate-retrieval`; collections:
`index`, `search`, `dedupe`, `dedupe-ray`, `encode`, `calibrate`; the tokens behind a pair's
score: `explain`; the page in a browser: `serve`; pairs labelled by a teacher: `teacher-pairs`."""

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

__all__ = ["app"]
