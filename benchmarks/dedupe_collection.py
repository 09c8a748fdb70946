"""Data for the corpus-scale dedupe benchmark: a collection of real texts from the shared data
mirror with seeded, perturbed duplicates planted at known places.

Texts (read with `spacy_siamese.corpora`; whitespace runs collapsed to one space; exact
duplicates across all sources dropped, the first occurrence in the order below kept):

1. `quora_train`: both questions of every pair of `quora/train.tsv`, in file order.
2. `quora_dev`: both questions of `quora/dev.tsv` (BiMPM, detokenized by the reader).
3. The other sources, **interleaved in proportion to their sizes** (item j of a source of n
   texts sits at fraction (j + 0.5) / n of the stretch after Quora, ties in this order), so
   that every prefix past Quora mixes them: `stackexchange` (question titles, the first line
   of the reader's text, of `askubuntu.tsv` and `meta.tsv`), `twitter_url`, `mrpc`, `sts`
   (STS-B train + dev), `sick` (train + trial), `20news` (sentences of the bydate train
   archive; the reader strips headers, quoted replies and signatures), `reuters` (sentences
   and titles of every story with a topic) and `uci_news` (headlines).

   Documents are cut into paragraphs (blank lines; in Reuters also indented lines, the title
   is its own paragraph and the trailing "Reuter" is dropped) and paragraphs into sentences where `.`, `!`
   or `?` (maybe followed by a closing quote or bracket) is followed by whitespace and a
   capital. A sentence is kept if it has 4 to 60 words and at least half of its words
   contain a letter.

Planted copies. Positions are taken in blocks of 100; in every block one position (seeded,
never the first of the block) holds a perturbed copy of a real text placed *earlier* in the
file, so every prefix that holds a copy holds its original too, and every prefix of n items
holds about n / 100 planted pairs. Originals are drawn at random, without replacement, from
the earlier real texts of 3 words or more. When the real texts run out before `size`, every
further position is a copy (top-up), drawn the same way (once every real text has a copy, a
new round of draws starts). Each copy gets 1 to 3 perturbations (probabilities 0.5/0.35/0.15):
`word_drop`, `word_swap` (two adjacent words), `typo:insert|delete|substitute|transpose` (one
character in one word), `case:toggle` (the first letter of one word) or `case:lower` (the whole
text). A copy differs from its original and from every other text in the collection.

So the first 100,000 items are distinct Quora training questions and about 1,000 planted
copies of them; at 1M the real texts run out and the tail is top-up copies. Everything is
decided in position order from one `random.Random(seed)`, and nothing depends on `size` but
where it stops: a collection of size n is the first n items of any larger one (same seed and
data), and the same seed gives the same bytes.

Outputs: `collection.jsonl` (`{"id": "d0000000", "text": ...}` per line, the id is "d" and the
zero-padded position) and `truth.json`, one object with the keys `format`, `size`, `seed`,
`settings` (the data dir only as given on the command line), `versions`, `counts`, `sources`
(per source: files, texts read, distinct texts, texts in the collection), `prefixes` (counts
in the 100k/300k/1M prefixes), then two lists with one record a line:

- `quora_pairs`: `{"id1", "id2", "position1", "position2", "split"}` for every Quora pair
  labelled duplicate (train or dev) whose two questions are both in the collection as
  different items;
- `planted`: `{"id", "position", "original_id", "original_position", "perturbations"}`.

A benchmark on a prefix of n items keeps the records whose larger position is below n.

Usage:
    python benchmarks/dedupe_collection.py --data-dir ../shared/data --size 1000000 --output benchmarks/.dedupe
"""

import argparse
import bisect
import heapq
import json
import platform
import random
import re
import string
import sys
import time
from array import array
from collections.abc import Sequence as SequenceABC
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, TextIO, Tuple

from spacy_siamese.corpora import read_documents, read_pairs

BLOCK = 100  # one planted copy per block of positions
MIN_WORDS, MAX_WORDS = 4, 60  # sentences cut from documents
MIN_ORIGINAL_WORDS = 3  # texts that may be copied
N_PERTURBATIONS = (1, 2, 3)
N_PERTURBATION_WEIGHTS = (50, 35, 15)
MAX_ATTEMPTS = 20  # perturbation attempts per original before another original is drawn
SCALES = (100_000, 300_000, 1_000_000)
FORMAT = "spacy_siamese dedupe collection v1"

QUORA = ("quora_train", "quora_dev")
OTHERS = ("stackexchange", "twitter_url", "mrpc", "sts", "sick", "20news", "reuters", "uci_news")
FILES: Dict[str, Tuple[str, ...]] = {
    "quora_train": ("quora/train.tsv",),
    "quora_dev": ("quora/dev.tsv",),
    "stackexchange": ("stackexchange/askubuntu.tsv", "stackexchange/meta.tsv"),
    "twitter_url": ("paraphrase/twitter_url_train",),
    "mrpc": ("paraphrase/msr_paraphrase_train.txt",),
    "sts": ("sts/sts-train.csv", "sts/sts-dev.csv"),
    "sick": ("sts/SICK_train.txt", "sts/SICK_trial.txt"),
    "20news": ("documents/20news-bydate-train.tar.gz",),
    "reuters": ("documents/reuters21578",),
    "uci_news": ("documents/uci-news-aggregator.partial.csv",),
}
PAIR_FORMATS = {
    "quora_train": "tsv",
    "quora_dev": "bimpm",
    "stackexchange": "stackexchange",
    "twitter_url": "twitter_url",
    "mrpc": "mrpc",
    "sts": "sts",
    "sick": "sick",
}


class Planted(NamedTuple):
    index: int  # position of the copy
    original_index: int  # position of its original (always smaller)
    perturbations: Tuple[str, ...]


class PlantedList(SequenceABC):
    """The planted copies in position order, kept in arrays (a few bytes per copy)."""

    def __init__(self) -> None:
        self._index = array("q")
        self._original = array("q")
        self._ops: List[Tuple[str, ...]] = []  # shared tuples, one per distinct perturbation list
        self._cache: Dict[Tuple[str, ...], Tuple[str, ...]] = {}

    def append(self, item: Planted) -> None:
        self._index.append(item.index)
        self._original.append(item.original_index)
        self._ops.append(self._cache.setdefault(item.perturbations, item.perturbations))

    def __len__(self) -> int:
        return len(self._index)

    def __getitem__(self, k: int) -> Planted:  # type: ignore[override]
        return Planted(self._index[k], self._original[k], self._ops[k])

    def __iter__(self) -> Iterator[Planted]:
        return map(Planted, self._index, self._original, self._ops)

    def count_before(self, n: int) -> int:
        """Copies at positions below n (their originals are too)."""
        return bisect.bisect_left(self._index, n)


class QuoraDuplicate(NamedTuple):
    index1: int
    index2: int
    split: str  # "train" or "dev"


@dataclass
class Collection:
    """The texts in file order, the planted copies and the Quora duplicates (by position)."""

    texts: List[str]
    planted: PlantedList
    quora_duplicates: List[QuoraDuplicate]
    sources: Dict[str, Dict[str, Any]]  # per source: files, texts read, distinct, in the collection
    positions_source: List[str]  # source name of each position ("planted" for copies)
    seed: int
    settings: Dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def id_width(self) -> int:
        return max(7, len(str(len(self.texts) - 1)))

    def id(self, index: int) -> str:
        return f"d{index:0{self.id_width}d}"

    def prefix_counts(self) -> Dict[str, Dict[str, Any]]:
        """Counts inside each benchmark scale that fits (and the whole collection)."""
        scales = sorted({n for n in SCALES if n < len(self)} | {len(self)})
        out: Dict[str, Dict[str, Any]] = {}
        for n in scales:
            by_source: Dict[str, int] = {}
            for name in self.positions_source[:n]:
                by_source[name] = by_source.get(name, 0) + 1
            out[str(n)] = {
                "items": n,
                "planted_pairs": self.planted.count_before(n),
                "quora_duplicates": sum(1 for q in self.quora_duplicates if max(q.index1, q.index2) < n),
                "by_source": {name: by_source.get(name, 0) for name in (*QUORA, *OTHERS, "planted")},
            }
        return out

    def truth(self, data_dir: Optional[str] = None) -> Dict[str, Any]:
        """truth.json without its two long lists, `quora_pairs` and `planted` (see `write`).
        `data_dir` is recorded as given."""
        n_real = sum(1 for name in self.positions_source if name != "planted")
        settings = dict(self.settings)
        if data_dir is not None:
            settings["data_dir"] = data_dir
        return {
            "format": FORMAT,
            "size": len(self),
            "seed": self.seed,
            "settings": settings,
            "versions": versions(),
            "counts": {
                "items": len(self),
                "real": n_real,
                "planted": len(self.planted),
                "real_distinct_available": sum(s["distinct"] for s in self.sources.values()),
                "quora_duplicates": len(self.quora_duplicates),
            },
            "sources": self.sources,
            "prefixes": self.prefix_counts(),
        }

    def write(self, output: Path, *, data_dir: Optional[str] = None) -> None:
        """Write `collection.jsonl` and `truth.json` into `output` (created if needed)."""
        output.mkdir(parents=True, exist_ok=True)
        with (output / "collection.jsonl").open("w", encoding="utf8", newline="\n") as file_:
            for index, text in enumerate(self.texts):
                file_.write(json.dumps({"id": self.id(index), "text": text}, ensure_ascii=False) + "\n")
        head = json.dumps(self.truth(data_dir), ensure_ascii=False, indent=1)
        quora = (
            {
                "id1": self.id(q.index1),
                "id2": self.id(q.index2),
                "position1": q.index1,
                "position2": q.index2,
                "split": q.split,
            }
            for q in self.quora_duplicates
        )
        planted = (
            {
                "id": self.id(p.index),
                "position": p.index,
                "original_id": self.id(p.original_index),
                "original_position": p.original_index,
                "perturbations": list(p.perturbations),
            }
            for p in self.planted
        )
        with (output / "truth.json").open("w", encoding="utf8", newline="\n") as file_:
            file_.write(head[: -len("\n}")])
            _write_list(file_, "quora_pairs", quora)
            _write_list(file_, "planted", planted)
            file_.write("\n}\n")


def _write_list(file_: TextIO, key: str, records: Iterable[Dict[str, Any]]) -> None:
    """`,\n "key": [...]` with one record a line."""
    file_.write(f',\n "{key}": [')
    sep = "\n  "
    for record in records:
        file_.write(sep + json.dumps(record, ensure_ascii=False))
        sep = ",\n  "
    file_.write("\n ]")


def versions() -> Dict[str, str]:
    out = {"python": platform.python_version()}
    for package in ("spacy-siamese", "spacy"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out


def normalize(text: str) -> str:
    return " ".join(text.split())


# Reading the sources -------------------------------------------------------------------------

_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_PARAGRAPH_OR_INDENT = re.compile(r"\n[ \t]*\n|\n(?=[ \t])")  # Reuters indents its paragraphs
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+(?=[\"'(\[]?[A-Z])")
_REUTER = re.compile(r"\s*\bReuter\s*$")


def sentences(text: str, *, indented_paragraphs: bool = False) -> Iterator[str]:
    """Cut a document into sentences with the simple rule of the module docstring. Paragraphs
    end at blank lines and, with `indented_paragraphs`, before indented lines."""
    for paragraph in (_PARAGRAPH_OR_INDENT if indented_paragraphs else _PARAGRAPH).split(text):
        for sentence in _SENTENCE_END.split(normalize(paragraph)):
            words = sentence.split(" ")
            if MIN_WORDS <= len(words) <= MAX_WORDS and 2 * sum(_has_letter(w) for w in words) >= len(words):
                yield sentence


def _has_letter(word: str) -> bool:
    return any(c.isalpha() for c in word)


def _pair_texts(name: str, path: Path) -> Iterator[Tuple[str, str, float]]:
    for rec in read_pairs(path, format=PAIR_FORMATS[name]):
        yield rec.text1, rec.text2, rec.label


def _source_texts(name: str, path: Path) -> Iterator[str]:
    if name in PAIR_FORMATS:
        for text1, text2, _ in _pair_texts(name, path):
            if name == "stackexchange":  # the title is the first line
                text1, text2 = text1.partition("\n")[0], text2.partition("\n")[0]
            yield text1
            yield text2
    elif name == "20news":
        for doc in read_documents("20news", path, split="train"):
            yield from sentences(doc.text)
    elif name == "reuters":
        for doc in read_documents("reuters", path, split="all"):
            title, _, body = doc.text.partition("\n")
            yield from sentences(title)
            yield from sentences(_REUTER.sub("", body), indented_paragraphs=True)
    elif name == "uci_news":
        for doc in read_documents("news", path):
            yield doc.text
    else:
        raise ValueError(f"unknown source {name!r}")


class _Reals(NamedTuple):
    texts: List[str]  # distinct real texts in file order (Quora, then the others interleaved)
    source: array  # source code (index into SOURCE_NAMES) of each
    sources: Dict[str, Dict[str, Any]]
    quora_pairs: List[Tuple[int, int, str]]  # labelled duplicates as indices into texts


SOURCE_NAMES = (*QUORA, *OTHERS)


def read_real_texts(data_dir: Path) -> _Reals:
    seen: set = set()
    per_source: Dict[str, List[str]] = {}
    sources: Dict[str, Dict[str, Any]] = {}
    quora_index: Dict[str, int] = {}  # Quora text -> index among the Quora texts
    quora_labelled: List[Tuple[str, str, str]] = []
    n_quora = 0  # Quora texts kept so far (Quora comes first, so this is their index)
    for name in SOURCE_NAMES:
        present = [rel for rel in FILES[name] if (data_dir / rel).exists()]
        texts: List[str] = []
        n_read = 0
        for rel in present:
            if name in QUORA:
                raw: Iterable[str] = _quora_texts(name, data_dir / rel, quora_labelled)
            else:
                raw = _source_texts(name, data_dir / rel)
            for text in raw:
                text = normalize(text)
                if not text:
                    continue
                n_read += 1
                if text not in seen:
                    seen.add(text)
                    if name in QUORA:
                        quora_index[text] = n_quora
                        n_quora += 1
                    texts.append(text)
        per_source[name] = texts
        sources[name] = {
            "files": list(present),
            "missing_files": [rel for rel in FILES[name] if rel not in present],
            "texts_read": n_read,
            "distinct": len(texts),
        }
    del seen
    pairs: List[Tuple[int, int, str]] = []
    seen_pairs: set = set()
    for text1, text2, split in quora_labelled:
        i, j = quora_index[text1], quora_index[text2]
        key = (min(i, j), max(i, j))
        if i != j and key not in seen_pairs:
            seen_pairs.add(key)
            pairs.append((i, j, split))
    all_texts: List[str] = []
    codes = array("b")
    for name in QUORA:
        all_texts.extend(per_source[name])
        codes.extend([SOURCE_NAMES.index(name)] * len(per_source[name]))
    for code, text in _interleave([(SOURCE_NAMES.index(n), per_source[n]) for n in OTHERS]):
        all_texts.append(text)
        codes.append(code)
    return _Reals(all_texts, codes, sources, pairs)


def _quora_texts(name: str, path: Path, labelled: List[Tuple[str, str, str]]) -> Iterator[str]:
    split = name.rpartition("_")[2]
    for text1, text2, label in _pair_texts(name, path):
        yield text1
        yield text2
        text1, text2 = normalize(text1), normalize(text2)
        if label == 1.0 and text1 and text2:
            labelled.append((text1, text2, split))


def _interleave(sources: Sequence[Tuple[int, List[str]]]) -> Iterator[Tuple[int, str]]:
    """Merge the lists in proportion to their lengths: item j of a list of n at (j + 0.5) / n."""

    def keyed(code: int, texts: List[str]) -> Iterator[Tuple[float, int, int, str]]:
        n = len(texts)
        for j, text in enumerate(texts):
            yield (j + 0.5) / n, code, j, text

    for _, code, _, text in heapq.merge(*(keyed(code, texts) for code, texts in sources if texts)):
        yield code, text


# Perturbations ----------------------------------------------------------------------------------

_LETTERS = string.ascii_lowercase


def _word_drop(words: List[str], rng: random.Random) -> Optional[str]:
    if len(words) < 3:
        return None
    del words[rng.randrange(len(words))]
    return "word_drop"


def _word_swap(words: List[str], rng: random.Random) -> Optional[str]:
    candidates = [i for i in range(len(words) - 1) if words[i] != words[i + 1]]
    if not candidates:
        return None
    i = rng.choice(candidates)
    words[i], words[i + 1] = words[i + 1], words[i]
    return "word_swap"


def _typo(words: List[str], rng: random.Random) -> Optional[str]:
    candidates = [i for i, w in enumerate(words) if sum(c.isalpha() for c in w) >= 2]
    if not candidates:
        return None
    i = rng.choice(candidates)
    word = words[i]
    kind = rng.choice(("insert", "delete", "substitute", "transpose"))
    if kind == "insert":
        k = rng.randrange(len(word) + 1)
        word = word[:k] + rng.choice(_LETTERS) + word[k:]
    elif kind == "delete":
        k = rng.randrange(len(word))
        word = word[:k] + word[k + 1 :]
    elif kind == "substitute":
        letters = [k for k, c in enumerate(word) if c.isalpha()]
        k = rng.choice(letters)
        new = rng.choice([c for c in _LETTERS if c != word[k].lower()])
        word = word[:k] + (new.upper() if word[k].isupper() else new) + word[k + 1 :]
    else:
        pairs = [k for k in range(len(word) - 1) if word[k] != word[k + 1]]
        if not pairs:
            return None
        k = rng.choice(pairs)
        word = word[:k] + word[k + 1] + word[k] + word[k + 2 :]
    words[i] = word
    return f"typo:{kind}"


def _case(words: List[str], rng: random.Random) -> Optional[str]:
    text = " ".join(words)
    if rng.random() < 0.3 and text != text.lower():
        words[:] = text.lower().split(" ")
        return "case:lower"
    candidates = [i for i, w in enumerate(words) if w[:1].isalpha() and w[:1].swapcase() != w[:1]]
    if not candidates:
        return None
    i = rng.choice(candidates)
    words[i] = words[i][0].swapcase() + words[i][1:]
    return "case:toggle"


PERTURBATIONS: Tuple[Callable[[List[str], random.Random], Optional[str]], ...] = (_word_drop, _word_swap, _typo, _case)


def perturb(text: str, rng: random.Random) -> Tuple[str, Tuple[str, ...]]:
    """One seeded perturbed copy of `text` and the perturbations applied, in order (the copy may
    equal the text if they cancel out; the caller checks)."""
    words = text.split(" ")
    n = rng.choices(N_PERTURBATIONS, weights=N_PERTURBATION_WEIGHTS)[0]
    ops: List[str] = []
    for _ in range(n):
        for op in rng.sample(PERTURBATIONS, len(PERTURBATIONS)):  # the first that applies
            name = op(words, rng)
            if name is not None:
                ops.append(name)
                break
    return " ".join(w for w in words if w), tuple(ops)


# Building ---------------------------------------------------------------------------------------


def build_collection(data_dir: Path, size: int, *, seed: int = 0) -> Collection:
    """Read the real texts under `data_dir` and lay out `size` items with planted copies (see
    the module docstring). Sources whose files are missing are skipped (listed in `sources`)."""
    if size < 1:
        raise ValueError(f"size must be positive, got {size}")
    reals = read_real_texts(Path(data_dir))
    if not reals.texts:
        raise ValueError(f"no texts found under {data_dir}")
    rng = random.Random(seed)
    taken = set(reals.texts)  # every text in the collection (and every real one not placed)
    out: List[str] = []
    position_source: List[str] = []
    real_position = array("q", [-1]) * len(reals.texts)
    planted = PlantedList()
    pool: List[int] = []  # real indices placed and not yet copied (this round)
    n_real = 0  # real texts placed
    eligible = [len(t.split(" ")) >= MIN_ORIGINAL_WORDS for t in reals.texts]
    if not any(eligible):
        raise ValueError(f"no text of {MIN_ORIGINAL_WORDS} words or more to plant copies of")
    copy_at = -1
    for position in range(size):
        if position % BLOCK == 0:
            copy_at = position + rng.randrange(1, BLOCK)
        plant = position == copy_at or n_real == len(reals.texts)
        if plant and not pool and n_real == len(reals.texts):  # top-up: a new round of originals
            pool = [i for i in range(len(reals.texts)) if eligible[i]]
        if plant and pool:
            copy = _plant(reals.texts, pool, taken, rng)
            if copy is not None:
                original, text, ops = copy
                planted.append(Planted(position, real_position[original], ops))
                out.append(text)
                position_source.append("planted")
                continue
            if n_real == len(reals.texts):
                raise ValueError("could not plant enough distinct copies: the texts are too few or too short")
        # a real text (also when no original is available yet)
        real_position[n_real] = position
        out.append(reals.texts[n_real])
        position_source.append(SOURCE_NAMES[reals.source[n_real]])
        if eligible[n_real]:
            pool.append(n_real)
        n_real += 1
    sources = reals.sources
    for name in SOURCE_NAMES:
        sources[name]["in_collection"] = 0
    for code in reals.source[:n_real]:
        sources[SOURCE_NAMES[code]]["in_collection"] += 1
    quora = [
        QuoraDuplicate(int(real_position[i]), int(real_position[j]), split)
        for i, j, split in reals.quora_pairs
        if i < n_real and j < n_real
    ]
    settings = {
        "block": BLOCK,
        "planted_per_block": 1,
        "perturbations_per_copy": dict(zip(map(str, N_PERTURBATIONS), N_PERTURBATION_WEIGHTS)),
        "min_original_words": MIN_ORIGINAL_WORDS,
        "sentence_words": [MIN_WORDS, MAX_WORDS],
        "order": "quora_train, quora_dev, then " + ", ".join(OTHERS) + " interleaved in proportion to their sizes",
        "normalization": "whitespace runs collapsed to one space, exact duplicates dropped (first kept)",
    }
    return Collection(out, planted, quora, sources, position_source, seed, settings)


def _plant(
    texts: List[str], pool: List[int], taken: set, rng: random.Random
) -> Optional[Tuple[int, str, Tuple[str, ...]]]:
    """Draw originals from `pool` (removing them) until one gives a new text."""
    while pool:
        k = rng.randrange(len(pool))
        pool[k], pool[-1] = pool[-1], pool[k]
        original = pool.pop()
        for _ in range(MAX_ATTEMPTS):
            text, ops = perturb(texts[original], rng)
            if text and text not in taken:
                taken.add(text)
                return original, text, ops
    return None


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--data-dir", required=True, help="the shared data mirror (recorded as given)")
    parser.add_argument("--size", type=int, default=1_000_000, help="number of texts (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, required=True, help="directory for collection.jsonl and truth.json")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    collection = build_collection(Path(args.data_dir), args.size, seed=args.seed)
    built = time.perf_counter()
    collection.write(args.output, data_dir=args.data_dir)
    done = time.perf_counter()
    summary = {
        "items": len(collection),
        "planted": len(collection.planted),
        "quora_duplicates": len(collection.quora_duplicates),
        "sources": {
            n: {k: s[k] for k in ("texts_read", "distinct", "in_collection")} for n, s in collection.sources.items()
        },
        "build_seconds": round(built - start, 1),
        "write_seconds": round(done - built, 1),
    }
    print(json.dumps(summary, indent=1), file=sys.stderr)


if __name__ == "__main__":
    main()
