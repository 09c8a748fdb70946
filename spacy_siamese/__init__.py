"""spacy-siamese: supervised, learned similarity for spaCy pipelines."""
from . import architectures, callbacks, layers, losses, readers, scoring  # noqa: F401  (registrations)
from .component import SiameseSimilarity, make_siamese_similarity
from .hooks import restore_hooks
from .pairs import make_pair_example

__version__ = "0.1.0"

__all__ = ["SiameseSimilarity", "make_siamese_similarity", "make_pair_example", "restore_hooks", "__version__"]
