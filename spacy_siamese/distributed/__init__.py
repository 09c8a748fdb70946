"""Ray: the duplicate pairs of a collection on Ray Data (extra `spacy-siamese[ray]`, see docs/search.md)."""

from .engine import dedupe_jsonl, encode_dataset, find_duplicates_dataset, read_vectors, write_encoded
from .parquet import collect_vectors

__all__ = [
    "collect_vectors",
    "dedupe_jsonl",
    "encode_dataset",
    "find_duplicates_dataset",
    "read_vectors",
    "write_encoded",
]
