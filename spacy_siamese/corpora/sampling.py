"""Seeded splits of a document collection, seeded document pairs, and the seeded
question-disjoint split of labelled pairs."""

import random
import re
from collections import Counter, defaultdict
from typing import Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

import numpy
from spacy.tokens import Doc
from spacy.training import Example

from ..pair_examples import pair_example
from ..util import component_labels
from .base import DocRecord, PairRecord


class PairIndex(NamedTuple):
    """A sampled pair: indices of two documents and the label (1.0 = share a label)."""

    i: int
    j: int
    label: float


def split_documents(
    docs: Sequence[DocRecord], *, dev_fraction: float = 0.2, seed: int = 0
) -> Tuple[List[DocRecord], List[DocRecord]]:
    """A seeded random (train, held-out) split of a collection, each in collection order."""
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be in (0, 1), got {dev_fraction}")
    order = numpy.random.default_rng(seed).permutation(len(docs))
    n_dev = int(round(dev_fraction * len(docs)))
    return [docs[i] for i in sorted(order[n_dev:])], [docs[i] for i in sorted(order[:n_dev])]


def sample_pairs(
    docs: Sequence[DocRecord],
    *,
    n_pairs: int,
    positive_ratio: float = 0.5,
    hard_negative_ratio: float = 0.0,
    seed: int = 0,
) -> List[PairIndex]:
    """`n_pairs` seeded pairs of document indices: positives share a label, negatives none (a
    `hard_negative_ratio` of them from the anchor's group)."""
    if n_pairs < 1:
        raise ValueError(f"sample_pairs: n_pairs must be >= 1, got {n_pairs}")
    if not 0.0 <= positive_ratio <= 1.0 or not 0.0 <= hard_negative_ratio <= 1.0:
        raise ValueError("positive_ratio and hard_negative_ratio must be in [0, 1]")
    rng = numpy.random.default_rng(seed)
    by_label: Dict[str, List[int]] = defaultdict(list)
    by_group: Dict[str, List[int]] = defaultdict(list)
    for i, doc in enumerate(docs):
        for label in set(doc.labels):
            by_label[label].append(i)
        by_group[doc.group].append(i)
    anchors = [i for i, doc in enumerate(docs) if any(len(by_label[label]) > 1 for label in doc.labels)]
    if not anchors:
        raise ValueError("sample_pairs: no two documents share a label, so there are no positive pairs")
    n_pos = int(round(positive_ratio * n_pairs))
    pairs: List[PairIndex] = []
    for k in range(n_pairs):
        if k < n_pos:
            i = anchors[rng.integers(len(anchors))]
            peers = [label for label in docs[i].labels if len(by_label[label]) > 1]
            members = by_label[peers[rng.integers(len(peers))]]
            j = i
            while j == i:
                j = members[rng.integers(len(members))]
            pairs.append(PairIndex(i, j, 1.0))
        else:
            i = int(rng.integers(len(docs)))
            pool = by_group[docs[i].group] if rng.random() < hard_negative_ratio else None  # a hard negative
            neg = _draw_negative(docs, i, pool, rng)
            if neg is None:
                neg = _draw_negative(docs, i, None, rng)
            if neg is None:
                raise ValueError(f"sample_pairs: document {docs[i].id or i} shares a label with every other document")
            pairs.append(PairIndex(i, neg, 0.0))
    return [pairs[k] for k in rng.permutation(len(pairs))]  # mix positives and negatives


def _draw_negative(
    docs: Sequence[DocRecord], i: int, pool: Optional[List[int]], rng: numpy.random.Generator, tries: int = 50
) -> Optional[int]:
    labels = set(docs[i].labels)
    for _ in range(tries):
        j = pool[rng.integers(len(pool))] if pool else int(rng.integers(len(docs)))
        if j != i and labels.isdisjoint(docs[j].labels):
            return j
    return None


def doc_pair_examples(docs: Union[Sequence[Doc], Dict[int, Doc]], pairs: Sequence[PairIndex]) -> Iterator[Example]:
    """Pair Examples from already tokenized docs, so a document in many pairs is tokenized once."""
    for i, j, label in pairs:
        yield pair_example(docs[i].copy(), docs[j], label)


Sourced = Tuple[str, PairRecord]  # (the file the pair came from, e.g. "askubuntu"; the pair)
_WORD = re.compile(r"\w+")


def normalize(text: str) -> str:
    """Lowercased word tokens: differences in case, spacing and punctuation vanish."""
    return " ".join(_WORD.findall(text.lower()))


def title_key(text: str) -> str:
    """A StackExchange question as the reader returns it is "title\\nbody": its normalized title."""
    return normalize(text.split("\n", 1)[0])


def question_components(pairs: Sequence[Sourced], key: Callable[[str], str]) -> List[List[int]]:
    """Pair indices grouped by connected component of the question graph (questions are
    nodes, identified by `key`; pairs are edges), in order of first appearance."""
    ids: Dict[str, int] = {}
    ends = numpy.asarray(
        [[ids.setdefault(key(p.text1), len(ids)), ids.setdefault(key(p.text2), len(ids))] for _, p in pairs],
        dtype="int64",
    ).reshape(-1, 2)
    component = component_labels(len(ids), ends[:, 0], ends[:, 1])
    groups: Dict[int, List[int]] = defaultdict(list)
    for i, first in enumerate(ends[:, 0]):
        groups[int(component[first])].append(i)
    return list(groups.values())


def grouped_split(
    pairs: Sequence[Sourced], key: Callable[[str], str], dev_fraction: float, seed: int
) -> Tuple[List[Sourced], List[Sourced]]:
    """Seeded question-disjoint train/dev split, stratified by (source, label): each connected
    component of the question graph stays on one side; both keep the input order."""
    if not 0.0 < dev_fraction < 1.0:
        raise ValueError(f"dev_fraction must be between 0 and 1, got {dev_fraction}")
    strata = [(source, p.label >= 0.5) for source, p in pairs]
    target = {s: round(n * dev_fraction) for s, n in Counter(strata).items()}
    comps = question_components(pairs, key)
    random.Random(seed).shuffle(comps)
    taken: Counter = Counter()
    in_dev: Set[int] = set()
    for comp in comps:
        need = Counter(strata[i] for i in comp)
        if all(taken[s] + n <= target[s] for s, n in need.items()):
            taken.update(need)
            in_dev.update(comp)
    train = [p for i, p in enumerate(pairs) if i not in in_dev]
    dev = [p for i, p in enumerate(pairs) if i in in_dev]
    if not train or not dev:
        raise ValueError(
            f"Cannot split {len(pairs)} pair(s) into non-empty question-disjoint train and dev sets "
            f"(dev fraction {dev_fraction}): the dataset is too small or one question links them all."
        )
    shared = questions(train, key) & questions(dev, key)
    assert not shared, f"{len(shared)} question(s) on both sides of the split"
    return train, dev


def questions(pairs: Iterable[Sourced], key: Callable[[str], str]) -> Set[str]:
    """The distinct question keys of the pairs."""
    return {key(text) for _, p in pairs for text in (p.text1, p.text2)}
