"""Duplicate mining over a collection: pairs above a threshold, and groups of duplicates."""

from typing import Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from spacy.language import Language
from tqdm import tqdm

from ..evaluation.pairs import show_progress
from .encode import PIPE_NAME, TextOrDoc
from .index import SimilarityIndex

Pair = Tuple[int, int, float]
METHODS = ("components", "communities")
QUERY_BATCH = 1024


def find_duplicates(
    nlp: Language,
    texts_or_docs: Sequence[TextOrDoc],
    *,
    threshold: Optional[float] = None,
    k: int = 10,
    backend: str = "exact",
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    pipe_name: str = PIPE_NAME,
) -> List[Pair]:
    """Pairs (i, j, score), i < j, each once, with score >= threshold (default: the pipe's stored
    decision threshold) among each item's k most similar other items; best first. Scores are
    exactly the pipe's similarity; with the exact backend the result is the brute-force one."""
    index = SimilarityIndex.build(
        nlp,
        texts_or_docs,
        backend=backend,
        batch_size=batch_size,
        n_process=n_process,
        progress=progress,
        pipe_name=pipe_name,
        store_texts=False,
    )
    return duplicate_pairs(index, threshold=threshold, k=k, progress=progress)


def duplicate_pairs(
    index: SimilarityIndex,
    *,
    threshold: Optional[float] = None,
    k: int = 10,
    query_ids: Optional[Sequence[int]] = None,
    progress: bool = False,
) -> List[Pair]:
    """`find_duplicates` over an index's own items; `query_ids` restricts the queries (a shard)."""
    limit = index.pipe.threshold if threshold is None else float(threshold)
    queries = numpy.arange(len(index)) if query_ids is None else numpy.asarray(query_ids, dtype="int64")
    found: Dict[Tuple[int, int], float] = {}
    bar = tqdm(total=len(queries), desc="searching", unit="doc", disable=not show_progress(progress))
    with bar:
        for s in range(0, len(queries), QUERY_BATCH):
            block = queries[s : s + QUERY_BATCH]
            ids, scores = index.search_vectors(index.vectors[block], k, exclude=block)
            rows, cols = numpy.nonzero((ids >= 0) & (scores >= limit))
            for q, j, score in zip(block[rows], ids[rows, cols], scores[rows, cols]):
                found[(min(int(q), int(j)), max(int(q), int(j)))] = float(score)
            bar.update(len(block))
    return sort_pairs((i, j, s) for (i, j), s in found.items())


def sort_pairs(pairs: Iterable[Pair]) -> List[Pair]:
    """Pairs best first, then by (i, j), each unordered pair once."""
    unique = {(i, j): s for i, j, s in pairs}
    return sorted(((i, j, s) for (i, j), s in unique.items()), key=lambda p: (-p[2], p[0], p[1]))


def cluster_duplicates(
    nlp: Language,
    texts_or_docs: Sequence[TextOrDoc],
    *,
    threshold: Optional[float] = None,
    k: int = 10,
    method: str = "components",
    min_size: int = 2,
    backend: str = "exact",
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    pipe_name: str = PIPE_NAME,
) -> List[List[int]]:
    """Groups of duplicates, largest first, each ranked most central first (see `group_pairs`)."""
    items = list(texts_or_docs)
    pairs = find_duplicates(
        nlp,
        items,
        threshold=threshold,
        k=k,
        backend=backend,
        batch_size=batch_size,
        n_process=n_process,
        progress=progress,
        pipe_name=pipe_name,
    )
    return group_pairs(pairs, len(items), method=method, min_size=min_size)


def group_pairs(pairs: Sequence[Pair], n: int, *, method: str = "components", min_size: int = 2) -> List[List[int]]:
    """Groups of the duplicate graph of `pairs` over n items, largest first (ties: lowest id).

    "components": connected components; members ranked by the sum of their duplicate scores
    within the group. "communities": like sentence-transformers' `community_detection`: each
    item with its duplicates is a candidate community, candidates are taken largest first and
    items already taken are dropped from later ones; the centre comes first, then its
    duplicates by score. Community sizes are bounded by the k of the search (k + 1).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    graph = _graph(pairs, n)
    groups = _components(graph, n) if method == "components" else _communities(graph, n, min_size)
    groups = [g for g in groups if len(g) >= max(1, min_size)]
    return sorted(groups, key=lambda g: (-len(g), min(g)))


def _graph(pairs: Sequence[Pair], n: int) -> coo_matrix:
    i = numpy.asarray([p[0] for p in pairs], dtype="int64")
    j = numpy.asarray([p[1] for p in pairs], dtype="int64")
    s = numpy.asarray([p[2] for p in pairs], dtype="float64")
    return coo_matrix((numpy.concatenate([s, s]), (numpy.concatenate([i, j]), numpy.concatenate([j, i]))), (n, n))


def _components(graph: coo_matrix, n: int) -> List[List[int]]:
    _, labels = connected_components(graph.tocsr(), directed=False)
    strength = numpy.asarray(graph.tocsr().sum(axis=1)).ravel()
    groups: Dict[int, List[int]] = {}
    for item in numpy.lexsort((numpy.arange(n), -strength)):
        groups.setdefault(int(labels[item]), []).append(int(item))
    return list(groups.values())


def _communities(graph: coo_matrix, n: int, min_size: int) -> List[List[int]]:
    csr = graph.tocsr()
    candidates = []
    for centre in range(n):
        start, end = csr.indptr[centre], csr.indptr[centre + 1]
        order = numpy.lexsort((csr.indices[start:end], -csr.data[start:end]))
        members = [centre] + [int(m) for m in csr.indices[start:end][order]]
        mean = float(csr.data[start:end].mean()) if end > start else 0.0
        candidates.append((-len(members), -mean, centre, members))
    taken = numpy.zeros(n, dtype=bool)
    groups = []
    for _, _, _, members in sorted(candidates):
        kept = [m for m in members if not taken[m]]
        if len(kept) >= max(1, min_size):
            taken[kept] = True
            groups.append(kept)
    return groups
