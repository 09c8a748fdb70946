"""spacy-siamese: supervised, learned similarity for spaCy pipelines."""

from . import architectures, callbacks, corpora, layers, losses, scoring, teacher  # noqa: F401  (registrations)
from .averaging import average_pipelines
from .component import SiameseSimilarity, get_lexical_weight, make_siamese_similarity, set_lexical_weight
from .corpora import DocumentFormatError, EmptyTextWarning, PairFormatError, PairRecord, read_pairs
from .hooks import LostHooksWarning, docs_from_docbin, hooked_docs, restore_hooks
from .pair_examples import make_pair_example
from .search import SimilarityIndex, cluster_duplicates, find_duplicates

__version__ = "0.1.0"

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
