"""Microsoft Research Paraphrase Corpus (`msr_paraphrase_train.txt`): UTF-8 with a BOM,
tab-separated with a header `Quality #1 ID #2 ID #1 String #2 String` (columns found by
name). Quality is the label, 0 or 1. Quotes are text (no CSV quoting)."""

from pathlib import Path
from typing import Iterator, List

from .base import PairItem, named_columns

NAME = "mrpc"
WANTED = (("#1 String",), ("#2 String",), ("Quality",))


def read_mrpc(path: Path) -> Iterator[PairItem]:
    return named_columns(path, WANTED, binary=True, what="MRPC")


def looks_like(fields: List[str]) -> bool:
    lower = {f.strip().lower() for f in fields}
    return {"quality", "#1 string", "#2 string"} <= lower
