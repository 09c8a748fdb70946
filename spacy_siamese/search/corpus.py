"""Duplicate mining at corpus scale: a vector store on disk, compact vectors for candidates, and
the pipe's own comparison for every score that is returned.

`CorpusIndex` holds a `VectorStore` (full vectors, memory-mapped), the compact PCA vectors and
residual norms of its items (`spacy_siamese.search.compact`) and a candidate index over them.
`duplicates` finds, for every item, the items among its candidates whose score is at least the
threshold: candidates whose score bound is below the threshold are dropped without scoring, the
others are scored with `pipe.compare` on the full vectors, so every returned score is exactly
`doc.similarity` of the two texts. With `candidates="flat"` every item is a candidate (the
result is the brute-force one); "ivf" and "hnsw" take each item's `c` nearest compact vectors.

Memory: the compact vectors (float16, 2 * dims bytes an item, the same again in a faiss
index), a residual norm and a rounding error an item, and one query block's candidate arrays;
the full vectors stay on disk and are read for the candidates that pass the bound.
"""

from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
from spacy.language import Language
from tqdm import tqdm

from ..component import PIPE_NAME, get_similarity_pipe
from ..util import atomic_write, import_extra, show_progress
from .compact import (
    BOUND_TOLERANCE,
    DIMS,
    FIT_SIZE,
    QUERY_BLOCK,
    CandidateIndex,
    CompactSpace,
    decoded,
    distance_bound,
)
from .space import vector_space
from .store import MemoryStore

CANDIDATE_KINDS = ("auto", "flat", "ivf", "hnsw")
# "auto" searches every item up to this many items, then an IVF index (when faiss is installed).
FLAT_LIMIT = 30_000
CANDIDATES = 50
FLAT_BLOCK_CELLS = 2**25
COMPACT_BLOCK = 16384
DuplicatePair = Tuple[int, int, float]  # (i, j, score), i < j


class CorpusIndex:
    """A vector store with compact vectors and a candidate index, for one pipe."""

    def __init__(
        self,
        nlp: Language,
        store: MemoryStore,
        *,
        pipe_name: str = PIPE_NAME,
        candidates: str = "auto",
        dims: int = DIMS,
        nprobe: int = 16,
        progress: bool = False,
        state: Optional[Dict[str, Any]] = None,
    ) -> None:
        """An index over `store` (a `VectorStore` on disk or a `MemoryStore`); `state` is what
        `state()` of a built index returned, to skip fitting and building (Ray workers)."""
        check_candidates(candidates)
        self.pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
        if store.model_id != self.pipe.model_id:
            raise ValueError(
                f"The vector store at {store.path} was written by siamese_similarity model '{store.model_id}', "
                f"but the pipe is model '{self.pipe.model_id}': encode the collection again with this pipeline."
            )
        self.store = store
        self.space = vector_space(self.pipe.comparison)
        saved = None  # the candidate index of a store on disk, kept there for a rerun
        if state is not None:
            self.kind = state["kind"]
            self.compact_space, self.compact = state["space"], state["compact"]
            self.residual, self.error = state["residual"], state["error"]
            serialized = state["faiss"]
        else:
            self.kind = _choose(candidates, len(store))
            self.compact_space, self.compact, self.residual, self.error = _compact(store, self.space, dims, progress)
            if store.path is not None and self.kind != "flat":
                saved = store.path / f"compact-{dims}" / f"{self.kind}.faiss.npy"
            serialized = numpy.load(saved) if saved is not None and saved.exists() else None
        self._max_error = float(self.error.max()) if len(self.error) else 0.0
        self.n_scored = 0  # candidate pairs the last `duplicates` call scored with the pipe
        self.candidates: Optional[CandidateIndex] = None  # "flat" searches every item itself
        if self.kind != "flat":
            self.candidates = CandidateIndex(self.compact, kind=self.kind, nprobe=nprobe, serialized=serialized)
            if saved is not None and serialized is None:
                with atomic_write(saved) as file:
                    numpy.save(file, numpy.asarray(self.candidates.serialize()))

    def state(self) -> Dict[str, Any]:
        """The fitted parts of the index, picklable: `CorpusIndex(nlp, store, state=...)`."""
        return {
            "kind": self.kind,
            "space": self.compact_space,
            "compact": self.compact,
            "residual": self.residual,
            "error": self.error,
            "faiss": None if self.candidates is None else self.candidates.serialize(),
        }

    def __len__(self) -> int:
        return len(self.store)

    def duplicates(
        self,
        threshold: float,
        *,
        k: int = 10,
        c: int = CANDIDATES,
        query_ids: Optional[Sequence[int]] = None,
        progress: bool = False,
    ) -> List[DuplicatePair]:
        """Pairs (i, j, score), i < j, best first, with score >= threshold among each item's k
        best-scoring candidates (every item with "flat", its c nearest compact vectors
        otherwise); `query_ids` restricts the queries (a shard)."""
        if k < 0 or c < 0:
            raise ValueError(f"k and c must be at least 0, got k={k}, c={c}")
        queries = numpy.arange(len(self)) if query_ids is None else numpy.asarray(query_ids, dtype="int64")
        found: Dict[Tuple[int, int], float] = {}
        self.n_scored = 0
        flat_numpy = self.kind == "flat" and (self._flat_faiss() is None or self.space.bound_radius(threshold) is None)
        block = max(1, FLAT_BLOCK_CELLS // max(1, len(self))) if flat_numpy else QUERY_BLOCK
        bar = tqdm(total=len(queries), desc="searching", unit="doc", disable=not show_progress(progress))
        with bar:
            for s in range(0, len(queries), block):
                q = queries[s : s + block]
                rows, cols = self._passing(q, threshold, c)
                scores = self._scores(q[rows], cols)
                self.n_scored += len(scores)
                keep = scores >= threshold
                for i, j, score in _top_k(q[rows][keep], cols[keep], scores[keep], k):
                    found[(min(i, j), max(i, j))] = score
                bar.update(len(q))
        return sort_pairs((i, j, s) for (i, j), s in found.items())

    def _passing(self, q: numpy.ndarray, threshold: float, c: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(query row, item id) of the candidates of queries `q` whose score bound reaches the
        threshold (all candidates for a comparison without a bound)."""
        radius = self.space.bound_radius(threshold)
        if self.kind == "flat" and radius is not None and numpy.isfinite(radius) and self._flat_faiss() is not None:
            # every item within the radius in the compact space (a superset of the passing ones)
            # radius of the rounded vectors: sqrt(d2) - e_q - e_x <= sqrt(radius) for every passing pair
            reach = numpy.sqrt(radius) + float(self.error[q].max()) + self._max_error
            lims, d2_found, found = self._flat_faiss().range_search(
                decoded(self.compact[q]), reach * reach * (1 + 1e-4) + 1e-4
            )
            rows = numpy.repeat(numpy.arange(len(q)), numpy.diff(lims.astype("int64")))
            ids, d2 = found.astype("int64")[None, :], d2_found[None, :]
            qrow = q[rows][None, :]
        elif self.kind == "flat":
            items, queries = decoded(self.compact), decoded(self.compact[q])
            d2 = (
                numpy.einsum("ij,ij->i", items, items)[None, :]
                - 2.0 * (queries @ items.T)
                + numpy.einsum("ij,ij->i", queries, queries)[:, None]
            )
            ids = numpy.broadcast_to(numpy.arange(len(self)), d2.shape)
            qrow = q[:, None]
            rows = None
        else:
            assert self.candidates is not None
            ids, d2 = self.candidates.search(self.compact[q], c + 1)
            qrow = q[:, None]
            rows = None
        valid = (ids >= 0) & (ids != qrow)
        item = numpy.maximum(ids, 0)
        lower = distance_bound(d2, self.residual[qrow], self.residual[item], self.error[qrow], self.error[item])
        bound = self.space.score_bound(lower)
        if bound is not None:
            valid &= bound + BOUND_TOLERANCE >= threshold
        if rows is not None:  # range search: one row of found (query, item) pairs
            keep = valid[0]
            return rows[keep], ids[0][keep]
        found_rows, cols = numpy.nonzero(valid)
        return found_rows, numpy.asarray(ids[found_rows, cols], dtype="int64")

    def _flat_faiss(self) -> Any:
        """A faiss exhaustive index over the compact vectors, for range search (None without faiss)."""
        if not hasattr(self, "_flat"):
            try:
                import faiss
            except ImportError:
                self._flat = None
            else:
                self._flat = faiss.IndexFlatL2(self.compact.shape[1])
                self._flat.add(decoded(self.compact))
        return self._flat

    def _scores(self, a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
        """`pipe.compare` of items a[t] and b[t], in blocks."""
        out = numpy.zeros(len(a), dtype="float32")
        for s in range(0, len(a), 8192):
            out[s : s + 8192] = self.pipe.compare(self.store.rows(a[s : s + 8192]), self.store.rows(b[s : s + 8192]))
        return out


def sort_pairs(pairs: Iterable[DuplicatePair]) -> List[DuplicatePair]:
    """Pairs best first, then by (i, j), each unordered pair once."""
    unique = {(i, j): s for i, j, s in pairs}
    return sorted(((i, j, s) for (i, j), s in unique.items()), key=lambda p: (-p[2], p[0], p[1]))


def _choose(kind: str, n: int) -> str:
    if kind != "auto":
        return kind
    if n <= FLAT_LIMIT:
        return "flat"
    try:
        import faiss  # noqa: F401
    except ImportError:
        return "flat"
    return "ivf"


def _compact(
    store: MemoryStore, space: Any, dims: int, progress: bool
) -> Tuple[CompactSpace, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The compact space fitted on the first FIT_SIZE items, and every item's compact vector
    (float16), residual norm and rounding error (read from the store directory when an earlier
    run saved them)."""
    path = None if store.path is None else store.path / f"compact-{dims}"
    files = ("space.npz", "compact.npy", "residual.npy", "error.npy")
    if path is not None and all((path / name).exists() for name in files):
        arrays = [numpy.load(path / name) for name in files[1:]]
        return CompactSpace.load(path / "space.npz"), arrays[0], arrays[1], arrays[2]
    fit = space.metric_learned(store.learned[: min(len(store), FIT_SIZE)])
    compact_space = CompactSpace.fit(fit, dims=dims)
    compact = numpy.zeros((len(store), compact_space.dims), dtype="float16")
    residual = numpy.zeros(len(store), dtype="float32")
    error = numpy.zeros(len(store), dtype="float32")
    bar = tqdm(total=len(store), desc="compacting", unit="doc", disable=not show_progress(progress))
    with bar:
        for start in range(0, len(store), COMPACT_BLOCK):
            block = slice(start, min(start + COMPACT_BLOCK, len(store)))
            compact[block], residual[block], error[block] = compact_space.project(
                space.metric_learned(store.learned[block])
            )
            bar.update(block.stop - block.start)
    if path is not None:
        path.mkdir(exist_ok=True)
        compact_space.save(path / "space.npz")
        for name, array in zip(files[1:], (compact, residual, error)):
            with atomic_write(path / name) as file:
                numpy.save(file, array)
    return compact_space, compact, residual, error


def check_candidates(candidates: str) -> None:
    """Refuse an unknown candidate kind, and "ivf" or "hnsw" without faiss: before any encoding."""
    if candidates not in CANDIDATE_KINDS:
        raise ValueError(f"candidates must be one of {', '.join(CANDIDATE_KINDS)}, got {candidates!r}")
    if candidates in ("ivf", "hnsw"):
        import_extra("faiss", "ann", f"The {candidates} candidate index")


def _top_k(rows: numpy.ndarray, cols: numpy.ndarray, scores: numpy.ndarray, k: int) -> List[Tuple[int, int, float]]:
    """The k best (row, col, score) of each row, ties by col."""
    order = numpy.lexsort((cols, -scores, rows))
    rows, cols, scores = rows[order], cols[order], scores[order]
    first = numpy.searchsorted(rows, rows, side="left")
    rank = numpy.arange(len(rows)) - first
    keep = rank < k
    return [(int(i), int(j), float(s)) for i, j, s in zip(rows[keep], cols[keep], scores[keep])]
