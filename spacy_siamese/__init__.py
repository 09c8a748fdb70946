"""spacy-siamese: supervised, learned similarity for spaCy pipelines.

The public names load on first use (PEP 562), so that `import spacy_siamese` and the command
line's `--help` import no spaCy; spaCy finds the registered functions through the entry points.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "DocumentFormatError": "corpora",
    "EmptyTextWarning": "corpora",
    "LostHooksWarning": "hooks",
    "PairFormatError": "corpora",
    "PairRecord": "corpora",
    "SiameseSimilarity": "component",
    "SimilarityIndex": "search",
    "average_pipelines": "averaging",
    "cluster_duplicates": "search",
    "docs_from_docbin": "hooks",
    "find_duplicates": "search",
    "get_lexical_weight": "component",
    "hooked_docs": "hooks",
    "make_pair_example": "pair_examples",
    "make_siamese_similarity": "component",
    "read_pairs": "corpora",
    "restore_hooks": "hooks",
    "set_lexical_weight": "component",
}

if TYPE_CHECKING:
    from .averaging import average_pipelines
    from .component import SiameseSimilarity, get_lexical_weight, make_siamese_similarity, set_lexical_weight
    from .corpora import DocumentFormatError, EmptyTextWarning, PairFormatError, PairRecord, read_pairs
    from .hooks import LostHooksWarning, docs_from_docbin, hooked_docs, restore_hooks
    from .pair_examples import make_pair_example
    from .search import SimilarityIndex, cluster_duplicates, find_duplicates


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)


__all__ = [
    "DocumentFormatError",
    "EmptyTextWarning",
    "LostHooksWarning",
    "PairFormatError",
    "PairRecord",
    "SiameseSimilarity",
    "SimilarityIndex",
    "cluster_duplicates",
    "find_duplicates",
    "__version__",
    "average_pipelines",
    "docs_from_docbin",
    "get_lexical_weight",
    "hooked_docs",
    "make_pair_example",
    "make_siamese_similarity",
    "read_pairs",
    "restore_hooks",
    "set_lexical_weight",
]
