"""spacy-siamese: supervised, learned similarity for spaCy pipelines.

The public names load on first use (PEP 562), so that `import spacy_siamese` and the command
line's `--help` import no spaCy; spaCy finds the registered functions through the entry points."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "averaging": ["average_pipelines"],
    "component": ["SiameseSimilarity", "get_lexical_weight", "make_siamese_similarity", "set_lexical_weight"],
    "corpora": ["DocumentFormatError", "EmptyTextWarning", "PairFormatError", "PairRecord", "read_pairs"],
    "hooks": ["LostHooksWarning", "docs_from_docbin", "hooked_docs", "restore_hooks"],
    "pair_examples": ["make_pair_example"],
    "search": ["SimilarityIndex", "cluster_duplicates", "find_duplicates"],
}
_MODULES = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = ["__version__", *_MODULES]

if TYPE_CHECKING:  # the same names, for type checkers
    from .averaging import average_pipelines  # noqa: F401
    from .component import SiameseSimilarity, get_lexical_weight, make_siamese_similarity, set_lexical_weight  # noqa: F401
    from .corpora import DocumentFormatError, EmptyTextWarning, PairFormatError, PairRecord, read_pairs  # noqa: F401
    from .hooks import LostHooksWarning, docs_from_docbin, hooked_docs, restore_hooks  # noqa: F401
    from .pair_examples import make_pair_example  # noqa: F401
    from .search import SimilarityIndex, cluster_duplicates, find_duplicates  # noqa: F401


def __getattr__(name: str) -> Any:
    if name not in _MODULES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_MODULES[name]}", __name__), name)
