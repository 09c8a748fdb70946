"""STS Benchmark (`sts-train.csv`, `sts-dev.csv`): tab-separated despite the name, no
header, `genre filename year id score sentence1 sentence2` plus, on some rows, two
licence/source columns. Quotes are text (no CSV quoting). The 0-5 similarity score
becomes a label in [0, 1] (score / 5); the source file (e.g. "MSRvid", "answers-forums")
becomes the record's group, since the splits mix them differently (see `stsb_readme.txt`)."""

from pathlib import Path
from typing import Iterator, List, Tuple

from .base import Malformed, PairItem, parse_lines, scaled_label

NAME = "sts"
COLUMNS = ("genre", "filename", "year", "id", "score", "sentence1", "sentence2")
N_EXTRA = 2  # optional licence/source columns


def read_sts(path: Path) -> Iterator[PairItem]:
    return parse_lines(path, _parse_line)


def looks_like(fields: List[str]) -> bool:
    if len(fields) not in (len(COLUMNS), len(COLUMNS) + N_EXTRA):
        return False
    try:
        scaled_label(fields[4], high=5.0)
    except Malformed:
        return False
    return True


def _parse_line(line: str) -> Tuple[str, str, float, str]:
    fields = line.split("\t")
    if len(fields) not in (len(COLUMNS), len(COLUMNS) + N_EXTRA):
        raise Malformed(
            f"expected {len(COLUMNS)} tab-separated fields ({', '.join(COLUMNS)}), optionally "
            f"followed by {N_EXTRA} source columns; found {len(fields)}"
        )
    return fields[5], fields[6], scaled_label(fields[4], high=5.0), fields[1]
