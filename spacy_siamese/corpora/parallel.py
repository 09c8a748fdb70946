"""Parallel text: line-aligned translation files (`train.en`, `train.es`, optionally
`train.source`) or JSON lines (`{"en", "es"}` or `{"text1", "text2", "label"}`), their dev split
and pseudo-documents. A problem is a `PairFormatError` naming the file and the line."""

import random
import warnings
from itertools import groupby
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

import srsly
from spacy.language import Language
from spacy.training import Example
from spacy.util import registry

from ..pair_examples import make_pair_example
from .base import (
    Line,
    Malformed,
    PairFormatError,
    check_label,
    check_path,
    first_lines,
    json_object,
    json_string,
    json_type,
    numbered_lines,
)

PathLike = Union[str, Path]
SENTENCE_PREFIX = "tatoeba"  # origins of independent sentences; the others are in document order
DEV_ORIGINS = ("newstest2012",)
DEV_SENTENCES = 1000
WINDOW = 5  # lines of one pseudo-document
# A pair whose longer text has more than LENGTH_RATIO times the characters of the shorter, plus
# LENGTH_SLACK (short texts translate loosely), is reported by `read_parallel` as a likely misalignment.
LENGTH_RATIO = 3.0
LENGTH_SLACK = 10


class ParallelPair(NamedTuple):
    """One translation pair, its 1-based line, origin, group and label (1: a translation)."""

    text_a: str
    text_b: str
    line: int
    origin: str = ""
    group: str = ""
    label: float = 1.0


def read_parallel(path_a: PathLike, path_b: PathLike, *, origins: Optional[PathLike] = None) -> List[ParallelPair]:
    """The pairs of two line-aligned files (origins from a third, if given). Unequal line counts
    or a line empty on one side only raise; pairs of very different lengths warn once."""
    paths = [Path(path_a), Path(path_b)] + ([Path(origins)] if origins is not None else [])
    columns = [list(_decoded_lines(path)) for path in paths]
    pairs, far = [], []
    for n, row in enumerate(zip(*columns), 1):
        empty = [not line.text.strip() for line in row]
        if all(empty):
            continue
        if any(empty):
            blank = ", ".join(str(p) for p, e in zip(paths, empty) if e)
            full = ", ".join(str(p) for p, e in zip(paths, empty) if not e)
            raise PairFormatError(
                paths[empty.index(True)],
                n,
                f"empty line in {blank}, but not in {full}: "
                "line-aligned parallel files must have one text of a pair on each line",
            )
        a, b = row[0].text, row[1].text
        if max(len(a), len(b)) > LENGTH_RATIO * min(len(a), len(b)) + LENGTH_SLACK:
            far.append(n)
        pairs.append(ParallelPair(a, b, n, row[2].text if len(row) > 2 else ""))
    counts = [len(lines) for lines in columns]
    if len(set(counts)) > 1:
        short = counts.index(min(counts))
        longest = counts.index(max(counts))
        raise PairFormatError(
            paths[short],
            counts[short] + 1,
            f"the file ends after {counts[short]:,} lines, but {paths[longest]} has {counts[longest]:,} lines: "
            "line-aligned parallel files must have one line per pair",
        )
    if far:
        warnings.warn(
            f"{len(far):,} of the {len(pairs):,} pairs of {paths[0]} and {paths[1]} differ in length by more than "
            f"{LENGTH_RATIO:g} times (line {first_lines(far)}): check that the files are aligned there.",
            UserWarning,
            stacklevel=2,
        )
    return pairs


def read_parallel_jsonl(path: PathLike, langs: Tuple[str, str]) -> List[ParallelPair]:
    """The pairs of a JSON lines file of `{lang: text}` objects (`langs`, optionally "origin" and
    "group") or of pair objects; a row with both kinds of keys is an error."""
    if langs[0] == langs[1]:
        raise ValueError(f"Two different languages are needed, got {langs[0]!r} twice.")
    path = Path(path)
    pairs = []
    for line in _decoded_lines(path):
        if not line.text.strip():
            continue
        try:
            obj = json_object(line.text)
            keys = _text_keys(obj, langs)
            a, b = (_text(obj, key) for key in keys)
            origin, group = (json_string(obj, key, required=False) for key in ("origin", "group"))
            label = _label(obj) if keys[0] == "text1" else 1.0
        except Malformed as err:
            raise PairFormatError(path, line.number, str(err)) from None
        pairs.append(ParallelPair(a, b, line.number, origin, group, label))
    if not pairs:
        raise PairFormatError(path, None, f"no pairs found in {path}")
    return pairs


def write_parallel_jsonl(pairs: Iterable[ParallelPair], path: PathLike, langs: Tuple[str, str]) -> None:
    """Write pairs as `read_parallel_jsonl` reads them (origin and group included)."""
    rows = ({langs[0]: p.text_a, langs[1]: p.text_b, "origin": p.origin, "group": p.group} for p in pairs)
    srsly.write_jsonl(path, rows)


def split_parallel(
    pairs: Sequence[ParallelPair],
    *,
    dev_origins: Sequence[str] = DEV_ORIGINS,
    dev_sentences: int = DEV_SENTENCES,
    seed: int = 0,
) -> Tuple[List[ParallelPair], List[ParallelPair]]:
    """(train, dev): dev holds every pair of `dev_origins` and a seeded sample of `dev_sentences`
    SENTENCE_PREFIX pairs; a training pair sharing a (normalised) text with dev is left out."""
    origins = {p.origin for p in pairs}
    missing = [origin for origin in dev_origins if origin not in origins]
    if missing:
        raise ValueError(f"No pair comes from dev origin(s) {missing}; the origins are {sorted(origins)}.")
    sentences = [i for i, p in enumerate(pairs) if p.origin.startswith(SENTENCE_PREFIX)]
    if dev_sentences > len(sentences):
        raise ValueError(
            f"{dev_sentences:,} dev sentences asked for, but only {len(sentences):,} pairs come from "
            f"an origin starting with {SENTENCE_PREFIX!r}."
        )
    held: Set[int] = set(random.Random(seed).sample(sentences, dev_sentences))
    held.update(i for i, p in enumerate(pairs) if p.origin in dev_origins)
    dev = [pairs[i] for i in sorted(held)]
    seen = {_normal(text) for p in dev for text in (p.text_a, p.text_b)}
    train = [p for i, p in enumerate(pairs) if i not in held and not {_normal(p.text_a), _normal(p.text_b)} & seen]
    return train, dev


def pseudo_documents(pairs: Sequence[ParallelPair], *, size: int = WINDOW) -> List[ParallelPair]:
    """Pseudo-document pairs: non-overlapping windows of `size` consecutive lines of one
    document-order origin, joined by spaces (SENTENCE_PREFIX origins make none)."""
    if size < 1:
        raise ValueError(f"A pseudo-document needs at least 1 line, got size={size}.")
    docs = []
    documents = [p for p in pairs if not p.origin.startswith(SENTENCE_PREFIX)]
    # a run of consecutive lines of one origin keeps (origin, line - position) constant
    for _, numbered in groupby(enumerate(documents), key=lambda item: (item[1].origin, item[1].line - item[0])):
        run = [pair for _, pair in numbered]
        for start in range(0, len(run) - size + 1, size):
            window = run[start : start + size]
            a, b = " ".join(p.text_a for p in window), " ".join(p.text_b for p in window)
            docs.append(ParallelPair(a, b, window[0].line, window[0].origin))
    return docs


def crosslingual_corpus(
    pairs: Sequence[ParallelPair],
    *,
    window: int = WINDOW,
    dev_origins: Sequence[str] = DEV_ORIGINS,
    dev_sentences: int = DEV_SENTENCES,
    seed: int = 0,
) -> Tuple[List[ParallelPair], List[ParallelPair]]:
    """(train, dev) of `split_parallel`, pairs grouped "sentences" or "news", then `window`-line
    pseudo-documents of the news lines ("documents"; 0: none)."""
    train, dev = split_parallel(pairs, dev_origins=dev_origins, dev_sentences=dev_sentences, seed=seed)
    parts = []
    for part in (train, dev):
        tagged = [p._replace(group="sentences" if p.origin.startswith(SENTENCE_PREFIX) else "news") for p in part]
        docs = pseudo_documents(part, size=window) if window else []
        parts.append(tagged + [d._replace(group="documents") for d in docs])
    return parts[0], parts[1]


def by_group(pairs: Iterable[ParallelPair]) -> Dict[str, List[ParallelPair]]:
    """Pairs by their `group`, in order of first appearance."""
    groups: Dict[str, List[ParallelPair]] = {}
    for pair in pairs:
        groups.setdefault(pair.group, []).append(pair)
    return groups


def _decoded_lines(path: Path) -> Iterator[Line]:
    """The lines of a parallel file; one that is not UTF-8 is an error naming it."""
    check_path(path, what="parallel file")
    for line in numbered_lines(path):
        if line.error:
            raise PairFormatError(path, line.number, line.error)
        yield line


def _text_keys(obj: dict, langs: Tuple[str, str]) -> Tuple[str, str]:
    """The keys of a row's two texts: the languages' codes, or "text1" and "text2" of a pair row."""
    lang = [key for key in langs if key in obj]
    pair = [key for key in ("text1", "text2", "label") if key in obj]
    if lang and pair:
        raise Malformed(f"ambiguous row: it has the translation field(s) {lang} and the pair field(s) {pair}")
    return ("text1", "text2") if pair else langs


def _text(obj: dict, key: str) -> str:
    value = json_string(obj, key)
    if not value.strip():
        raise Malformed(f"{key!r} is empty: every pair needs a text in both languages")
    return value


def _label(obj: dict) -> float:
    value = obj.get("label")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Malformed(f"a text1/text2 pair needs a number 'label' (1: a translation), found {json_type(value)}")
    return check_label(float(value), value)


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


class ParallelCorpus:
    """Translation pairs of `read_parallel_jsonl` as pair Examples labelled 1, re-read every
    epoch (only `groups`, at most `limit`); `negatives` adds a seeded mismatched pair for each."""

    def __init__(
        self,
        path: Optional[PathLike],
        *,
        langs: Sequence[str] = ("en", "es"),
        groups: Optional[Sequence[str]] = None,
        negatives: bool = False,
        limit: int = 0,
        seed: int = 0,
    ) -> None:
        if path is None:
            raise ValueError("spacy-siamese.ParallelCorpus.v1: the corpus path is None. Set paths.train and paths.dev.")
        if len(langs) != 2:
            raise ValueError(f"spacy-siamese.ParallelCorpus.v1: langs names two languages, got {list(langs)}")
        self.path = Path(path)
        self.langs = (langs[0], langs[1])
        self.groups = None if groups is None else set(groups)
        self.negatives = negatives
        self.limit = limit
        self.seed = seed

    def __call__(self, nlp: Language) -> Iterator[Example]:
        pairs = read_parallel_jsonl(self.path, self.langs)
        if self.groups is not None:
            pairs = [p for p in pairs if p.group in self.groups]
        if self.limit > 0:
            pairs = pairs[: self.limit]
        for pair in pairs:
            yield make_pair_example(nlp, pair.text_a, pair.text_b, pair.label)
        if self.negatives and len(pairs) > 1:
            order = list(range(len(pairs)))
            random.Random(self.seed).shuffle(order)
            # each pair's first text with the next one's second text in a shuffled cycle: never its own
            for i, j in zip(order, order[1:] + order[:1]):
                yield make_pair_example(nlp, pairs[i].text_a, pairs[j].text_b, 0.0)


create_parallel_corpus = registry.readers("spacy-siamese.ParallelCorpus.v1")(ParallelCorpus)
