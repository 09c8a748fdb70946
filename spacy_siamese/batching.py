"""Batches of pair examples for in-batch negatives: no two pairs of one batch share a
duplicate cluster, so every other text in the batch is a true negative; and batches of labelled
docs grouped by label, for triplet mining."""

import random
from collections import deque
from typing import Callable, Dict, Iterable, Iterator, List, Sequence, Set, Tuple

from spacy.training import Example
from spacy.util import registry

from .labelled import get_doc_labels
from .pair_examples import PAIR_KEY, get_label

Batcher = Callable[[Iterable[Example]], Iterator[List[Example]]]


class Clusters:
    """Union-find over texts: two texts are in one cluster when a chain of labelled
    duplicate pairs (label >= 0.5) joins them."""

    def __init__(self) -> None:
        self.parent: Dict[str, str] = {}

    def find(self, text: str) -> str:
        parent = self.parent.setdefault(text, text)
        while parent != text:
            grand = self.parent[parent]
            self.parent[text] = grand
            text, parent = parent, grand
        return text

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def pair_texts(eg: Example) -> Tuple[str, str]:
    """The texts of side A and side B of a pair example."""
    data = eg.reference.user_data[PAIR_KEY]
    b = "".join(w + (" " if s else "") for w, s in zip(data["words"], data["spaces"]))
    return eg.predicted.text, b


def cluster_batches(
    examples: Sequence[Example], size: int, *, seed: int = 0, texts: Callable[[Example], Tuple[str, str]] = pair_texts
) -> Iterator[List[Example]]:
    """Shuffle `examples` with `seed`, then fill batches of `size` in that order, deferring a
    pair whose cluster is already in the current batch to a later batch (the first one
    without it). Every pair is yielded exactly once; a batch is shorter than `size` only when
    the remaining pairs all share clusters with it."""
    clusters = Clusters()
    sides = [texts(eg) for eg in examples]
    for eg, (a, b) in zip(examples, sides):
        if get_label(eg) >= 0.5:
            clusters.union(a, b)
    keys = [{clusters.find(a), clusters.find(b)} for a, b in sides]
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    remaining = deque(order)
    while remaining:
        batch: List[int] = []
        used: Set[str] = set()
        deferred: List[int] = []
        while remaining and len(batch) < size:
            i = remaining.popleft()
            if keys[i] & used:
                deferred.append(i)
                continue
            batch.append(i)
            used |= keys[i]
        remaining.extendleft(reversed(deferred))
        yield [examples[i] for i in batch]


@registry.batchers("spacy-siamese.batch_by_clusters.v1")
def configure_batch_by_clusters(*, size: int = 128, seed: int = 0) -> Batcher:
    """Batches of `size` pair examples in which no two pairs share a text or a duplicate
    cluster (texts joined by labelled duplicate pairs). The clusters are found on what the
    batcher is given (one epoch of the training corpus); each call shuffles with the next
    seed, so epochs differ and a run is reproducible."""
    if size < 1:
        raise ValueError(f"batch_by_clusters: size must be >= 1, got {size}")
    return reseeded(lambda examples, epoch_seed: cluster_batches(examples, size, seed=epoch_seed), seed)


def reseeded(batches: Callable[[List[Example], int], Iterator[List[Example]]], seed: int) -> Batcher:
    """A batcher that calls `batches(examples, seed)` with seed, seed + 1, ... on its successive
    calls (epochs): epochs differ and a run is reproducible."""
    calls = [0]

    def batcher(items: Iterable[Example]) -> Iterator[List[Example]]:
        calls[0] += 1
        yield from batches(list(items), seed + calls[0] - 1)

    return batcher


def label_batches(examples: Sequence[Example], size: int, per_label: int, *, seed: int = 0) -> Iterator[List[Example]]:
    """Batches of `size` labelled docs (`spacy_siamese.labelled`) made of groups of up to
    `per_label` docs that share their first label, so that in-batch triplet mining finds
    positives even for fine labels (news stories). Shuffled with `seed`; every doc is yielded
    exactly once."""
    rng = random.Random(seed)
    groups: Dict[str, List[int]] = {}
    for i, eg in enumerate(examples):
        groups.setdefault(get_doc_labels(eg)[0], []).append(i)
    chunks: List[List[int]] = []
    for members in groups.values():
        rng.shuffle(members)
        chunks.extend(members[start : start + per_label] for start in range(0, len(members), per_label))
    rng.shuffle(chunks)
    order = [i for chunk in chunks for i in chunk]
    for start in range(0, len(order), size):
        yield [examples[i] for i in order[start : start + size]]


@registry.batchers("spacy-siamese.batch_by_labels.v1")
def configure_batch_by_labels(*, size: int = 128, per_label: int = 4, seed: int = 0) -> Batcher:
    """Batches of `size` labelled docs in groups of `per_label` docs with one label (P x K
    batches for triplet mining); each call shuffles with the next seed."""
    if size < 1 or per_label < 1:
        raise ValueError(f"batch_by_labels: size and per_label must be >= 1, got {size} and {per_label}")
    return reseeded(lambda examples, epoch_seed: label_batches(examples, size, per_label, seed=epoch_seed), seed)
