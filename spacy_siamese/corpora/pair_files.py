"""Read labelled pairs from any supported format: `read_pairs` and `detect_format`."""

from functools import partial
from pathlib import Path
from typing import Callable, Dict, Generator, Iterator, List, Tuple, Union

from . import bimpm, jsonl, stackexchange, tsv, twitter_url
from .base import (
    Malformed,
    PairFormatError,
    PairItem,
    PairRecord,
    check_path,
    named_columns,
    numbered_lines,
    parse_lines,
    scaled_label,
    skip_malformed,
    warn_empty_texts,
    warn_skipped,
)

# Tab-separated with a header naming the columns (text1, text2, label); quotes are text.
# SICK (`pair_ID sentence_A sentence_B relatedness_score entailment_judgment`): score 1-5 -> (score - 1) / 4.
# MRPC (`Quality #1 ID #2 ID #1 String #2 String`, UTF-8 with a BOM): Quality 0 or 1.
SICK_COLUMNS = (("sentence_A",), ("sentence_B",), ("relatedness_score",))
MRPC_COLUMNS = (("#1 String",), ("#2 String",), ("Quality",))

# STS Benchmark (`sts-train.csv`): tab-separated despite the name, no header, these columns plus, on some
# rows, two licence/source columns; quotes are text. Score 0-5 -> score / 5; group: the source file
# (e.g. "MSRvid"), since the splits mix them differently (see `stsb_readme.txt`).
STS_COLUMNS = ("genre", "filename", "year", "id", "score", "sentence1", "sentence2")
STS_EXTRA = 2


def _has_columns(*names: str) -> Callable[[List[str]], bool]:
    """A sniffer: the fields include these column names (lower-case)."""
    return lambda fields: set(names) <= {f.strip().lower() for f in fields}


def _sts_line(line: str) -> Tuple[str, str, float, str]:
    fields = line.split("\t")
    if len(fields) not in (len(STS_COLUMNS), len(STS_COLUMNS) + STS_EXTRA):
        raise Malformed(
            f"expected {len(STS_COLUMNS)} tab-separated fields ({', '.join(STS_COLUMNS)}), optionally "
            f"followed by {STS_EXTRA} source columns; found {len(fields)}"
        )
    return fields[5], fields[6], scaled_label(fields[4], high=5.0), fields[1]


def _looks_sts(fields: List[str]) -> bool:
    try:
        _sts_line("\t".join(fields))
    except Malformed:
        return False
    return True


PAIR_FORMATS = ("tsv", "bimpm", "jsonl", "stackexchange", "sts", "sick", "mrpc", "twitter_url")
FORMATS = ("auto",) + PAIR_FORMATS
_READERS: Dict[str, Callable[[Path], Iterator[PairItem]]] = {
    tsv.NAME: tsv.read_tsv,
    bimpm.NAME: bimpm.read_bimpm,
    jsonl.NAME: jsonl.read_jsonl_pairs,
    stackexchange.NAME: stackexchange.read_stackexchange,
    "sts": lambda path: parse_lines(path, _sts_line),
    "sick": partial(named_columns, wanted=SICK_COLUMNS, low=1.0, high=5.0, what="SICK"),
    "mrpc": partial(named_columns, wanted=MRPC_COLUMNS, binary=True, what="MRPC"),
    twitter_url.NAME: twitter_url.read_twitter_url,
}
# Tried in order on the fields of the first non-blank line.
_SNIFFERS: Tuple[Tuple[str, Callable[[List[str]], bool]], ...] = (
    (tsv.NAME, tsv.looks_like),
    ("sick", _has_columns("pair_id", "sentence_a", "sentence_b", "relatedness_score")),
    ("mrpc", _has_columns("quality", "#1 string", "#2 string")),
    (stackexchange.NAME, stackexchange.looks_like),
    (bimpm.NAME, bimpm.looks_like),
    ("sts", _looks_sts),
    (jsonl.NAME, jsonl.looks_like),
)


def read_pairs(
    path: Union[str, Path], *, format: str = "auto", lenient: bool = False
) -> Generator[PairRecord, None, None]:
    """Lazily read the labelled pairs in `path` (for "twitter_url" a directory) of `format`: "auto" or one of
    PAIR_FORMATS. lenient (bool): skip malformed lines and warn once instead of raising PairFormatError."""
    if format not in FORMATS:
        raise ValueError(f"Unknown pair format {format!r}. Choose one of: {', '.join(FORMATS)}.")
    return _read(check_path(path, allow_dir=format in ("auto", "twitter_url")), format, lenient)


def detect_format(path: Union[str, Path]) -> str:
    """Guess the format of a pair file from its name or its first line."""
    loc = check_path(path, allow_dir=True)
    if loc.is_dir() or loc.name in twitter_url.FILES:
        if twitter_url.looks_like_dir(twitter_url.corpus_dir(loc)):
            return twitter_url.NAME
        raise PairFormatError(
            loc, None, f"{loc} is not a pair file nor a directory with {', '.join(twitter_url.FILES)}"
        )
    if loc.suffix.lower() in (".jsonl", ".json"):
        return jsonl.NAME
    for line in numbered_lines(loc):
        if line.error:
            raise PairFormatError(loc, line.number, line.error)
        if not line.text.strip():
            continue
        fields = line.text.split("\t")
        for name, looks_like in _SNIFFERS:
            if looks_like(fields):
                return name
        raise PairFormatError(
            loc,
            line.number,
            f"could not detect the pair format (found {len(fields)} tab-separated fields starting with "
            f"{fields[0].strip()[:40]!r}). Expected one of: tsv (header naming question1/question2 or text1/text2 or "
            "sentence1/sentence2 and is_duplicate or label), bimpm (label 0/1, text1, text2, id), stackexchange "
            "(duplicate/non-duplicate, question1, question2), jsonl (.jsonl file of objects), sts (STS-B: genre, "
            "filename, year, id, score 0-5, sentence1, sentence2), sick (SICK header), mrpc (MRPC header), "
            "twitter_url (directory with a.toks, b.toks, sim.txt). Pass format= explicitly.",
        )
    raise PairFormatError(loc, None, f"no pairs found in {loc}")


def _read(path: Path, format: str, lenient: bool) -> Generator[PairRecord, None, None]:
    if format == "auto":
        format = detect_format(path)
    skipped: List[PairFormatError] = []
    empty: List[int] = []  # lines of the pairs with an empty side, kept but reported
    n_pairs = 0
    try:
        for record in skip_malformed(_READERS[format](path), lenient, skipped):
            n_pairs += 1
            if not record.text1.strip() or not record.text2.strip():
                empty.append(record.line)
            yield record
    finally:
        warn_empty_texts(path, empty, n_pairs)
        warn_skipped(
            skipped,
            f"Skipped {len(skipped)} malformed line(s) in {path} ({format} format, lenient=True)",
            prefix="line ",
        )
    if n_pairs == 0:
        raise PairFormatError(path, None, f"no pairs found in {path}")
