"""Command line: `python -m spacy_siamese evaluate | evaluate-retrieval | convert | report`, and
`index | search | dedupe` for collections, `explain` for a model's term weights and a pair's terms."""

from . import evaluate, explain, search  # noqa: F401  (registers the commands)
from .app import app

__all__ = ["app"]
