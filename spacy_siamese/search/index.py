"""`SimilarityIndex`: search a collection with the pipe's own similarity.

Candidates come from a vector space where a fast metric ranks like the comparison (see
`spacy_siamese.search.space`); every returned score is then re-scored with `pipe.compare`, so
it is exactly `doc.similarity` of the query and the hit (as the index encoded them).

Backends: "exact" (numpy, the default: exactly the brute-force top-k for every comparison),
"faiss" (faiss HNSW, approximate) and "faiss-flat" (faiss exhaustive search, exact in the vector
space but without the exact backend's guarantee at ties); faiss needs `spacy-siamese[ann]`.
"""

from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from spacy.language import Language

from ..component import PIPE_NAME, get_similarity_pipe
from ..pairwise import vector_pair_scores, vector_similarity_matrix
from ..util import import_extra
from .encode import TextOrDoc, as_list, encode_with_texts
from .space import vector_space

FORMAT = "spacy_siamese.index.v1"
BACKENDS = ("exact", "faiss", "faiss-flat")
META_KEYS = ("model_id", "pipe_name", "backend", "size", "width", "c", "settings", "texts")
# Candidates within this fraction of |q|^2 + max |x|^2 of the k-th best key are re-scored:
# it covers the float32 rounding of the fast metric and of the comparison.
TOLERANCE = 2e-4
# Hybrid scores from matrix products (float64) and from the comparison (float32) differ by
# rounding only: candidates within this of the k-th best are re-scored.
SCORE_TOLERANCE = 1e-4
BLOCK_BYTES = 64 * 2**20  # bound on one block of query x item keys
ITEM_BLOCK_BYTES = 64 * 2**20  # bound on one block of items converted for scoring (float64)
Hits = List[List[Tuple[int, float]]]


class SimilarityIndex:
    """A collection of learned vectors of one model, searchable with that model's similarity.

    Exactness by comparison: Cauchy ranks like L2 between sqrt(w)-scaled vectors, cosine like the
    inner product of normalised vectors, exp(-||a - b||) like L2 or L1 (all exact). A hybrid
    (HybridSimilarity.v1) over Cauchy or cosine is scored with matrix products by the exact
    backend (exact); the faiss backends take candidates from a combined L2 space. The feature
    head is not a metric: the exact backend scores the query against every item with the
    comparison (brute force, as for L1), the faiss backends (or `c=N`) take the N
    nearest items by L2 between the learned vectors and re-score only those.
    """

    def __init__(
        self,
        nlp: Language,
        vectors: Optional[numpy.ndarray] = None,
        *,
        backend: str = "exact",
        pipe_name: str = PIPE_NAME,
        texts: Optional[List[str]] = None,
        c: Optional[int] = None,
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 128,
    ) -> None:
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
        if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c < 1):
            raise ValueError(f"c (candidates re-scored per query) must be None or at least 1, got {c!r}")
        self.nlp = nlp
        self.pipe_name = pipe_name
        self.pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
        self.model_id: str = self.pipe._require_initialized()
        self.space = vector_space(self.pipe.comparison)
        self.backend = backend
        self.c = c  # candidates re-scored per query, as `find_duplicates`' c
        self.settings = {"hnsw_m": hnsw_m, "ef_construction": ef_construction, "ef_search": ef_search}
        width = self.pipe.encoder.get_dim("nO")
        self._rows = numpy.zeros((0, width), dtype="float32")  # capacity; the first len(self) rows are in use
        self._size = 0
        self.texts: Optional[List[str]] = [] if texts is not None or vectors is None else None
        self._faiss: Any = None
        if backend != "exact":
            self._faiss = _new_faiss(backend, width, self.space.metric, self.settings)
        if vectors is not None:
            self.add_vectors(vectors, texts)

    @classmethod
    def build(
        cls,
        nlp: Language,
        texts_or_docs: Sequence[TextOrDoc],
        *,
        backend: str = "exact",
        batch_size: int = 256,
        n_process: int = 1,
        progress: bool = True,
        pipe_name: str = PIPE_NAME,
        c: Optional[int] = None,
        store_texts: bool = True,
        hnsw_m: int = 32,
        ef_construction: int = 200,
        ef_search: int = 128,
    ) -> "SimilarityIndex":
        """Encode texts (with the pipeline) or docs and index their vectors; ids are positions.
        `hnsw_m`, `ef_construction` and `ef_search` set up faiss HNSW."""
        index = cls(
            nlp,
            backend=backend,
            pipe_name=pipe_name,
            c=c,
            hnsw_m=hnsw_m,
            ef_construction=ef_construction,
            ef_search=ef_search,
        )
        if not store_texts:
            index.texts = None
        index.add(texts_or_docs, batch_size=batch_size, n_process=n_process, progress=progress)
        return index

    def __len__(self) -> int:
        return self._size

    @property
    def vectors(self) -> numpy.ndarray:
        """The items' vectors, float32 (len(self), width): row i is item i."""
        return self._rows[: self._size]

    @vectors.setter
    def vectors(self, vectors: numpy.ndarray) -> None:
        self._rows = vectors
        self._size = len(vectors)

    def add(
        self, texts_or_docs: Sequence[TextOrDoc], *, batch_size: int = 256, n_process: int = 1, progress: bool = True
    ) -> List[int]:
        """Encode and add texts or docs; returns their ids."""
        self._check_model()
        vectors, texts = encode_with_texts(
            self.nlp,
            as_list(texts_or_docs),
            pipe_name=self.pipe_name,
            batch_size=batch_size,
            n_process=n_process,
            progress=progress,
            keep_texts=self.texts is not None,
        )
        return self.add_vectors(vectors, texts)

    def add_vectors(self, vectors: numpy.ndarray, texts: Optional[List[str]] = None) -> List[int]:
        """Add vectors of this model (e.g. read back from `encode` output); returns their ids."""
        vectors = check_vectors(vectors, self.vectors.shape[1], "vectors")
        start = len(self)
        if not start:
            self.vectors = vectors
        else:  # grow the capacity geometrically, so that adding in small batches is not quadratic
            if start + len(vectors) > len(self._rows):
                grown = numpy.empty((max(start + len(vectors), 2 * len(self._rows)), vectors.shape[1]), dtype="float32")
                grown[:start] = self.vectors
                self._rows = grown
            self._rows[start : start + len(vectors)] = vectors
            self._size = start + len(vectors)
        if self.texts is not None:
            if texts is None or len(texts) != len(vectors):
                self.texts = None  # texts are kept only when every item has one
            else:
                self.texts.extend(texts)
        if self._faiss is not None and len(vectors):
            self._faiss.add(self.space.transform(vectors))
        return list(range(start, len(self.vectors)))

    def search(
        self, queries: Sequence[TextOrDoc], k: int = 10, *, batch_size: int = 256, progress: bool = False
    ) -> Hits:
        """The k best items for each query text or doc: [(id, score), ...], best first (ties by
        id), each score exactly the pipe's similarity of the query and the item."""
        self._check_model()
        vectors = self.pipe.encode(as_list(queries), batch_size=batch_size, progress=progress)
        ids, scores = self.search_vectors(vectors, k)
        return to_hits(ids, scores)

    def search_vectors(
        self, queries: numpy.ndarray, k: int = 10, *, exclude: Optional[numpy.ndarray] = None
    ) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(ids, scores) arrays of shape (n_queries, k), best first, padded with id -1 and score
        nan. `exclude` gives one id per query to leave out (the query itself, for dedupe)."""
        if k < 0:
            raise ValueError(f"k must be at least 0, got {k}")
        queries = check_vectors(queries, self.vectors.shape[1], "query vectors")
        n = len(queries)
        ids = numpy.full((n, k), -1, dtype="int64")
        scores = numpy.full((n, k), numpy.nan, dtype="float32")
        if n == 0 or k <= 0 or len(self) == 0:
            return ids, scores
        step = max(1, min(n, BLOCK_BYTES // (4 * len(self))))
        for s in range(0, n, step):
            ex = None if exclude is None else numpy.asarray(exclude[s : s + step], dtype="int64")
            rows, cols, vals = self._candidates(queries[s : s + step], k, ex)
            block_ids, block_scores = top_k(rows, cols, vals, len(queries[s : s + step]), k)
            ids[s : s + step], scores[s : s + step] = block_ids, block_scores
        return ids, scores

    # -- candidates and exact scores ----------------------------------------------------

    def _candidates(
        self, queries: numpy.ndarray, k: int, exclude: Optional[numpy.ndarray]
    ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """(query row, item id, exact score) of a superset of each query's top k."""
        if self._faiss is not None:
            return self._faiss_candidates(queries, k, exclude)
        matrix_scores = self.c is None and self.space.scores_exactly  # a hybrid's own score
        ranks_exactly = matrix_scores or (self.space.exact and self.space.metric != "l1")
        if self.c is None and not ranks_exactly:
            keys = vector_similarity_matrix(self.pipe.compare, queries, self.vectors)  # brute force: exact scores
            rows, cols = _near_kth(keys, k, exclude, numpy.zeros(len(queries), dtype="float32"))
            return rows, cols, keys[rows, cols]
        keys, tol = self._keys(queries, matrix_scores=matrix_scores)
        if not ranks_exactly:
            tol = numpy.zeros(len(queries), dtype="float32")
            k = max(k, self.c or k)
        rows, cols = _near_kth(keys, k, exclude, tol)
        return rows, cols, vector_pair_scores(self.pipe.compare, queries, self.vectors, rows, cols)

    def _keys(self, queries: numpy.ndarray, *, matrix_scores: bool = False) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """Fast-metric keys (larger is better) of queries x items, and a rounding tolerance per query;
        with `matrix_scores`, the space's own scores (`VectorSpace.scores`)."""
        if matrix_scores:
            keys = numpy.empty((len(queries), len(self)), dtype="float32")
            step = self._item_step()
            for s in range(0, len(self), step):
                keys[:, s : s + step] = self.space.scores(queries, self.vectors[s : s + step])
            return keys, numpy.full(len(queries), SCORE_TOLERANCE, dtype="float32")
        q = self.space.transform(queries)
        if self.space.metric == "l1":  # only with `c`: L1 keys of the nearest candidates
            keys = -numpy.vstack([numpy.abs(self.vectors - row).sum(axis=1) for row in q]).astype("float32")
            return keys, numpy.zeros(len(q), dtype="float32")
        keys = numpy.empty((len(q), len(self)), dtype="float32")
        max_sq = 0.0
        step = self._item_step()
        for s in range(0, len(self), step):
            x = self.space.transform(self.vectors[s : s + step])
            block = q @ x.T
            if self.space.metric == "l2":
                sq = numpy.einsum("ij,ij->i", x, x)
                max_sq = max(max_sq, float(sq.max()))
                block = 2.0 * block - sq[None, :]  # -|q - x|^2 + |q|^2
            keys[:, s : s + step] = block
        q_sq = numpy.einsum("ij,ij->i", q, q) if self.space.metric == "l2" else numpy.ones(len(q), dtype="f")
        max_sq = max_sq if self.space.metric == "l2" else 1.0
        return keys, (TOLERANCE * (q_sq + max_sq)).astype("float32")

    def _item_step(self) -> int:
        """Items per block when computing keys: the block's float64 copy stays within ITEM_BLOCK_BYTES."""
        return max(1, ITEM_BLOCK_BYTES // (8 * self.vectors.shape[1]))

    def _faiss_candidates(
        self, queries: numpy.ndarray, k: int, exclude: Optional[numpy.ndarray]
    ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        extra = 0 if exclude is None else 1
        wanted = self.c or (max(100, 10 * k) if not self.space.exact else 2 * k + 10)
        _, found = self._faiss.search(self.space.transform(queries), min(len(self), max(k, wanted) + extra))
        rows = numpy.repeat(numpy.arange(len(queries)), found.shape[1])
        cols = found.reshape(-1).astype("int64")
        keep = cols >= 0
        if exclude is not None:
            keep &= cols != exclude[rows]
        rows, cols = rows[keep], cols[keep]
        return rows, cols, vector_pair_scores(self.pipe.compare, queries, self.vectors, rows, cols)

    # -- saving -------------------------------------------------------------------------

    def save(self, path: Union[str, Path], *, model: Optional[str] = None) -> None:
        """Write the index to a directory (JSON, .npy and faiss's own format; no pickle).
        `model` records where the pipeline is, for the command line."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": FORMAT,
            "model_id": self.model_id,
            "pipe_name": self.pipe_name,
            "backend": self.backend,
            "space": self.space.kind,
            "size": len(self),
            "width": int(self.vectors.shape[1]),
            "c": self.c,
            "settings": self.settings,
            "model": model,
            "texts": self.texts is not None,
        }
        numpy.save(path / "vectors.npy", self.vectors, allow_pickle=False)
        if self.texts is not None:
            srsly.write_jsonl(path / "texts.jsonl", ({"text": t} for t in self.texts))
        if self._faiss is not None:
            import faiss

            faiss.write_index(self._faiss, str(path / "faiss.index"))
        srsly.write_json(path / "index.json", meta)

    @classmethod
    def load(cls, path: Union[str, Path], nlp: Language) -> "SimilarityIndex":
        """Read an index saved by `save`; refuses one built by another model than nlp's."""
        meta = read_meta(path)
        path = Path(path)
        pipe = get_similarity_pipe(nlp, meta["pipe_name"], initialized=True)
        if pipe.model_id != meta["model_id"]:
            raise ValueError(
                f"The index at {path} was built by siamese_similarity model '{meta['model_id']}', but the "
                f"pipeline's '{meta['pipe_name']}' pipe is model '{pipe.model_id}': their vectors live in "
                "different spaces. Load the pipeline that built the index, or build it again."
            )
        index = cls(nlp, backend="exact", pipe_name=meta["pipe_name"], c=meta["c"], **meta["settings"])
        index.backend = meta["backend"]
        shape = (meta["size"], index.vectors.shape[1])
        faiss = import_extra("faiss", "ann", "The faiss backends") if index.backend != "exact" else None
        try:
            index.vectors = numpy.load(path / "vectors.npy", allow_pickle=False)
            index.texts = [r["text"] for r in srsly.read_jsonl(path / "texts.jsonl")] if meta["texts"] else None
            if faiss is not None:
                index._faiss = faiss.read_index(str(path / "faiss.index"))
        except (OSError, EOFError, ValueError, RuntimeError) as err:
            raise ValueError(f"The index at {path} is incomplete or corrupt: {err}") from err
        found = {"vectors.npy": tuple(index.vectors.shape)}  # the shape each file holds
        if index.texts is not None:
            found["texts.jsonl"] = (len(index.texts), shape[1])
        if index._faiss is not None:
            found["faiss.index"] = (index._faiss.ntotal, index._faiss.d)
        for name, got in found.items():
            if got != shape:
                what = f"{got[0]:,} items" if got[1:] == shape[1:] else f"shape {got}"
                raise ValueError(
                    f"The index at {path} is incomplete or corrupt: {name} holds {what}, but the index has "
                    f"{shape[0]:,} items of width {shape[1]}. Build the index again."
                )
        if index.backend == "faiss":
            index._faiss.hnsw.efSearch = meta["settings"]["ef_search"]
        return index

    def _check_model(self) -> None:
        if self.pipe.model_id != self.model_id:
            raise ValueError(
                f"The '{self.pipe_name}' pipe's weights changed since the index was built (model "
                f"'{self.model_id}', now '{self.pipe.model_id}'): build the index again."
            )


def read_meta(path: Union[str, Path]) -> Dict[str, Any]:
    """An index directory's index.json, or a ValueError."""
    meta_path = Path(path) / "index.json"
    if not meta_path.exists():
        raise ValueError(f"{path} is not a saved SimilarityIndex (no index.json)")
    try:
        meta = srsly.read_json(meta_path)
    except ValueError as err:
        raise ValueError(f"{meta_path}: not valid JSON ({err})") from err
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{meta_path}: not a {FORMAT} index")
    if "candidates" in meta and "c" not in meta:  # saved before `c` had its name, when 0 meant no extra candidates
        meta["c"] = meta.pop("candidates") or None
    missing = [key for key in META_KEYS if key not in meta]
    if missing or meta["backend"] not in BACKENDS:
        problem = f"no {', '.join(missing)}" if missing else f"unknown backend {meta['backend']!r}"
        raise ValueError(f"{meta_path}: {problem}: the index is incomplete or corrupt, build it again")
    return meta


def check_vectors(vectors: numpy.ndarray, width: int, what: str) -> numpy.ndarray:
    """`vectors` as contiguous float32 of shape (n, width), or a ValueError saying what is wrong."""
    vectors = numpy.ascontiguousarray(vectors, dtype="float32")
    if vectors.ndim != 2 or vectors.shape[1] != width:
        raise ValueError(f"Expected {what} of shape (n, {width}), got {vectors.shape}")
    bad = numpy.flatnonzero(~numpy.isfinite(vectors).all(axis=1))
    if len(bad):
        rows = ", ".join(str(i) for i in bad[:5]) + (", ..." if len(bad) > 5 else "")
        raise ValueError(f"{len(bad):,} {what} are not finite (NaN or inf): rows {rows}")
    return vectors


def _near_kth(
    keys: numpy.ndarray, k: int, exclude: Optional[numpy.ndarray], tol: numpy.ndarray
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(row, col) of the keys within `tol` of each row's k-th largest key."""
    n_rows, n_cols = keys.shape
    if exclude is not None:
        keys[numpy.arange(n_rows), exclude] = -numpy.inf
    k_eff = min(k, n_cols - (0 if exclude is None else 1))
    if k_eff <= 0:
        return numpy.zeros(0, dtype="int64"), numpy.zeros(0, dtype="int64")
    kth = -numpy.partition(-keys, k_eff - 1, axis=1)[:, k_eff - 1]
    mask = keys >= (kth - tol)[:, None]
    if exclude is not None:
        mask[numpy.arange(n_rows), exclude] = False
    rows, cols = numpy.nonzero(mask)
    return rows.astype("int64"), cols.astype("int64")


def top_k(
    rows: numpy.ndarray, cols: numpy.ndarray, scores: numpy.ndarray, n_rows: int, k: int
) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Each row's k best (col, score), best first, ties by col; padded with -1 and nan."""
    ids = numpy.full((n_rows, k), -1, dtype="int64")
    out = numpy.full((n_rows, k), numpy.nan, dtype="float32")
    if len(rows) == 0:
        return ids, out
    order = numpy.lexsort((cols, -scores.astype("float64"), rows))
    rows, cols, scores = rows[order], cols[order], scores[order]
    starts = numpy.searchsorted(rows, numpy.arange(n_rows))
    rank = numpy.arange(len(rows)) - starts[rows]
    keep = rank < k
    ids[rows[keep], rank[keep]] = cols[keep]
    out[rows[keep], rank[keep]] = scores[keep]
    return ids, out


def to_hits(ids: numpy.ndarray, scores: numpy.ndarray) -> Hits:
    return [
        [(int(i), float(s)) for i, s in zip(row_ids, row_scores) if i >= 0] for row_ids, row_scores in zip(ids, scores)
    ]


def _new_faiss(backend: str, width: int, metric: str, settings: Dict[str, int]) -> Any:
    faiss = import_extra("faiss", "ann", "The faiss backends")
    faiss_metric = {"ip": faiss.METRIC_INNER_PRODUCT, "l1": faiss.METRIC_L1}.get(metric, faiss.METRIC_L2)
    if backend == "faiss-flat":
        return faiss.IndexFlat(width, faiss_metric)
    index = faiss.IndexHNSWFlat(width, settings["hnsw_m"], faiss_metric)
    index.hnsw.efConstruction = settings["ef_construction"]
    index.hnsw.efSearch = settings["ef_search"]
    return index


__all__ = ["SimilarityIndex", "read_meta", "to_hits", "top_k"]
