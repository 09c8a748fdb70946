"""Read labelled pairs from any supported format: `read_pairs` and `detect_format`."""

from pathlib import Path
from typing import Callable, Dict, Generator, Iterator, List, Tuple, Union

from . import bimpm, jsonl, mrpc, sick, stackexchange, sts, tsv, twitter_url
from .base import (
    PairFormatError,
    PairItem,
    PairRecord,
    check_path,
    numbered_lines,
    skip_malformed,
    warn_empty_texts,
    warn_skipped,
)

PAIR_FORMATS = ("tsv", "bimpm", "jsonl", "stackexchange", "sts", "sick", "mrpc", "twitter_url")
_READERS: Dict[str, Callable[[Path], Iterator[PairItem]]] = {
    tsv.NAME: tsv.read_tsv,
    bimpm.NAME: bimpm.read_bimpm,
    jsonl.NAME: jsonl.read_jsonl_pairs,
    stackexchange.NAME: stackexchange.read_stackexchange,
    sts.NAME: sts.read_sts,
    sick.NAME: sick.read_sick,
    mrpc.NAME: mrpc.read_mrpc,
    twitter_url.NAME: twitter_url.read_twitter_url,
}
# Tried in order on the fields of the first non-blank line.
_SNIFFERS: Tuple[Tuple[str, Callable[[List[str]], bool]], ...] = tuple(
    (module.NAME, module.looks_like) for module in (tsv, sick, mrpc, stackexchange, bimpm, sts, jsonl)
)


def read_pairs(
    path: Union[str, Path], *, format: str = "auto", lenient: bool = False
) -> Generator[PairRecord, None, None]:
    """Lazily read the labelled pairs in `path` (a file; for "twitter_url" its directory).

    format (str): "auto" or one of PAIR_FORMATS.
    lenient (bool): skip malformed lines and warn once at the end, instead of
        raising a PairFormatError at the first one. Header problems always raise.
    """
    if format not in ("auto",) + PAIR_FORMATS:
        raise ValueError(f"Unknown pair format {format!r}. Choose one of: {', '.join(('auto',) + PAIR_FORMATS)}.")
    loc = check_path(path, allow_dir=format in ("auto", "twitter_url"))
    return _read(loc, format, lenient)


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
            f"could not detect the pair format (found {len(fields)} tab-separated fields "
            f"starting with {fields[0].strip()[:40]!r}). Expected one of: tsv (header naming "
            "question1/question2 or text1/text2 or sentence1/sentence2 and is_duplicate or "
            "label), bimpm (label 0/1, text1, text2, id), stackexchange (duplicate/"
            "non-duplicate, question1, question2), jsonl (.jsonl file of objects), sts (STS-B: "
            "genre, filename, year, id, score 0-5, sentence1, sentence2), sick (SICK header), "
            "mrpc (MRPC header), twitter_url (directory with a.toks, b.toks, sim.txt). "
            "Pass format= explicitly.",
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
        warn_empty_texts(path, empty, n_pairs, stacklevel=2)
        warn_skipped(
            skipped,
            f"Skipped {len(skipped)} malformed line(s) in {path} ({format} format, lenient=True)",
            prefix="line ",
            stacklevel=2,
        )
    if n_pairs == 0:
        raise PairFormatError(path, None, f"no pairs found in {path}")
