"""SICK (`SICK_train.txt`, `SICK_trial.txt`): tab-separated with a header
`pair_ID sentence_A sentence_B relatedness_score entailment_judgment` (columns found by
name). The 1-5 relatedness score becomes a label in [0, 1] ((score - 1) / 4)."""

from pathlib import Path
from typing import Iterator, List

from .base import PairItem, named_columns

NAME = "sick"
WANTED = (("sentence_A",), ("sentence_B",), ("relatedness_score",))


def read_sick(path: Path) -> Iterator[PairItem]:
    return named_columns(path, WANTED, low=1.0, high=5.0, what="SICK")


def looks_like(fields: List[str]) -> bool:
    lower = {f.strip().lower() for f in fields}
    return {"pair_id", "sentence_a", "sentence_b"} <= lower and "relatedness_score" in lower
