"""Duplicate mining over a collection: pairs above a threshold, and groups of duplicates."""

import hashlib
import numbers
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Union

import numpy
from scipy.sparse import coo_matrix
from spacy.language import Language
from spacy.tokens import Doc

from ..component import PIPE_NAME, SiameseSimilarity, get_similarity_pipe
from ..defaults import GROUP_METHODS as METHODS
from ..files import write_jsonl
from ..metrics import check_ks
from ..util import component_labels, timed
from .corpus import CANDIDATES, CorpusIndex, DuplicatePair, check_candidates
from .encode import TextOrDoc
from .resumable import encode_collection
from .store import CHUNK_SIZE, disk_errors
from .texts import Collection

# Warn when one group holds more than this share of the collection (and more than MIN_LARGE items).
LARGE_GROUP_SHARE = 0.05
MIN_LARGE = 20


class LargeGroupWarning(UserWarning):
    """One group of duplicates takes a large share of the collection: the threshold is probably too low."""


def dedupe_threshold(pipe: SiameseSimilarity, threshold: Optional[float] = None) -> float:
    """The threshold to mine duplicates with: `threshold`, else the pipe's `dedupe_threshold`, else (with a
    warning) its pair-classification threshold. ValueError for a threshold outside the pipe's score range."""
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise ValueError(f"The dedupe threshold must be a number, got {threshold!r}")
        low, high = pipe.score_range
        if not low <= float(threshold) <= high:  # NaN too
            raise ValueError(
                f"The dedupe threshold {threshold:g} is outside the range of the pipe's scores, [{low:g}, {high:g}]"
            )
        return float(threshold)
    if pipe.dedupe_threshold is not None:
        return pipe.dedupe_threshold
    warnings.warn(
        f"The '{pipe.name}' pipe has no dedupe threshold (trained before it existed, or its dev pairs never "
        f"reached precision {pipe.cfg.get('dedupe_precision')}): using its pair threshold {pipe.threshold:g}, "
        "which groups too much. Set one with `python -m spacy_siamese calibrate MODEL DEV_PAIRS` or pass a threshold.",
        UserWarning,
        stacklevel=3,
    )
    return pipe.threshold


class Duplicates(List[DuplicatePair]):
    """The pairs `find_duplicates` found (a list), with what found them: the number of items `n`, the
    `threshold` and `k`. `cluster_duplicates` groups them without encoding the items again."""

    def __init__(self, pairs: Sequence[DuplicatePair], *, n: int, threshold: float, k: int) -> None:
        super().__init__(pairs)
        self.n, self.threshold, self.k = n, threshold, k


def find_duplicates(
    nlp: Language,
    texts_or_docs: Sequence[TextOrDoc],
    *,
    threshold: Optional[float] = None,
    k: int = 10,
    candidates: str = "auto",
    c: int = CANDIDATES,
    work_dir: Optional[Union[str, Path]] = None,
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    pipe_name: str = PIPE_NAME,
    precision: str = "float32",
    dims: Optional[int] = None,
) -> Duplicates:
    """Pairs (i, j, score), i < j (positions in `texts_or_docs`), each once, best first, with score >=
    threshold (default: `dedupe_threshold(pipe)`) among each item's k best-scoring others, each score
    exactly `doc.similarity` (a `Duplicates` list, which `cluster_duplicates` groups). `candidates`: "flat"
    (every item, the brute-force result), "ivf" / "hnsw" (each item's `c` nearest compact vectors; extra
    `spacy-siamese[ann]`) or "auto" (flat for small collections). The vectors are encoded into a temporary
    store, or into `work_dir`, which a restarted call resumes, at `precision` with the first `dims` learned
    columns (`search/precision.py`: compact pairs are rescored on full vectors encoded again)."""
    limit = dedupe_threshold(get_similarity_pipe(nlp, pipe_name, initialized=True), threshold)
    check_ks((k,), name="k")
    check_ks((c,), name="c")
    check_candidates(candidates)
    items = list(texts_or_docs)
    with _store_dir(work_dir) as path:
        store = encode_collection(
            nlp,
            items,
            len(items),
            path,
            source={"items": len(items)} if work_dir is None else {"items": _fingerprint(items)},
            pipe_name=pipe_name,
            batch_size=batch_size,
            n_process=n_process,
            progress=progress,
            precision=precision,
            dims=dims,
        )
        index = CorpusIndex(nlp, store, pipe_name=pipe_name, candidates=candidates, progress=progress)
        pairs = index.duplicates(limit, k=k, c=c, progress=progress, texts_at=lambda ids: {i: items[i] for i in ids})
        return Duplicates(pairs, n=len(items), threshold=limit, k=k)


def dedupe_collection(
    nlp: Language,
    collection: Collection,
    output: Path,
    work_dir: Path,
    *,
    threshold: float,
    groups: Optional[Path] = None,
    k: int = 10,
    candidates: str = "auto",
    c: int = CANDIDATES,
    method: str = "communities",
    min_size: int = 2,
    fresh: bool = False,
    chunk_size: int = CHUNK_SIZE,
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    precision: str = "float32",
    dims: Optional[int] = None,
) -> Dict[str, Any]:
    """Write a collection's duplicate pairs (JSONL: id1, id2, score, text1, text2) to `output` and,
    given `groups`, its groups of duplicates there, as `find_duplicates` and `group_pairs` find them.
    The vectors are encoded into `work_dir`, which a stopped run resumes. Returns the run's counts,
    stage timings (`stages_s`) and settings."""
    stages: Dict[str, float] = {}
    with timed(stages, "encode"):
        store = encode_collection(
            nlp, collection.texts(), collection.n, work_dir, source=collection.source(), fresh=fresh,
            chunk_size=chunk_size, batch_size=batch_size, n_process=n_process, progress=progress,
            precision=precision, dims=dims,
        )  # fmt: skip
    with timed(stages, "index"):
        index = CorpusIndex(nlp, store, candidates=candidates, progress=progress)
    with timed(stages, "search"):
        pairs = index.duplicates(threshold, k=k, c=c, progress=progress, texts_at=collection.texts_at)
    ids = collection.ids
    with timed(stages, "pairs"):
        texts = collection.texts_at({i for pair in pairs for i in pair[:2]})
        with disk_errors(output):
            rows = (
                {"id1": ids[i], "id2": ids[j], "score": s, "text1": texts[i], "text2": texts[j]} for i, j, s in pairs
            )
            write_jsonl(output, rows)
    stats: Dict[str, Any] = {"n_docs": collection.n, "n_blank_lines": len(collection.blank_lines)}
    stats.update(n_pairs=len(pairs), n_scored=index.n_scored)
    if groups is not None:
        with timed(stages, "groups"):
            found = group_pairs(pairs, collection.n, method=method, min_size=min_size)
            texts = collection.texts_at({i for g in found for i in g})
            with disk_errors(groups):
                members = ({"group": g, "size": len(m), "members": [{"id": ids[i], "text": texts[i]} for i in m]}
                           for g, m in enumerate(found))  # fmt: skip
                write_jsonl(groups, members)
        stats.update(n_groups=len(found), largest_group=len(found[0]) if found else 0)
    stats["stages_s"] = {name: round(seconds, 2) for name, seconds in stages.items()}
    stats["settings"] = {
        "threshold": threshold, "k": k, "candidates": index.kind, "c": c,
        **(index.candidates.settings if index.candidates is not None else {}),
        "dims": index.compact_space.dims, "n_process": n_process, "chunk_size": chunk_size,
        "batch_size": batch_size, "method": method, "precision": precision, "learned_dims": store.manifest["dims"],
    }  # fmt: skip
    return stats


def cluster_duplicates(
    nlp: Language,
    texts_or_docs: Union[Sequence[TextOrDoc], Duplicates],
    *,
    threshold: Optional[float] = None,
    k: Optional[int] = None,
    method: str = "communities",
    min_size: int = 2,
    candidates: str = "auto",
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    pipe_name: str = PIPE_NAME,
) -> List[List[int]]:
    """Groups of duplicates, largest first, each ranked most central first (see `group_pairs`), of texts or
    docs (found at `k`, default 10), or of the pairs `find_duplicates` returned (nothing is encoded again)
    from `threshold` (default: theirs) up. ValueError for a lower threshold or another k than theirs."""
    if isinstance(texts_or_docs, Duplicates):
        found = texts_or_docs
        k = found.k if k is None else k
        if (threshold is not None and not threshold >= found.threshold) or k != found.k:  # NaN too
            raise ValueError(
                f"These duplicates were found at threshold {found.threshold:g} and k={found.k}; they cannot be "
                f"grouped at threshold {found.threshold if threshold is None else threshold:g} and k={k}: "
                "find them again with those settings, or group them with theirs."
            )
        pairs = [p for p in found if threshold is None or p[2] >= threshold]
        return group_pairs(pairs, found.n, method=method, min_size=min_size)
    pairs = find_duplicates(
        nlp,
        texts_or_docs,
        threshold=threshold,
        k=10 if k is None else k,
        candidates=candidates,
        batch_size=batch_size,
        n_process=n_process,
        progress=progress,
        pipe_name=pipe_name,
    )
    return group_pairs(pairs, pairs.n, method=method, min_size=min_size)


def group_pairs(
    pairs: Sequence[DuplicatePair], n: int, *, method: str = "communities", min_size: int = 2
) -> List[List[int]]:
    """Groups of the duplicate graph of `pairs` over n items, largest first (ties: lowest id); a group
    of more than 5% of the items (and more than 20) warns (`LargeGroupWarning`). "communities" (as
    sentence-transformers' `community_detection`): an item and its own duplicates, taken largest first,
    centre first, then by score; it does not chain. "components": connected components, which chain,
    ranked by the sum of their scores within the group."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    graph = _graph(pairs, n)
    groups = _components(graph, n) if method == "components" else _communities(graph, n, min_size)
    groups = sorted((g for g in groups if len(g) >= max(1, min_size)), key=lambda g: (-len(g), min(g)))
    if groups and len(groups[0]) > max(MIN_LARGE, LARGE_GROUP_SHARE * n):
        if method == "communities":
            why, advice = "one item has that many duplicates", "a smaller k"
        else:
            why, advice = "duplicates chained into it", "method='communities' with a smaller k"
        warnings.warn(
            f"One group holds {len(groups[0]):,} of {n:,} items ({len(groups[0]) / n:.0%}): {why} ({method}). "
            f"Raise the threshold or use {advice}.",
            LargeGroupWarning,
            stacklevel=2,
        )
    return groups


def _graph(pairs: Sequence[DuplicatePair], n: int) -> coo_matrix:
    i, j = (numpy.asarray([p[side] for p in pairs], dtype="int64") for side in (0, 1))
    s = numpy.asarray([p[2] for p in pairs], dtype="float64")
    outside = numpy.flatnonzero((numpy.minimum(i, j) < 0) | (numpy.maximum(i, j) >= n))
    if len(outside):
        raise ValueError(
            f"Pair {outside[0]} {tuple(pairs[outside[0]][:2])} names an item outside the {n:,} items (ids are "
            f"positions, 0 to {n - 1})"
        )
    i, j, s = i[i != j], j[i != j], s[i != j]  # an item is not its own duplicate
    return coo_matrix((numpy.concatenate([s, s]), (numpy.concatenate([i, j]), numpy.concatenate([j, i]))), (n, n))


def _components(graph: coo_matrix, n: int) -> List[List[int]]:
    labels = component_labels(n, graph.row, graph.col)
    strength = numpy.asarray(graph.tocsr().sum(axis=1)).ravel()
    groups: Dict[int, List[int]] = {}
    for item in numpy.lexsort((numpy.arange(n), -strength)):
        groups.setdefault(int(labels[item]), []).append(int(item))
    return list(groups.values())


def _communities(graph: coo_matrix, n: int, min_size: int) -> List[List[int]]:
    """Greedy communities: each item's neighbourhood (itself, then its neighbours by falling score), the
    largest first, then the strongest (mean score), then the lowest item, keeps its items not taken."""
    csr = graph.tocsr()
    degree = numpy.diff(csr.indptr)
    rows = numpy.repeat(numpy.arange(n), degree)
    neighbours = csr.indices[numpy.lexsort((csr.indices, -csr.data, rows))].tolist()
    sums = numpy.bincount(rows, weights=csr.data, minlength=n)
    means = numpy.divide(sums, degree, out=numpy.zeros(n), where=degree > 0)
    starts = csr.indptr.tolist()
    taken = bytearray(n)
    groups = []
    for centre in numpy.lexsort((numpy.arange(n), -means, -degree)).tolist():
        if starts[centre] == starts[centre + 1]:  # the rest stand alone: groups of one, in item order
            groups.extend([[item] for item in range(n) if not taken[item]] if min_size <= 1 else [])
            break
        kept = [m for m in [centre, *neighbours[starts[centre] : starts[centre + 1]]] if not taken[m]]
        if len(kept) >= max(1, min_size):
            for m in kept:
                taken[m] = 1
            groups.append(kept)
    return groups


@contextmanager
def _store_dir(work_dir: Optional[Union[str, Path]]) -> Iterator[Path]:
    if work_dir is not None:
        yield Path(work_dir)
        return
    with tempfile.TemporaryDirectory(prefix="spacy-siamese-") as tmp:
        yield Path(tmp) / "store"


def _fingerprint(items: Sequence[TextOrDoc]) -> str:
    """A digest of the items' texts, so that a work_dir is resumed only for the same collection."""
    digest = hashlib.sha256()
    for item in items:
        digest.update((item.text if isinstance(item, Doc) else item).encode("utf8"))
        digest.update(b"\0")
    return digest.hexdigest()
