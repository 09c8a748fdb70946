"""Twitter URL paraphrase corpus (Lan et al. 2017): a directory with line-aligned `a.toks`,
`b.toks` and `sim.txt` (label 0 or 1)."""

from itertools import zip_longest
from pathlib import Path
from typing import Iterator, List, Optional, Tuple

from .base import Line, Malformed, PairFormatError, PairItem, PairRecord, is_blank, numbered_lines, scaled_label

NAME = "twitter_url"
FILES = ("a.toks", "b.toks", "sim.txt")


def corpus_dir(path: Path) -> Path:
    """The directory holding the three files (`path` itself, or the parent of one of them)."""
    return path.parent if path.is_file() and path.name in FILES else path


def looks_like_dir(path: Path) -> bool:
    return path.is_dir() and all((path / name).is_file() for name in FILES)


def read_twitter_url(path: Path) -> Iterator[PairItem]:
    root = corpus_dir(path)
    missing = [name for name in FILES if not (root / name).is_file()]
    if missing:
        raise PairFormatError(root, None, f"{root} lacks {', '.join(missing)} (expected {', '.join(FILES)})")
    files = [root / name for name in FILES]
    for number, lines in enumerate(zip_longest(*(numbered_lines(f) for f in files)), 1):
        error = _problem(files, lines, number)
        if error is not None:
            yield error
            continue
        a, b, sim = (line.text for line in lines if line is not None)
        if is_blank(a) and is_blank(b) and is_blank(sim):
            continue
        empty = [f for f, text in zip(files, (a, b)) if not text.strip()]
        if empty:
            names = " and ".join(f.name for f in empty)
            yield PairFormatError(empty[0], number, f"empty line in {names}, but not in the other files of the pair")
            continue
        try:
            label = scaled_label(sim, binary=True)
        except Malformed as err:
            yield PairFormatError(files[2], number, str(err))
            continue
        yield PairRecord(a, b, label, number)


def _problem(files: List[Path], lines: Tuple[Optional[Line], ...], number: int) -> Optional[PairFormatError]:
    for file_, line in zip(files, lines):
        if line is None:
            longer = next(f.name for f, other in zip(files, lines) if other is not None)
            return PairFormatError(file_, number, f"{file_.name} ends before line {number} of {longer}")
        if line.error:
            return PairFormatError(file_, line.number, line.error)
    return None
