"""`SimilarityIndex`: search a collection with the pipe's own similarity (see docs/search.md).

Candidates come from a vector space where a fast metric ranks like the comparison
(`spacy_siamese.space`), and every returned score is `pipe.compare` of the query and the hit.
"""

import gzip
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy
from spacy.language import Language

from ..component import PIPE_NAME, get_similarity_pipe
from ..encoding import texts_or_docs_list
from ..files import atomic_directory
from ..metrics import check_ks
from ..pairwise import vector_pair_scores, vector_similarity_matrix
from ..space import vector_space
from .compact import CandidateIndex, check_candidates, choose_candidates
from .encode import TextOrDoc, encode_with_texts
from .precision import check_precision, dequantize, is_full, quantize
from .store import MANIFEST, STORE, VectorStore, read_manifest, write_manifest, write_store

OLD_FORMAT = "spacy_siamese.index.v1"
TEXTS = "texts.jsonl.gz"  # an index's texts, gzipped: they do not shrink with the vectors' precision
# Candidates within this fraction of |q|^2 + max |x|^2 of the k-th best key are re-scored:
# it covers the float32 rounding of the fast metric and of the comparison.
TOLERANCE = 2e-4
# Hybrid scores from matrix products (float64) and from the comparison (float32) differ by
# rounding only: candidates within this of the k-th best are re-scored.
SCORE_TOLERANCE = 1e-4
# IVF lists probed, and a quarter of the HNSW search breadth, per query (CandidateIndex)
NPROBE = 64
BLOCK_BYTES = 64 * 2**20  # bound on one block of query x item keys
ITEM_BLOCK_BYTES = 64 * 2**20  # bound on one block of items converted for scoring (float64)
SCORE_BLOCK_BYTES = 2 * 2**20  # the rows of one block of candidate pairs re-scored with `pipe.compare`
Hits = List[List[Tuple[int, float]]]


class SimilarityIndex:
    """A collection of learned vectors of one model, searchable with that model's similarity.

    candidates (str): "flat" (the default: the exact brute-force top k), "ivf" or "hnsw" (a faiss index,
        approximate; extra `spacy-siamese[ann]`) or "auto" (flat up to 30,000 items, then ivf).
    c (int): Candidates re-scored per query (ivf, hnsw; with flat, a comparison that is not a metric
        re-scores its c nearest by L2 instead of every item).
    precision (str), dims (int): the items' learned columns are kept compact (`precision.py`), in memory
        and saved; `search` rescores 2k + 10 candidates on the full vectors of their texts, encoded again.
    A flat search maps the items to its space once and keeps them (a copy for Cauchy and cosine).
    """

    def __init__(
        self,
        nlp: Language,
        vectors: Optional[numpy.ndarray] = None,
        *,
        candidates: str = "flat",
        pipe_name: str = PIPE_NAME,
        texts: Optional[List[str]] = None,
        c: Optional[int] = None,
        precision: str = "float32",
        dims: Optional[int] = None,
    ) -> None:
        check_candidates(candidates)
        if c is not None and (isinstance(c, bool) or not isinstance(c, int) or c < 1):
            raise ValueError(f"c (candidates re-scored per query) must be None or at least 1, got {c!r}")
        self.nlp, self.pipe_name = nlp, pipe_name
        self.pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
        self.model_id: str = self.pipe._require_initialized()
        self.space = vector_space(self.pipe.comparison)
        self.candidates = candidates
        self.c = c  # candidates re-scored per query, as `find_duplicates`' c
        width = self.pipe.encoder.get_dim("nO")
        self.precision, self.dims = precision, check_precision(precision, dims, width - self.space.lexical_width)
        self.exact = is_full(precision, self.dims, width - self.space.lexical_width)
        self._rows = numpy.zeros((0, width), dtype="float32")  # capacity; the first len(self) rows are in use
        self._size = 0
        self.texts: Optional[List[str]] = [] if texts is not None or vectors is None else None
        self.ids: Optional[List[Any]] = None  # the collection's own ids, when it had them (`load`)
        self._ann: Optional[CandidateIndex] = None  # built when an ivf or hnsw search needs it
        self._mapped: Optional[Tuple[numpy.ndarray, numpy.ndarray]] = None  # `_mapped_items`
        if vectors is not None:
            self.add_vectors(vectors, texts)

    @classmethod
    def build(
        cls,
        nlp: Language,
        texts_or_docs: Sequence[TextOrDoc],
        *,
        candidates: str = "flat",
        batch_size: int = 256,
        n_process: int = 1,
        progress: bool = True,
        pipe_name: str = PIPE_NAME,
        c: Optional[int] = None,
        store_texts: bool = True,
        precision: str = "float32",
        dims: Optional[int] = None,
    ) -> "SimilarityIndex":
        """Encode texts (with the pipeline) or docs and index their vectors; ids are positions. A compact
        index (`precision`, `dims`) keeps its texts to rescore: ValueError with `store_texts=False`."""
        index = cls(nlp, candidates=candidates, pipe_name=pipe_name, c=c, precision=precision, dims=dims)
        if not store_texts and not index.exact:
            raise ValueError(f"A {precision} index (dims {dims}) keeps its texts to rescore: store_texts must be True")
        if not store_texts:
            index.texts = None
        index.add(texts_or_docs, batch_size=batch_size, n_process=n_process, progress=progress)
        return index

    @property
    def kind(self) -> str:
        """The candidate kind searched: `candidates`, with "auto" decided by the index's size."""
        return choose_candidates(self.candidates, len(self))

    def __len__(self) -> int:
        return self._size

    @property
    def vectors(self) -> numpy.ndarray:
        """The items' vectors, float32 (len(self), width): row i is item i."""
        return self._rows[: self._size]

    def add(
        self, texts_or_docs: Sequence[TextOrDoc], *, batch_size: int = 256, n_process: int = 1, progress: bool = True
    ) -> List[int]:
        """Encode and add texts or docs (a sequence or array of them, else TypeError, e.g. for None); their ids."""
        self._check_model()
        vectors, texts = encode_with_texts(
            self.nlp,
            texts_or_docs_list(texts_or_docs),
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
        if not self.exact:  # the compact vectors, as saved and loaded
            learned, vectors = vectors[:, : vectors.shape[1] - self.space.lexical_width], vectors.copy()
            vectors[:, : learned.shape[1]] = dequantize(
                quantize(learned, self.precision, self.dims), self.precision, self.dims, learned.shape[1]
            )
        start = len(self)
        if not start:
            self._rows = vectors
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
        self._ann = self._mapped = None  # built again with the new items when needed
        return list(range(start, len(self.vectors)))

    def search(
        self, queries: Sequence[TextOrDoc], k: int = 10, *, batch_size: int = 256, progress: bool = False
    ) -> Hits:
        """The k best items for each query text or doc (a sequence or array of them): [(id, score),
        ...], best first (ties by id), each score exactly the pipe's similarity of the query and the
        item; none for an empty or blank query. Raises TypeError for anything else (e.g. None)."""
        self._check_model()
        items = texts_or_docs_list(queries)
        vectors = self.pipe.encode(items, batch_size=batch_size, progress=progress)
        found = self.search_vectors(vectors, k) if self.exact else self._rescored(vectors, k, batch_size)
        return [row if (q if isinstance(q, str) else q.text).strip() else [] for q, row in zip(items, to_hits(*found))]

    def search_vectors(
        self, queries: numpy.ndarray, k: int = 10, *, exclude: Optional[numpy.ndarray] = None
    ) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(ids, scores) arrays of shape (n_queries, k), best first, padded with id -1 and score nan; k is at
        most the index's size. `exclude`: one id per query to leave out (the query itself, for dedupe)."""
        check_ks((k,), name="k")
        k = min(k, max(1, len(self)))  # before allocating (n_queries, k)
        queries = check_vectors(queries, self.vectors.shape[1], "query vectors")
        n = len(queries)
        ids = numpy.full((n, k), -1, dtype="int64")
        scores = numpy.full((n, k), numpy.nan, dtype="float32")
        if n == 0 or len(self) == 0:
            return ids, scores
        step = max(1, min(n, BLOCK_BYTES // (4 * len(self))))
        for s in range(0, n, step):
            ex = None if exclude is None else numpy.asarray(exclude[s : s + step], dtype="int64")
            rows, cols, vals = self._candidates(queries[s : s + step], k, ex)
            ids[s : s + step], scores[s : s + step] = top_k(rows, cols, vals, len(queries[s : s + step]), k)
        return ids, scores

    def _rescored(self, queries: numpy.ndarray, k: int, batch_size: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The k best of 2k + 10 candidates from the compact vectors, scored with `pipe.compare` on
        the full vectors of their texts (encoded again), as `search_vectors` returns them."""
        if self.texts is None:
            raise ValueError(f"This {self.precision} index has no texts to rescore its candidates with")
        found, _ = self.search_vectors(queries, 2 * k + 10)
        rows, cols = numpy.nonzero(found >= 0)
        ids = numpy.unique(found[rows, cols])
        scores = numpy.zeros(0, dtype="float32")
        if len(ids):
            full = self.pipe.encode([self.texts[i] for i in ids], batch_size=batch_size)
            scores = self.pipe.compare(queries[rows], full[numpy.searchsorted(ids, found[rows, cols])])
        return top_k(rows, found[rows, cols], scores, len(queries), min(k, max(1, len(self))))

    # -- candidates and exact scores ----------------------------------------------------

    def _candidates(
        self, queries: numpy.ndarray, k: int, exclude: Optional[numpy.ndarray]
    ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """(query row, item id, exact score) of a superset of each query's top k."""
        if self.kind != "flat":
            return self._ann_candidates(queries, k, exclude)
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
        return rows, cols, self._pair_scores(queries, rows, cols)

    def _pair_scores(self, queries: numpy.ndarray, rows: numpy.ndarray, cols: numpy.ndarray) -> numpy.ndarray:
        """`pipe.compare` of queries[rows] and items[cols], in blocks small enough for the CPU's cache."""
        block = max(32, SCORE_BLOCK_BYTES // (8 * queries.shape[1]) // 32 * 32)
        return vector_pair_scores(self.pipe.compare, queries, self.vectors, rows, cols, block_size=block)

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
        x, sq = self._mapped_items()
        used = numpy.flatnonzero(q.any(axis=0))  # sparse queries (TWEAK): the other columns add exact zeros
        if len(used) < q.shape[1] // 2:
            q, x = q[:, used], x[:, used]
        keys = q @ x.T
        if self.space.metric != "l2":
            return keys, numpy.full(len(q), 2 * TOLERANCE, dtype="float32")
        keys = 2.0 * keys - sq[None, :]  # -|q - x|^2 + |q|^2
        return keys, (TOLERANCE * (numpy.einsum("ij,ij->i", q, q) + float(sq.max()))).astype("float32")

    def _mapped_items(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The items in the fast metric's space and their squared norms, mapped once (again after `add`)."""
        if self._mapped is None:
            x = self.space.transform(self.vectors)
            self._mapped = (x, numpy.einsum("ij,ij->i", x, x))
        return self._mapped

    def _item_step(self) -> int:
        """Items per block when computing keys: the block's float64 copy stays within ITEM_BLOCK_BYTES."""
        return max(1, ITEM_BLOCK_BYTES // (8 * self.vectors.shape[1]))

    def _ann_candidates(
        self, queries: numpy.ndarray, k: int, exclude: Optional[numpy.ndarray]
    ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        extra = 0 if exclude is None else 1
        wanted = self.c or (max(100, 10 * k) if not self.space.exact else 2 * k + 10)
        found, _ = self._candidate_index().search(self.space.transform(queries), min(len(self), max(k, wanted) + extra))
        keep = found >= 0
        if exclude is not None:
            keep &= found != exclude[:, None]
        rows, cols = numpy.nonzero(keep)[0], found[keep]
        return rows, cols, self._pair_scores(queries, rows, cols)

    def _candidate_index(self, serialized: Optional[numpy.ndarray] = None) -> CandidateIndex:
        """The faiss index of ivf or hnsw candidates, built (or read from `serialized`) when first needed."""
        if self._ann is None:
            compact = self.space.transform(self.vectors).astype("float16")
            self._ann = CandidateIndex(compact, kind=self.kind, nprobe=NPROBE, serialized=serialized)
        return self._ann

    # -- saving -------------------------------------------------------------------------

    def save(self, path: Union[str, Path], *, model: Optional[str] = None, ids: Optional[List[Any]] = None) -> None:
        """Write the index to a directory, replaced whole or not at all: a vector store with the texts, the
        collection's `ids` and the candidate index (no pickle). `model`: the pipeline's path, for the CLI."""
        if ids is not None and len(ids) != len(self):
            raise ValueError(f"{len(ids):,} ids for the {len(self):,} items of the index")
        with atomic_directory(path, kind=STORE) as tmp:
            store = write_store(
                tmp, self.vectors, model_id=self.model_id, space=self.space, pipe_name=self.pipe_name,
                precision=self.precision, dims=self.dims,
            )  # fmt: skip
            for name, values, key in ((TEXTS, self.texts, "text"), ("ids.jsonl", ids, "id")):
                if values is not None:
                    data = "".join(json.dumps({key: v}) + "\n" for v in values).encode("utf8")
                    store.save_file(name, gzip.compress(data, mtime=0) if name == TEXTS else data)
            if self.kind != "flat" and len(self):
                store.save_file(f"candidates-{self.kind}.faiss", self._candidate_index().serialize().tobytes())
            meta = {"candidates": self.candidates, "c": self.c, "model": model, "pipe_name": self.pipe_name}
            write_manifest(tmp, {**store.manifest, "index": meta})

    @classmethod
    def load(cls, path: Union[str, Path], nlp: Language) -> "SimilarityIndex":
        """Read an index saved by `save` (or a `dedupe` work dir), every file checked; refuses one of another model."""
        path = Path(path)
        meta = read_meta(path)
        store = VectorStore(path, fix=f"build the index again (python -m spacy_siamese index ... -o {path})")
        pipe = get_similarity_pipe(nlp, meta["pipe_name"], initialized=True)
        if pipe.model_id != store.model_id:
            raise ValueError(
                f"The index at {path} was built by siamese_similarity model '{store.model_id}', but the "
                f"pipeline's '{meta['pipe_name']}' pipe is model '{pipe.model_id}': their vectors live in "
                "different spaces. Load the pipeline that built the index, or build it again."
            )
        vectors = store.rows(numpy.arange(len(store)))
        index = cls(
            nlp, vectors, candidates=meta["candidates"], pipe_name=meta["pipe_name"], c=meta["c"],
            precision=store.precision, dims=store.manifest["dims"],
        )  # fmt: skip
        texts, ids = (store.read_file(name) for name in (TEXTS, "ids.jsonl"))
        texts = store.read_file("texts.jsonl") if texts is None else gzip.decompress(texts)  # or saved before gzip
        index.texts = None if texts is None else [json.loads(line)["text"] for line in texts.splitlines()]
        index.ids = None if ids is None else [json.loads(line)["id"] for line in ids.splitlines()]
        if index.ids is not None and len(index.ids) != len(index):
            raise ValueError(f"{path / 'ids.jsonl'}: {len(index.ids):,} ids for {len(index):,} indexed texts")
        serialized = store.read_file(f"candidates-{index.kind}.faiss")
        if serialized is not None:
            index._candidate_index(numpy.frombuffer(serialized, dtype="uint8"))
        return index

    def _check_model(self) -> None:
        if self.pipe.model_id != self.model_id:
            raise ValueError(
                f"The '{self.pipe_name}' pipe's weights changed since the index was built (model "
                f"'{self.model_id}', now '{self.pipe.model_id}'): build the index again."
            )


def read_meta(path: Union[str, Path]) -> Dict[str, Any]:
    """A saved index's settings (candidates, c, the pipeline's path), or a ValueError (naming an old format)."""
    path = Path(path)
    if not (path / MANIFEST).exists():
        if (path / "index.json").exists():
            raise ValueError(
                f"{path} is an index of an earlier version ({OLD_FORMAT}, with index.json), which this version "
                f"does not read: build it again with `python -m spacy_siamese index MODEL TEXTS -o {path}`"
            )
        raise ValueError(f"{path} is not a saved SimilarityIndex (no {MANIFEST})")
    manifest = read_manifest(path, fix=f"build the index again (python -m spacy_siamese index ... -o {path})")
    meta = {"candidates": "flat", "c": None, "model": None, "pipe_name": manifest.get("pipe_name", PIPE_NAME)}
    meta.update(manifest.get("index") or {})  # a dedupe work dir has none: flat, no texts
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
    rows, cols, scores, rank = best_k(rows, cols, scores, k)
    ids[rows, rank], out[rows, rank] = cols, scores
    return ids, out


def best_k(
    rows: numpy.ndarray, cols: numpy.ndarray, scores: numpy.ndarray, k: int
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """(row, col, score, rank) of each row's k best entries, by row, best first, ties by col."""
    order = numpy.lexsort((cols, -scores.astype("float64"), rows))
    rows, cols, scores = rows[order], cols[order], scores[order]
    rank = numpy.arange(len(rows)) - numpy.searchsorted(rows, rows)
    keep = rank < k
    return rows[keep], cols[keep], scores[keep], rank[keep]


def to_hits(ids: numpy.ndarray, scores: numpy.ndarray) -> Hits:
    return [
        [(int(i), float(s)) for i, s in zip(row_ids, row_scores) if i >= 0] for row_ids, row_scores in zip(ids, scores)
    ]


__all__ = ["SimilarityIndex", "read_meta", "to_hits", "top_k"]
