"""Silver pairs as AugSBERT samples them (Thakur et al., NAACL 2021): every text with its top-k
neighbours by TF-IDF over the texts, less the text itself and every gold pair, labelled by a
teacher (a bi-encoder's cosine, or a cross-encoder's probability) and written as an ordinary pair
file; random pairs only when asked for. The student needs no torch."""

from typing import Any, Callable, Collection, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

import numpy

from ..files import PathLike
from ..util import distinct_texts
from .models import is_cross_encoder, teacher_pair_scores, teacher_vectors

FLOATS_PER_BLOCK = 1 << 25  # queries x texts scores held at once in `nearest_neighbours`


def nearest_neighbours(vectors: Any, queries: numpy.ndarray, k: int) -> numpy.ndarray:
    """The k nearest other rows of `vectors` (dense, or a scipy sparse matrix) for each query
    row index, by inner product, nearest first: int (len(queries), k)."""
    k = min(k, vectors.shape[0] - 1)
    out = numpy.zeros((len(queries), max(k, 0)), dtype="int64")
    if k <= 0:
        return out
    block_size = max(1, FLOATS_PER_BLOCK // vectors.shape[0])
    for start in range(0, len(queries), block_size):
        block = queries[start : start + block_size]
        scores = vectors[block] @ vectors.T
        scores = numpy.asarray(scores.toarray() if hasattr(scores, "toarray") else scores, dtype="f4")
        rows = numpy.arange(len(block))
        scores[rows, block] = -numpy.inf  # not itself
        top = numpy.argpartition(-scores, k - 1, axis=1)[:, :k]
        order = numpy.argsort(-scores[rows[:, None], top], axis=1, kind="stable")
        out[start : start + len(block)] = top[rows[:, None], order]
    return out


def tfidf_rows(texts: Sequence[str]) -> Any:
    """Unit-length TF-IDF rows of the texts (word unigrams and bigrams, sublinear counts)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1).fit_transform(texts)


def sample_silver(
    texts: Sequence[str],
    *,
    gold: Collection[FrozenSet[str]] = (),
    top_k: int = 3,
    n_random: int = 0,
    max_pairs: int = 0,
    seed: int = 0,
) -> List[Tuple[int, int]]:
    """(row, row) pairs of distinct `texts`: each text with its `top_k` TF-IDF neighbours, then
    `n_random` seeded random pairs; no pair twice (in either order) and none of `gold` (pairs of
    texts as frozensets). With `max_pairs`, a seeded sample of that many, in order (without random
    pairs, from the neighbours of a seeded sample of the texts, where that gives enough)."""
    if len(texts) < 2:
        raise ValueError(f"Silver pairs need at least two distinct texts, got {len(texts)}.")
    seen: Set[Tuple[int, int]] = set()
    rows: List[Tuple[int, int]] = []

    def add(a: int, b: int) -> None:
        key = (min(a, b), max(a, b))
        if a != b and key not in seen and frozenset((texts[a], texts[b])) not in gold:
            seen.add(key)
            rows.append((a, b))

    rng = numpy.random.default_rng(seed)
    tfidf, rest = tfidf_rows(texts), numpy.arange(len(texts))
    if max_pairs and not n_random and 2 * max_pairs < len(texts) * top_k:
        # a text gives at most top_k pairs: first the neighbours of a seeded sample of twice the texts needed
        first = numpy.sort(rng.choice(len(texts), size=-(-2 * max_pairs // top_k), replace=False))
        _add_neighbours(add, tfidf, first, top_k)
        rest = numpy.setdiff1d(rest, first) if len(rows) < max_pairs else rest[:0]
    _add_neighbours(add, tfidf, rest, top_k)
    n_possible = len(texts) * (len(texts) - 1) // 2 - len(seen)
    target = len(rows) + min(n_random, max(0, n_possible - len(gold)))
    while len(rows) < target:  # rejection sampling: random pairs are few against all pairs
        a, b = rng.integers(0, len(texts), size=2).tolist()
        add(a, b)
    if max_pairs and max_pairs < len(rows):
        rows = [rows[i] for i in numpy.sort(rng.choice(len(rows), size=max_pairs, replace=False))]
    return rows


def _add_neighbours(add: Callable[[int, int], None], tfidf: Any, queries: numpy.ndarray, top_k: int) -> None:
    for a, neighbours in zip(queries.tolist(), nearest_neighbours(tfidf, queries, top_k).tolist()):
        for b in neighbours:
            add(a, b)


def label_pairs(
    teacher: str,
    texts: Sequence[str],
    rows: Sequence[Tuple[int, int]],
    *,
    vectors: Optional[numpy.ndarray] = None,
    cache_dir: Optional[PathLike] = None,
    progress: bool = False,
) -> List[Dict[str, Any]]:
    """The pairs `rows` of `texts` labelled by `teacher`: the cosine of its `vectors` of the texts
    (when given; else computed) clipped to [0, 1], or a cross-encoder's probability; cached as
    `teacher_pair_scores`."""
    if vectors is not None:
        a, b = numpy.asarray([r[0] for r in rows], "int64"), numpy.asarray([r[1] for r in rows], "int64")
        scores = (vectors[a].astype("f8") * vectors[b]).sum(axis=1) if len(rows) else numpy.zeros(0)
    else:
        pairs = [(texts[a], texts[b]) for a, b in rows]
        scores = teacher_pair_scores(teacher, pairs, cache_dir=cache_dir, progress=progress)
    return [
        {"text1": texts[a], "text2": texts[b], "label": round(float(min(1.0, max(0.0, s))), 6)}
        for (a, b), s in zip(rows, scores)
    ]


def silver_texts(pair_texts: Iterable[str], unlabelled: Iterable[str], *, max_texts: int = 0) -> List[str]:
    """The distinct texts to pair: the first `max_texts` (0: all) of the gold pairs' texts, then the
    unlabelled ones; blank ones kept for the teacher's table (TeacherScores.v1 looks every text up)."""
    texts = distinct_texts(pair_texts, keep_blank=True)[: max_texts or None]
    return distinct_texts(texts + list(unlabelled), keep_blank=True)


def teacher_silver(
    teacher: str,
    texts: Sequence[str],
    *,
    gold: Collection[FrozenSet[str]] = (),
    label: bool = True,
    all_vectors: bool = False,
    top_k: int = 3,
    n_random: int = 0,
    max_pairs: int = 0,
    seed: int = 0,
    cache_dir: Optional[PathLike] = None,
    progress: bool = False,
) -> Tuple[List[Dict[str, Any]], Optional[numpy.ndarray]]:
    """Silver pairs of the non-blank `texts` (`sample_silver`) labelled by `teacher` (none unless
    `label`), and a bi-encoder teacher's vectors: of every text with `all_vectors`, else of the
    non-blank ones. ValueError if fewer than two texts are to be paired."""
    pairable = [text for text in texts if text.strip()]
    if label and len(pairable) < 2:
        raise ValueError(f"{len(pairable)} distinct text(s) to pair: a pair needs two.")
    vectors = None
    encoded = texts if all_vectors else pairable
    if not is_cross_encoder(teacher):
        vectors = teacher_vectors(teacher, encoded, cache_dir=cache_dir, progress=progress)
    if not label:
        return [], vectors
    rows = sample_silver(pairable, gold=gold, top_k=top_k, n_random=n_random, max_pairs=max_pairs, seed=seed)
    paired = None if vectors is None else vectors[[i for i, text in enumerate(encoded) if text.strip()]]
    return label_pairs(teacher, pairable, rows, vectors=paired, cache_dir=cache_dir, progress=progress), vectors
