"""Command line: `python -m spacy_siamese evaluate | evaluate-retrieval | convert | report`, and
`index | search | dedupe` for collections."""

from . import evaluate, search  # noqa: F401  (registers the commands)
from .app import app

__all__ = ["app"]
