"""Corpus-scale similarity: N x M matrices, a searchable index, duplicate mining and clustering
(single machine), and a Ray Data engine in `spacy_siamese.distributed` (extra `[ray]`)."""

from .dedupe import cluster_duplicates, duplicate_pairs, find_duplicates, group_pairs
from .encode import encode
from .index import SimilarityIndex
from .matrix import score_matrix, similarity_matrix
from .space import VectorSpace, predicting_head, vector_space

__all__ = [
    "SimilarityIndex",
    "VectorSpace",
    "cluster_duplicates",
    "duplicate_pairs",
    "encode",
    "find_duplicates",
    "group_pairs",
    "predicting_head",
    "score_matrix",
    "similarity_matrix",
    "vector_space",
]
