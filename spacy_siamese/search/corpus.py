"""Duplicate mining at corpus scale (see docs/design.md): candidates from compact vectors, those whose
score bound reaches the threshold scored with `pipe.compare` on the full vectors of a vector store.

Items with byte-identical full vectors are one candidate: each group's members get the pairs the
brute-force search gives them, so a collection with many copies of a text is not quadratic.
"""

import array
import hashlib
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import numpy
from spacy.language import Language
from tqdm import tqdm

from ..component import PIPE_NAME, get_similarity_pipe
from ..defaults import CANDIDATES
from ..metrics import check_ks
from ..pairwise import vector_pair_scores
from ..space import vector_space
from ..util import show_progress
from .compact import (
    BOUND_TOLERANCE,
    DIMS,
    FIT_SIZE,
    QUERY_BLOCK,
    CandidateIndex,
    CompactSpace,
    check_candidates,
    choose_candidates,
    decoded,
    distance_bound,
    from_npy_bytes,
    npy_bytes,
)
from .index import best_k
from .precision import RESCORE_MARGIN
from .store import MemoryStore

FLAT_BLOCK_CELLS = 2**25
COMPACT_BLOCK = 16384
DuplicatePair = Tuple[int, int, float]  # (i, j, score), i < j
Ranked = List[Tuple[float, int]]  # (score, id) of a query's best candidates


class CorpusIndex:
    """A vector store with compact vectors and a candidate index, for one pipe. In memory: the compact
    vectors (float16, in the faiss index too), two floats an item and one query block's candidates."""

    def __init__(
        self,
        nlp: Language,
        store: MemoryStore,
        *,
        pipe_name: str = PIPE_NAME,
        candidates: str = "auto",
        dims: int = DIMS,
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
        self.store, self.space = store, vector_space(self.pipe.comparison)
        if state is not None:
            self.kind = state["kind"]
            self.compact_space, self.compact = state["space"], state["compact"]
            self.residual, self.error, self.rep = state["residual"], state["error"], state["rep"]
            serialized = state["faiss"]
        else:
            self.kind = choose_candidates(candidates, len(store))
            self.compact_space, self.compact, self.residual, self.error = _compact(store, self.space, dims, progress)
            self.rep = identical_items(store)
            saved = f"compact-{dims}/{self.kind}.faiss"  # the candidate index, kept in the store for a rerun
            data = store.read_file(saved) if self.kind != "flat" else None
            serialized = None if data is None else numpy.frombuffer(data, dtype="uint8")
        order = numpy.argsort(self.rep, kind="stable")  # reps: one item per distinct vector (its lowest id)
        self.reps, starts, sizes = numpy.unique(self.rep[order], return_index=True, return_counts=True)
        self.members = {  # the items of each group of identical vectors (more than one), by id
            int(self.reps[g]): order[starts[g] : starts[g] + sizes[g]] for g in numpy.flatnonzero(sizes > 1)
        }
        self.grouped = numpy.zeros(len(store), dtype=bool)  # the reps of those groups
        self.grouped[numpy.fromiter(self.members, dtype="int64", count=len(self.members))] = True
        self._max_error = float(self.error.max()) if len(self.error) else 0.0
        self.n_scored = 0  # candidate pairs the last `duplicates` call scored with the pipe
        self.candidates: Optional[CandidateIndex] = None  # "flat" searches every item itself
        if self.kind != "flat":
            self.candidates = CandidateIndex(self.compact[self.reps], kind=self.kind, serialized=serialized)
            if state is None and serialized is None and store.exact:  # a compact store stays compact
                store.save_file(saved, self.candidates.serialize().tobytes())

    def state(self) -> Dict[str, Any]:
        """The fitted parts of the index, picklable: `CorpusIndex(nlp, store, state=...)`."""
        return {
            "kind": self.kind,
            "space": self.compact_space,
            "compact": self.compact,
            "residual": self.residual,
            "error": self.error,
            "rep": self.rep,
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
        texts_at: Optional[Callable[[Set[int]], Dict[int, Any]]] = None,
    ) -> List[DuplicatePair]:
        """Pairs (i, j, score), i < j, best first, with score >= threshold among each item's k best-scoring
        candidates (every item with "flat", else its c nearest); `query_ids` restricts the queries (a shard).
        A compact store's pairs are searched below the threshold and rescored (`rescore`) on the full
        vectors of their texts, `texts_at(ids)`; ValueError without it."""
        check_ks((k,), name="k")
        check_ks((c,), name="c")
        if not self.store.exact:
            if texts_at is None:
                raise ValueError(f"The {self.store.precision} vectors of {self.store.path} need their texts to rescore")
            near = self._duplicates(threshold - RESCORE_MARGIN[self.store.precision], k, c, query_ids, progress)
            return rescore(self.pipe, near, texts_at, threshold)
        return self._duplicates(threshold, k, c, query_ids, progress)

    def _duplicates(
        self, threshold: float, k: int, c: int, query_ids: Optional[Sequence[int]], progress: bool
    ) -> List[DuplicatePair]:
        queries = numpy.arange(len(self)) if query_ids is None else numpy.asarray(query_ids, dtype="int64")
        is_query = numpy.zeros(len(self), dtype=bool)
        is_query[queries] = True
        searched = numpy.unique(self.rep[queries])  # one query per distinct vector
        # (position, i, j, score) rows in the order found (a later one wins), in one growing buffer: many
        # small arrays kept alive between the blocks' temporaries would fragment the heap
        found = array.array("d")
        self.n_scored = 0
        flat_numpy = self.kind == "flat" and (self._flat_faiss() is None or self.space.bound_radius(threshold) is None)
        block = max(1, FLAT_BLOCK_CELLS // max(1, len(self.reps))) if flat_numpy else QUERY_BLOCK
        with tqdm(total=len(searched), desc="searching", unit="doc", disable=not show_progress(progress)) as bar:
            for s in range(0, len(searched), block):
                q = searched[s : s + block]
                rows, cols = self._passing(q, threshold, c)
                scores = self._scores(q[rows], cols)
                self.n_scored += len(scores)
                keep = scores >= threshold
                rows, cols, scores, _ = best_k(rows[keep], cols[keep], scores[keep], k)  # rows: positions in q
                # a query with no identical copy among itself and its k best: those are its pairs as they are
                plain = ~self.grouped[q]
                plain[rows[self.grouped[cols]]] = False
                take = plain[rows]
                found.frombytes(
                    numpy.stack([s + rows[take], q[rows[take]], cols[take], scores[take]], axis=1).tobytes()
                )
                ranked: Dict[int, Ranked] = {int(p): [] for p in numpy.flatnonzero(~plain)}
                for p, j, score in zip(rows[~take].tolist(), cols[~take].tolist(), scores[~take].tolist()):
                    ranked[p].append((score, j))
                multi = numpy.flatnonzero(self.grouped[q])
                for p, score in zip(multi.tolist(), self._scores(q[multi], q[multi]).tolist()):
                    ranked[p].append((score, -1))  # -1: the group's other members, at this score
                for p, pairs in ranked.items():
                    group = self._group_pairs(int(q[p]), pairs, k, threshold, is_query)
                    found.extend(value for i, j, score in group for value in (s + p, i, j, score))
                bar.update(len(q))
        rows = numpy.frombuffer(found, dtype="float64").reshape(-1, 4)
        return _sorted_pairs(rows[numpy.argsort(rows[:, 0], kind="stable"), 1:])

    def _group_pairs(self, r: int, ranked: Ranked, k: int, threshold: float, is_query: Any) -> List[DuplicatePair]:
        """The pairs of the members of group r (those that are queries) from the group's k best
        other distinct vectors (`ranked`, with (score, -1) for the members' own score): each
        member's k best others by score, ties by id, as a search over every item would rank them."""
        members = self.members.get(r)
        others: Ranked = []  # the items of the k best other groups, at most k of each
        own_score: Optional[float] = None
        for score, j in ranked:
            if j < 0:
                own_score = score if score >= threshold else None
            else:
                others.extend((score, int(m)) for m in self.members.get(j, [j])[:k])
        if members is None:
            return [(r, j, score) for score, j in sorted(others, key=lambda p: (-p[0], p[1]))[:k]]
        pairs: List[DuplicatePair] = []
        first = [int(m) for m in members[: k + 1]]
        common = None
        for i in members[is_query[members]]:
            i = int(i)
            if i not in first and common is not None:
                best = common
            else:
                mates = [(own_score, m) for m in first if m != i][:k] if own_score is not None else []
                best = sorted(mates + others, key=lambda p: (-p[0], p[1]))[:k]
                if i not in first:
                    common = best
            pairs.extend((i, j, score) for score, j in best)
        return pairs

    def _passing(self, q: numpy.ndarray, threshold: float, c: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(query row, item id) of the candidates of queries `q` whose score bound (if any) reaches the threshold."""
        radius = self.space.bound_radius(threshold)
        rows: Optional[numpy.ndarray] = None  # the query row of each found pair, for a range search
        qrow = q[:, None]
        if self.kind == "flat" and radius is not None and numpy.isfinite(radius) and self._flat_faiss() is not None:
            # every item within the radius in the compact space (a superset of the passing ones)
            # radius of the rounded vectors: sqrt(d2) - e_q - e_x <= sqrt(radius) for every passing pair
            reach = numpy.sqrt(radius) + float(self.error[q].max()) + self._max_error
            lims, d2_found, found = self._flat_faiss().range_search(
                decoded(self.compact[q]), reach * reach * (1 + 1e-4) + 1e-4
            )
            rows = numpy.repeat(numpy.arange(len(q)), numpy.diff(lims.astype("int64")))
            ids, d2 = self.reps[found.astype("int64")][None, :], d2_found[None, :]
            qrow = q[rows][None, :]
        elif self.kind == "flat":
            items, queries = decoded(self.compact[self.reps]), decoded(self.compact[q])
            d2 = (
                numpy.einsum("ij,ij->i", items, items)[None, :]
                - 2.0 * (queries @ items.T)
                + numpy.einsum("ij,ij->i", queries, queries)[:, None]
            )
            ids = numpy.broadcast_to(self.reps, d2.shape)
        else:
            assert self.candidates is not None
            found_ids, d2 = self.candidates.search(self.compact[q], c + 1)
            ids = numpy.where(found_ids >= 0, self.reps[numpy.maximum(found_ids, 0)], -1)
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
        """A faiss exhaustive index over the distinct compact vectors, for range search (None without faiss)."""
        if not hasattr(self, "_flat"):
            try:
                import faiss
            except ImportError:
                self._flat = None
            else:
                self._flat = faiss.IndexFlatL2(self.compact.shape[1])
                self._flat.add(decoded(self.compact[self.reps]))
        return self._flat

    def _scores(self, a: numpy.ndarray, b: numpy.ndarray) -> numpy.ndarray:
        """`pipe.compare` of items a[t] and b[t], in blocks."""
        out = numpy.zeros(len(a), dtype="float32")
        for s in range(0, len(a), 8192):
            out[s : s + 8192] = self.pipe.compare(self.store.rows(a[s : s + 8192]), self.store.rows(b[s : s + 8192]))
        return out


def rescore(
    pipe: Any, pairs: List[DuplicatePair], texts_at: Callable[[Set[int]], Dict[int, Any]], threshold: float
) -> List[DuplicatePair]:
    """Pairs found on compact vectors rescored with `pipe.compare` of full vectors encoded again from their
    texts (`texts_at(ids)`: {id: text or doc}), each score `doc.similarity`; those below `threshold` dropped."""
    if not pairs:
        return []
    ids = sorted({i for i, j, _ in pairs} | {j for i, j, _ in pairs})
    texts = texts_at(set(ids))
    vectors = pipe.encode([texts[i] for i in ids])
    where = {item: row for row, item in enumerate(ids)}
    a, b = (numpy.asarray([where[int(pair[side])] for pair in pairs], dtype="int64") for side in (0, 1))
    scores = vector_pair_scores(pipe.compare, vectors, vectors, a, b, block_size=8192)
    return sort_pairs((i, j, float(score)) for (i, j, _), score in zip(pairs, scores) if score >= threshold)


def sort_pairs(pairs: Iterable[DuplicatePair]) -> List[DuplicatePair]:
    """Pairs best first, then by (i, j), each unordered pair once (at the score it was last given)."""
    return _sorted_pairs(numpy.asarray(list(pairs), dtype="float64").reshape(-1, 3))


def _sorted_pairs(rows: numpy.ndarray) -> List[DuplicatePair]:
    """`sort_pairs` of (i, j, score) rows, float64 (n, 3), in numpy."""
    ends = rows[:, :2].astype("int64")
    lo, hi = ends.min(axis=1), ends.max(axis=1)
    key = lo * (int(hi.max()) + 1 if len(hi) else 1) + hi
    last = len(rows) - 1 - numpy.unique(key[::-1], return_index=True)[1]  # each pair's last row
    lo, hi, scores = lo[last], hi[last], rows[last, 2]
    order = numpy.lexsort((hi, lo, -scores))
    return list(zip(lo[order].tolist(), hi[order].tolist(), scores[order].tolist()))


def identical_items(store: MemoryStore) -> numpy.ndarray:
    """For each item, the lowest id whose full vector (learned and lexical columns) is byte-identical to its own."""
    rep = numpy.arange(len(store))
    first: Dict[bytes, int] = {}
    lexical = store.lexical
    for start in range(0, len(store), COMPACT_BLOCK):
        learned = numpy.ascontiguousarray(store.learned[start : start + COMPACT_BLOCK])
        for i, row in enumerate(learned, start):
            key = hashlib.blake2b(row.tobytes(), digest_size=16)
            if lexical is not None:
                a, b = lexical.indptr[i], lexical.indptr[i + 1]
                key.update(lexical.indices[a:b].tobytes())
                key.update(lexical.data[a:b].tobytes())
            rep[i] = first.setdefault(key.digest(), i)
    return rep


def _compact(
    store: MemoryStore, space: Any, dims: int, progress: bool
) -> Tuple[CompactSpace, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The compact space fitted on the first FIT_SIZE items, and every item's compact vector, residual
    norm and rounding error (read back from the store if an earlier run saved them)."""
    names = [f"compact-{dims}/{name}" for name in ("space.npy", "compact.npy", "residual.npy", "error.npy")]
    saved = [store.read_file(name) for name in names]
    if all(data is not None for data in saved):
        arrays = [from_npy_bytes(data) for data in saved[1:] if data is not None]
        return CompactSpace.from_bytes(saved[0] or b""), arrays[0], arrays[1], arrays[2]
    compact_space = CompactSpace.fit(space.metric_learned(store.learned[: min(len(store), FIT_SIZE)]), dims=dims)
    compact = numpy.zeros((len(store), compact_space.dims), dtype="float16")
    residual, error = numpy.zeros((2, len(store)), dtype="float32")
    with tqdm(total=len(store), desc="compacting", unit="doc", disable=not show_progress(progress)) as bar:
        for start in range(0, len(store), COMPACT_BLOCK):
            block = slice(start, min(start + COMPACT_BLOCK, len(store)))
            compact[block], residual[block], error[block] = compact_space.project(
                space.metric_learned(store.learned[block])
            )
            bar.update(block.stop - block.start)
    if store.exact:  # a compact store (`precision.py`) is not grown by this cache: a rerun computes it again
        store.save_file(names[0], compact_space.to_bytes())
        for name, array in zip(names[1:], (compact, residual, error)):
            store.save_file(name, npy_bytes(array))
    return compact_space, compact, residual, error
