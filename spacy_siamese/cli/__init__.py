"""Command line: `python -m spacy_siamese COMMAND`, one command a module. Pairs: `evaluate`,
`evaluate-duplicates`, `convert`, `report`; documents: `evaluate-retrieval`; collections:
`index`, `search`, `dedupe`, `dedupe-ray`; a model's term weights and a pair's terms: `explain`."""

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
)
from .app import app

__all__ = ["app"]
