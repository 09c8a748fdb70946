"""Silver pairs: pairs of a collection's texts labelled by a teacher (the teacher's cosine, or a
cross-encoder teacher's probability), written as an ordinary pair file; the student needs no torch.

Seeded anchor texts are each paired with their nearest neighbour (by the teacher's vectors, or
TF-IDF for a cross-encoder), a neighbour of a random rank among the nearest `neighbours`, and a
random text; no pair (in either order) is written twice.
"""

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union

import numpy

from .models import teacher_pair_scores

NEIGHBOURS = 20
BLOCK = 2048


def nearest_neighbours(vectors: Any, queries: numpy.ndarray, k: int) -> numpy.ndarray:
    """The k nearest other rows of `vectors` (dense, or a scipy sparse matrix) for each query
    row index, by inner product, nearest first: int (len(queries), k)."""
    k = min(k, vectors.shape[0] - 1)
    out = numpy.zeros((len(queries), max(k, 0)), dtype="int64")
    if k <= 0:
        return out
    for start in range(0, len(queries), BLOCK):
        block = queries[start : start + BLOCK]
        scores = vectors[block] @ vectors.T
        scores = numpy.asarray(scores.toarray() if hasattr(scores, "toarray") else scores, dtype="f4")
        rows = numpy.arange(len(block))
        scores[rows, block] = -numpy.inf  # not itself
        top = numpy.argpartition(-scores, k - 1, axis=1)[:, :k]
        order = numpy.argsort(-scores[rows[:, None], top], axis=1, kind="stable")
        out[start : start + len(block)] = top[rows[:, None], order]
    return out


def teacher_pairs(
    texts: Sequence[str], vectors: numpy.ndarray, *, n_pairs: int, neighbours: int = NEIGHBOURS, seed: int = 0
) -> List[Dict[str, Any]]:
    """Up to `n_pairs` distinct pairs of distinct texts (`sample_pairs`), labelled with the
    teacher's cosine of their `vectors` clipped to [0, 1]."""
    if len(texts) != len(vectors):
        raise ValueError(f"teacher_pairs: {len(texts)} texts but {len(vectors)} vectors")
    return [
        {"text1": texts[a], "text2": texts[b], "label": round(float(max(0.0, vectors[a] @ vectors[b])), 6)}
        for a, b in sample_pairs(vectors, n_pairs=n_pairs, neighbours=neighbours, seed=seed)
    ]


def sample_pairs(vectors: Any, *, n_pairs: int, neighbours: int = NEIGHBOURS, seed: int = 0) -> List[Tuple[int, int]]:
    """Up to `n_pairs` (row, row) pairs of distinct rows of `vectors` (dense or sparse), none
    repeated in either order: seeded anchors in turn, each with its nearest row, a row of a random
    rank among the nearest `neighbours` and a random row, until there are `n_pairs` (fewer when
    every row has been an anchor)."""
    n_texts = vectors.shape[0]
    if n_texts < 2:
        raise ValueError("teacher_pairs: needs at least two texts")
    rng = numpy.random.default_rng(seed)
    order = rng.permutation(n_texts)
    rows: List[Tuple[int, int]] = []
    seen: Set[Tuple[int, int]] = set()
    start, chunk = 0, max(1, -(-n_pairs // 3))
    while start < n_texts and len(rows) < n_pairs:
        anchors = order[start : start + chunk]
        start += len(anchors)
        near = nearest_neighbours(vectors, anchors, neighbours)
        ranks = rng.integers(1, near.shape[1], size=len(anchors)) if near.shape[1] > 1 else numpy.zeros(len(anchors))
        randoms = rng.integers(0, n_texts - 1, size=len(anchors))
        randoms = randoms + (randoms >= anchors)  # any text but the anchor
        for t, anchor in enumerate(anchors):
            for other in (near[t, 0], near[t, int(ranks[t])], randoms[t]):
                key = (int(min(anchor, other)), int(max(anchor, other)))
                if key not in seen and len(rows) < n_pairs:
                    seen.add(key)
                    rows.append((int(anchor), int(other)))
        chunk = max(1, -(-(n_pairs - len(rows)) // 2))  # repeats were skipped: more anchors
    return rows


def tfidf_rows(texts: Sequence[str]) -> Any:
    """Unit-length TF-IDF rows of the texts (word unigrams and bigrams, sublinear counts): the
    neighbours of a teacher that has no vectors."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1).fit_transform(texts)


def cross_encoder_pairs(
    teacher: str,
    texts: Sequence[str],
    *,
    n_pairs: int,
    neighbours: int = NEIGHBOURS,
    seed: int = 0,
    cache_dir: Optional[Union[str, Path]] = None,
    progress: bool = False,
) -> List[Dict[str, Any]]:
    """Pairs of `texts` sampled as in `teacher_pairs` with TF-IDF neighbours, labelled with the
    cross-encoder `teacher`'s probability (a directory; see `.train`). With `cache_dir`, its
    scores are kept there and read back."""
    rows = sample_pairs(tfidf_rows(texts), n_pairs=n_pairs, neighbours=neighbours, seed=seed)
    pairs = [(texts[a], texts[b]) for a, b in rows]
    scores = teacher_pair_scores(teacher, pairs, cache_dir=cache_dir, progress=progress)
    return [{"text1": a, "text2": b, "label": round(float(s), 6)} for (a, b), s in zip(pairs, scores)]
