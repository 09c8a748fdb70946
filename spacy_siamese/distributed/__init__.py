"""Ray: the duplicate pairs of a collection on Ray Data (extra `spacy-siamese[ray]`, see docs/search.md).

- `engine`: encode a Ray Dataset on an actor pool and find its duplicates (`dedupe_jsonl`, the
  `dedupe-ray` command's work).
- `parquet`: the encoded vectors as Parquet files, read back by id.
- `ray_local`: a local Ray that ends with the driver that started it, even a killed one.
"""

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
