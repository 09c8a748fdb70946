"""Corpus-scale similarity: N x M matrices, a searchable index, duplicate mining and clustering
(single machine), and a Ray Data engine in `spacy_siamese.distributed` (extra `[ray]`)."""

from ..space import VectorSpace, vector_space
from .corpus import CorpusIndex
from .dedupe import LargeGroupWarning, cluster_duplicates, find_duplicates, group_pairs
from .encode import encode_with_texts
from .index import SimilarityIndex
from .resumable import encode_collection
from .store import VectorStore

__all__ = [
    "SimilarityIndex",
    "VectorSpace",
    "cluster_duplicates",
    "CorpusIndex",
    "LargeGroupWarning",
    "VectorStore",
    "encode_collection",
    "encode_with_texts",
    "find_duplicates",
    "group_pairs",
    "vector_space",
]
