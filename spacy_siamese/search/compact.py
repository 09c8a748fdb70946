"""Compact vectors for candidate search, with a bound that keeps the final scores exact.

The learned part of each vector in the space where L2 distance bounds the score
(`VectorSpace.metric_learned`) is projected by PCA onto `dims` columns and stored as float16 with
its rounding error e = |Pa - round(Pa)|. With r the residual after projection,

    |a - b|^2 >= |Pa - Pb|^2 + (|r_a| - |r_b|)^2  and  |Pa - Pb| >= |round(Pa) - round(Pb)| - e_a - e_b,

which `VectorSpace.score_bound` turns into an upper bound of the score (see docs/design.md).
"""

import io
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple, Union

import numpy

from ..defaults import CANDIDATE_KINDS, FAISS_KINDS, FLAT_LIMIT
from ..util import import_extra

DIMS = 128
FIT_SIZE = 50_000
SEED = 0
QUERY_BLOCK = 2048
# IVF centroids are trained on this many items a list (faiss asks for at least 39), in this many
# k-means iterations (faiss's default is 25; the centroids only route the search).
TRAIN_PER_LIST = 40
KMEANS_ITERATIONS = 10
# The IVF index scans 4-bit codes from this many items up (fewer cannot train 16 centroids a
# piece), and re-ranks REFINE_FACTOR times the asked number of candidates by float16 vectors.
PQ_MIN_ITEMS = 1024
REFINE_FACTOR = 4
# float32 rounding of the distances and of the comparison: bounds are loosened by this much.
BOUND_TOLERANCE = 1e-4


@dataclass
class CompactSpace:
    """A PCA projection (mean, components) of the metric space of a pipe's learned vectors."""

    mean: numpy.ndarray  # (width,)
    components: numpy.ndarray  # (dims, width), orthonormal rows

    @classmethod
    def fit(cls, sample: numpy.ndarray, *, dims: int = DIMS) -> "CompactSpace":
        """Fit on `sample` (metric-space vectors, float32 (n, width)): the top `dims` principal directions
        (all of them when the width is at most `dims`), eigenvectors of the sample's scatter matrix."""
        sample = numpy.asarray(sample, dtype="float32")
        width = sample.shape[1]
        mean = sample.mean(axis=0, dtype="float64") if len(sample) else numpy.zeros(width)
        dims = min(dims, width)
        if dims >= width or len(sample) <= dims:
            components = numpy.eye(width)[:dims]
        else:
            centred = sample - mean.astype("float32")
            _, vectors = numpy.linalg.eigh((centred.T @ centred).astype("float64"))
            components = vectors[:, ::-1][:, :dims].T  # orthonormal rows, largest variance first
        return cls(mean.astype("float32"), numpy.ascontiguousarray(components, dtype="float32"))

    @property
    def dims(self) -> int:
        return int(self.components.shape[0])

    def project(self, vectors: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """(compact float16 (n, dims), residual norms and rounding errors, float32 (n,)) of metric-space vectors."""
        centred = numpy.asarray(vectors, dtype="float32") - self.mean
        compact = centred @ self.components.T
        # the residual itself, not |c|^2 - |Pc|^2, which loses a small residual to cancellation in float32
        residual = numpy.linalg.norm(centred - compact @ self.components, axis=1)
        rounded = compact.astype("float16")
        error = numpy.linalg.norm(compact - rounded.astype("float32"), axis=1)
        return rounded, residual, error

    def to_bytes(self) -> bytes:
        return npy_bytes(numpy.vstack([self.mean[None, :], self.components]))

    @classmethod
    def from_bytes(cls, data: bytes) -> "CompactSpace":
        both = from_npy_bytes(data)
        return cls(both[0], both[1:])


def check_candidates(candidates: str) -> None:
    """Refuse an unknown candidate kind, and "ivf" or "hnsw" without faiss: before any encoding."""
    if candidates not in CANDIDATE_KINDS:
        raise ValueError(f"candidates must be one of {', '.join(CANDIDATE_KINDS)}, got {candidates!r}")
    if candidates in FAISS_KINDS:
        import_extra("faiss", "ann", f"The {candidates} candidate index")


def choose_candidates(kind: str, n: int) -> str:
    """The candidate kind for n items: "auto" is "flat" up to FLAT_LIMIT items (or without faiss)."""
    if kind != "auto":
        return kind
    if n <= FLAT_LIMIT:
        return "flat"
    try:
        import faiss  # noqa: F401
    except ImportError:
        return "flat"
    return "ivf"


def distance_bound(
    d2_compact: numpy.ndarray,
    residual_q: numpy.ndarray,
    residual_x: numpy.ndarray,
    error_q: Union[float, numpy.ndarray] = 0.0,
    error_x: Union[float, numpy.ndarray] = 0.0,
) -> numpy.ndarray:
    """The lower bound of the squared metric-space distance of two items from the squared distance of
    their (rounded) compact vectors, their residual norms and rounding errors (see the module docstring)."""
    near = numpy.maximum(numpy.sqrt(numpy.maximum(d2_compact, 0.0)) - error_q - error_x, 0.0)
    gap = residual_q - residual_x
    return near * near + gap * gap


class CandidateIndex:
    """Nearest float16 compact vectors by L2: a faiss IVF index ("ivf") or HNSW graph ("hnsw"). The
    returned distances are exact between the rounded vectors (what `distance_bound` needs): "ivf"
    scans 4-bit codes and re-ranks REFINE_FACTOR times the asked number by the float16 vectors."""

    def __init__(
        self, compact: numpy.ndarray, *, kind: str = "ivf", nprobe: int = 16, serialized: Optional[numpy.ndarray] = None
    ) -> None:
        if kind not in FAISS_KINDS:
            raise ValueError(f"candidate index kind must be {' or '.join(FAISS_KINDS)}, got {kind!r}")
        self.compact, self.kind = compact, kind
        self.settings: Dict[str, Any] = {"nlist": 0, "nprobe": nprobe}
        faiss = import_extra("faiss", "ann", f"The {kind} candidate index")
        if serialized is not None:  # a copy of a built index (e.g. on a Ray worker, or a rerun)
            self._faiss = faiss.deserialize_index(serialized)
        else:
            self._faiss = build_ivf(compact) if kind == "ivf" else build_hnsw(compact)
        if kind == "ivf":
            ivf = faiss.extract_index_ivf(self._faiss)
            ivf.nprobe = nprobe
            self.settings.update(nlist=int(ivf.nlist), index=describe(self._faiss))
        else:
            self._faiss.hnsw.efSearch = max(64, nprobe * 4)
            self.settings.update(index="HNSW32,SQfp16")

    def serialize(self) -> numpy.ndarray:
        """The faiss index as bytes: `CandidateIndex(..., serialized=...)` reads it."""
        return import_extra("faiss", "ann", "The candidate index").serialize_index(self._faiss)

    def search(self, queries: numpy.ndarray, c: int) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """(ids, squared L2 distances) (n_queries, c) of each query's c nearest items, nearest first, missing: id -1."""
        d2, ids = self._faiss.search(decoded(queries), min(c, len(self.compact)))
        return ids.astype("int64"), d2.astype("float32")


def build_ivf(compact: numpy.ndarray) -> Any:
    """A trained IVF index over float16 compact vectors, its centroids trained on TRAIN_PER_LIST seeded items a list."""
    faiss = import_extra("faiss", "ann", "The ivf candidate index")
    n, dims = compact.shape
    # about 4 sqrt(n) inverted lists, at least 1 and at most n / 39 (faiss wants 39 training points a list)
    nlist = int(max(1, min(4 * numpy.sqrt(n), n // 39)))
    if n >= PQ_MIN_ITEMS:
        pieces = dims // 2 if dims % 2 == 0 else dims  # 4-bit codes of 2 columns (1 for odd widths)
        index = faiss.index_factory(dims, f"IVF{nlist},PQ{pieces}x4fs,Refine(SQfp16)", faiss.METRIC_L2)
        index.k_factor = REFINE_FACTOR
    else:
        index = faiss.index_factory(dims, f"IVF{nlist},Flat", faiss.METRIC_L2)
    ivf = faiss.extract_index_ivf(index)
    ivf.cp.seed = SEED
    ivf.cp.niter = KMEANS_ITERATIONS
    sample = numpy.random.default_rng(SEED).choice(n, size=min(n, TRAIN_PER_LIST * nlist), replace=False)
    index.train(decoded(compact[numpy.sort(sample)]))
    return add_in_blocks(index, compact)


def build_hnsw(compact: numpy.ndarray) -> Any:
    """A faiss HNSW graph over float16 compact vectors (exact float16 distances)."""
    faiss = import_extra("faiss", "ann", "The hnsw candidate index")
    index = faiss.IndexHNSWSQ(compact.shape[1], faiss.ScalarQuantizer.QT_fp16, 32)
    index.hnsw.efConstruction = 80
    index.train(decoded(compact[:1]))
    return add_in_blocks(index, compact)


def add_in_blocks(index: Any, compact: numpy.ndarray, block: int = 65536) -> Any:
    """Add float16 compact vectors to a trained faiss index, decoded a block at a time."""
    for start in range(0, len(compact), block):
        index.add(decoded(compact[start : start + block]))
    return index


def describe(index: Any) -> str:
    """A faiss factory string of an IVF candidate index, e.g. 'IVF1264,PQ64x4fs,Refine(SQfp16)'."""
    faiss = import_extra("faiss", "ann", "The candidate index")
    base = faiss.downcast_index(faiss.extract_index_ivf(index))
    if isinstance(base, faiss.IndexIVFPQFastScan) and isinstance(index, faiss.IndexRefine):
        return f"IVF{base.nlist},PQ{base.pq.M}x4fs,Refine(SQfp16)"
    if isinstance(base, faiss.IndexIVFFlat):
        return f"IVF{base.nlist},Flat"
    return f"IVF{base.nlist} ({type(base).__name__})"


def npy_bytes(array: numpy.ndarray) -> bytes:
    """An array in .npy format (no pickle)."""
    buffer = io.BytesIO()
    numpy.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def from_npy_bytes(data: bytes) -> numpy.ndarray:
    return numpy.load(io.BytesIO(data), allow_pickle=False)


def decoded(compact: numpy.ndarray) -> numpy.ndarray:
    """float16 compact vectors as the float32 arrays faiss and numpy compute with (exact)."""
    return numpy.ascontiguousarray(compact, dtype="float32")
