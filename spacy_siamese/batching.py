"""Batchers: pair batches without two pairs of one duplicate cluster (so every other text is a
true in-batch negative), optionally of one topic; labelled docs grouped by label, for triplet
mining; and batches of one dataset each, from a multi-dataset corpus."""

import math
import random
from collections import deque
from typing import Callable, Deque, Dict, FrozenSet, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

import numpy
from spacy.training import Example
from spacy.util import SimpleFrozenDict, registry

from .labelled import get_doc_labels
from .metrics import is_binary
from .pair_examples import dataset_groups, get_label, partner_text
from .util import component_labels, distinct_pair_texts, pair_rows
from .validation import check_dataset_name

Batcher = Callable[[Iterable[Example]], Iterator[List[Example]]]


def duplicate_clusters(pairs: Sequence[Tuple[str, str]], labels: Sequence[float]) -> Dict[str, int]:
    """The duplicate cluster of each text of the pairs: two texts are in one cluster when a chain of
    pairs labelled 1 joins them (graded labels join none)."""
    texts = distinct_pair_texts(pairs)
    rows, cols = pair_rows(texts, pairs)
    joined = (numpy.asarray(labels) == 1.0) & is_binary(labels)
    return dict(zip(texts, component_labels(len(texts), rows[joined], cols[joined]).tolist()))


def pair_texts(eg: Example) -> Tuple[str, str]:
    """The texts of side A and side B of a pair example."""
    return eg.predicted.text, partner_text(eg)


def cluster_batches(examples: Sequence[Example], size: int, *, seed: int = 0) -> Iterator[List[Example]]:
    """Shuffle `examples` with `seed` and fill batches of `size`, deferring a pair whose duplicate
    cluster is already in the batch to the first later batch without it; each pair once."""
    order = list(range(len(examples)))
    random.Random(seed).shuffle(order)
    return fill_batches(examples, order, size)


def fill_batches(examples: Sequence[Example], order: Sequence[int], size: int) -> Iterator[List[Example]]:
    """Batches of `size` from `examples` in `order`, deferring pairs as `cluster_batches` does."""
    sides = [pair_texts(eg) for eg in examples]
    cluster = duplicate_clusters(sides, [get_label(eg) for eg in examples])
    keys = [{cluster[a], cluster[b]} for a, b in sides]
    remaining = deque(order)
    while remaining:
        batch: List[int] = []
        used: Set[int] = set()
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
    """Batches of `size` pair examples in which no two pairs share a text or a duplicate cluster (`cluster_batches`),
    found on what the batcher is given; each call (epoch) shuffles with the next seed."""
    if size < 1:
        raise ValueError(f"batch_by_clusters: size must be >= 1, got {size}")
    return reseeded(lambda examples, epoch_seed: cluster_batches(examples, size, seed=epoch_seed), seed)


def text_topics(texts: Sequence[str], n_topics: int, *, seed: int = 0) -> numpy.ndarray:
    """A topic id in [0, n_topics) per text: MiniBatchKMeans of the texts' TF-IDF vectors reduced by truncated SVD."""
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    n_topics = max(1, min(n_topics, len(texts)))
    if n_topics == 1:
        return numpy.zeros(len(texts), dtype="int64")
    try:
        X = TfidfVectorizer(sublinear_tf=True, min_df=2).fit_transform(texts)
    except ValueError:  # no word occurs twice: nothing to group by
        return numpy.zeros(len(texts), dtype="int64")
    if X.shape[1] > 2:
        X = TruncatedSVD(min(128, X.shape[1] - 1), random_state=seed).fit_transform(X)
        X /= numpy.maximum(numpy.linalg.norm(X, axis=1, keepdims=True), 1e-12)
    return MiniBatchKMeans(n_topics, random_state=seed, n_init=1, batch_size=4096).fit_predict(X).astype("int64")


def topic_batches(
    examples: Sequence[Example], size: int, topics: Sequence[int], *, seed: int = 0
) -> Iterator[List[Example]]:
    """Batches of `size` pairs of one topic where possible (`topics[i]`: `examples[i]`'s), filled
    as `cluster_batches` does."""
    rng = random.Random(seed)
    groups: Dict[int, List[int]] = {}
    for i, topic in enumerate(topics):
        groups.setdefault(int(topic), []).append(i)
    names = list(groups)
    rng.shuffle(names)
    for name in names:
        rng.shuffle(groups[name])
    return fill_batches(examples, [i for name in names for i in groups[name]], size)


@registry.batchers("spacy-siamese.batch_by_topics.v1")
def configure_batch_by_topics(*, size: int = 128, topic_size: int = 128, seed: int = 0) -> Batcher:
    """Batches of `size` pairs on one topic of about `topic_size` pairs, for hard in-batch
    negatives (as in TAS-B); each epoch shuffles with the next seed."""
    if size < 1 or topic_size < 1:
        raise ValueError(f"batch_by_topics: size and topic_size must be >= 1, got {size} and {topic_size}")
    # the topics of each corpus the batcher is given (under batch_by_dataset.v1: of each dataset)
    found: Dict[FrozenSet[str], Dict[str, int]] = {}

    def batches(examples: List[Example], epoch_seed: int) -> Iterator[List[Example]]:
        texts = [eg.predicted.text for eg in examples]
        corpus = frozenset(texts)
        # one lookup: each `found[corpus]` of an equal but new frozenset compares every text
        topic_of = found.get(corpus)
        if topic_of is None:
            distinct = list(dict.fromkeys(texts))
            topics = text_topics(distinct, round(len(examples) / topic_size), seed=seed)
            topic_of = found[corpus] = dict(zip(distinct, (int(t) for t in topics)))
        return topic_batches(examples, size, [topic_of[text] for text in texts], seed=epoch_seed)

    return reseeded(batches, seed)


def reseeded(batches: Callable[[List[Example], int], Iterator[List[Example]]], seed: int) -> Batcher:
    """A batcher that calls `batches(examples, seed)` with seed, seed + 1, ... on its successive
    calls (epochs): epochs differ and a run is reproducible."""
    calls = [0]

    def batcher(items: Iterable[Example]) -> Iterator[List[Example]]:
        calls[0] += 1
        yield from batches(list(items), seed + calls[0] - 1)

    return batcher


def label_batches(examples: Sequence[Example], size: int, per_label: int, *, seed: int = 0) -> Iterator[List[Example]]:
    """Batches of `size` labelled docs made of groups of up to `per_label` docs that share their
    first label, so triplet mining finds positives even for fine labels. Shuffled with `seed`."""
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


SCHEDULES = ("proportional", "round_robin")


def dataset_batches(
    examples: Sequence[Example],
    batcher: Batcher,
    *,
    schedule: str = "proportional",
    weights: Mapping[str, float] = SimpleFrozenDict(),
    seed: int = 0,
) -> Iterator[List[Example]]:
    """Batches of one dataset each, made by `batcher` per dataset (datasets in name order). "proportional": dataset d
    gives round(weights[d] * n_d) of its n_d batches (at least one if its weight > 0), all shuffled with `seed`.
    "round_robin": one batch each in turn until every dataset has given all its batches once; one that runs out starts
    again."""
    if schedule not in SCHEDULES:
        raise ValueError(f"batch_by_dataset: schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    groups = dataset_groups(examples)
    if None in groups:
        raise ValueError(
            f"batch_by_dataset: {len(groups[None])} of {len(examples)} examples have no dataset tag; "
            "read the corpus with spacy-siamese.MultiPairCorpus.v1."
        )
    names = sorted(name for name in groups if name is not None)
    unknown = sorted(set(weights) - set(names))
    if unknown:
        raise ValueError(
            f"batch_by_dataset: weights name dataset(s) {', '.join(unknown)} that the corpus does not have "
            f"(its datasets: {', '.join(names)})."
        )
    if schedule == "round_robin" and any(weight != 1.0 for weight in weights.values()):
        raise ValueError('batch_by_dataset: weights apply to schedule = "proportional" only.')
    sources = {name: _Batches([examples[i] for i in groups[name]], batcher) for name in names}
    if schedule == "round_robin":
        order = names * max((source.size for source in sources.values()), default=0)
    else:
        order = []
        for name in names:
            weight = weights.get(name, 1.0)
            n = sources[name].size
            order.extend([name] * (max(1, round(weight * n)) if weight > 0 and n else 0))
        if not order and examples:
            # spacy train would wait forever for a batch (max_epochs = 0) or end without an update.
            raise ValueError(
                f"batch_by_dataset: no batches: the weights give every dataset ({', '.join(names)}) 0 batches; "
                "give at least one a weight > 0."
            )
        random.Random(seed).shuffle(order)
    for name in order:
        batch = sources[name].next()
        if batch is not None:
            yield batch


class _Batches:
    """The batches `batcher` makes of one dataset's examples, restarted (a new call) when used up."""

    def __init__(self, examples: List[Example], batcher: Batcher) -> None:
        self.examples = examples
        self.batcher = batcher
        self.pending: Deque[List[Example]] = deque(self._make())
        self.size = len(self.pending)

    def _make(self) -> List[List[Example]]:
        return [list(batch) for batch in self.batcher(self.examples) if len(batch)]

    def next(self) -> Optional[List[Example]]:
        if not self.pending:
            self.pending.extend(self._make())
        return self.pending.popleft() if self.pending else None


@registry.batchers("spacy-siamese.batch_by_dataset.v1")
def configure_batch_by_dataset(
    *, batcher: Batcher, schedule: str = "proportional", weights: Dict[str, float] = SimpleFrozenDict(), seed: int = 0
) -> Batcher:
    """Batches of one dataset each for MultiPairCorpus.v1, ordered by `schedule` and `weights`
    (`dataset_batches`); each epoch shuffles with the next seed."""
    if schedule not in SCHEDULES:
        raise ValueError(f"batch_by_dataset: schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    for name, weight in weights.items():
        check_dataset_name(name)
        if not 0 <= weight < math.inf:
            raise ValueError(f"batch_by_dataset: a weight must be >= 0 and finite, got {weight} for {name!r}")
    weights = dict(weights)

    def batches(examples: List[Example], epoch_seed: int) -> Iterator[List[Example]]:
        return dataset_batches(examples, batcher, schedule=schedule, weights=weights, seed=epoch_seed)

    return reseeded(batches, seed)
