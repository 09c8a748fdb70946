"""Ray Data engine (extra `spacy-siamese[ray]`): encode a Ray Dataset with a pipeline, write the
vectors with their ids as Parquet, and find the duplicates of the encoded collection.

Encoding runs `map_batches` over an actor pool: each actor loads the pipeline once. Dedupe
builds one `CorpusIndex` (compact vectors and candidate index) on the driver, shares it through
the object store, and searches shards of the queries on an actor pool; the merged pairs are
those of `find_duplicates` on the same vectors in the same order (each query's result does not
depend on the other queries of its shard). Rows are ordered by id, so a collection whose file
order is its id order gives the pairs of `python -m spacy_siamese dedupe` on that file.

`dedupe_jsonl` does all three for JSONL files. On a cluster (`ray start` on each node; the model
directory readable on every node):

    RAY_ADDRESS=auto python -m spacy_siamese dedupe-ray MODEL INPUT.jsonl \\
        --vectors VECTORS_DIR --output pairs.jsonl --workers 8
"""

from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import numpy
import spacy
from scipy.sparse import csr_matrix

from .component import PIPE_NAME, get_similarity_pipe
from .search.corpus import CANDIDATES, CorpusIndex, sort_pairs
from .search.dedupe import dedupe_threshold
from .search.space import vector_space
from .search.store import MemoryStore
from .util import import_extra, one_thread

IdPair = Tuple[Any, Any, float]


def _ray() -> Any:
    """The ray module with Ray Data, or an ImportError naming the extra that installs it."""
    import_extra("ray.data", "ray", "The Ray engine")
    return import_extra("ray", "ray", "The Ray engine")


class EncodeBatch:
    """A Ray Data actor: loads the pipeline once, then encodes batches of texts."""

    def __init__(self, model: str, text_column: str, id_column: str, pipe_name: str, batch_size: int) -> None:
        one_thread()
        self.nlp = spacy.load(model)
        self.pipe = get_similarity_pipe(self.nlp, pipe_name, initialized=True)
        self.columns = (text_column, id_column)
        self.pipe_name = pipe_name
        self.batch_size = batch_size

    def __call__(self, batch: Dict[str, numpy.ndarray]) -> Dict[str, numpy.ndarray]:
        text_column, id_column = self.columns
        texts = [str(text) for text in batch[text_column]]
        vectors = self.pipe.encode(texts, batch_size=self.batch_size)
        return {
            "id": numpy.asarray(batch[id_column]),
            "vector": vectors,
            "model_id": numpy.asarray([self.pipe.model_id] * len(texts)),
        }


def encode_dataset(
    dataset: Any,
    model: str,
    *,
    text_column: str = "text",
    id_column: str = "id",
    pipe_name: str = PIPE_NAME,
    batch_size: int = 256,
    workers: int = 2,
) -> Any:
    """A Dataset of (id, vector, model_id) rows: `dataset` encoded on a pool of `workers` actors."""
    return dataset.map_batches(
        EncodeBatch,
        fn_constructor_kwargs={
            "model": str(model),
            "text_column": text_column,
            "id_column": id_column,
            "pipe_name": pipe_name,
            "batch_size": batch_size,
        },
        batch_size=batch_size,
        batch_format="numpy",
        compute=_ray().data.ActorPoolStrategy(size=workers),
        num_cpus=1,
    )


def write_vectors(encoded: Any, path: str) -> None:
    """Write encoded rows (id, vector, model_id) as Parquet files in a directory."""
    encoded.write_parquet(str(path))


def read_vectors(path: str) -> Any:
    """The encoded rows written by `write_vectors`, as a Dataset."""
    return _ray().data.read_parquet(str(path))


def collect_vectors(encoded: Any) -> Tuple[List[Any], numpy.ndarray, str]:
    """(ids, vectors, model_id) of an encoded Dataset, or of a directory of Parquet files that
    `write_vectors` wrote (read directly with pyarrow, much faster than through Ray Data),
    ordered by id (ids must be unique)."""
    ids: List[Any] = []
    chunks = []
    model_ids: Set[str] = set()
    if isinstance(encoded, (str, Path)):
        import pyarrow.dataset

        table = pyarrow.dataset.dataset(str(encoded), format="parquet").to_table(columns=["id", "vector", "model_id"])
        ids = table.column("id").to_pylist()
        chunks = [_tensor_rows(chunk) for chunk in table.column("vector").chunks]
        model_ids = set(map(str, table.column("model_id").unique().to_pylist()))
    else:
        for batch in encoded.iter_batches(batch_format="numpy", batch_size=4096):
            ids.extend(batch["id"].tolist())
            chunks.append(numpy.asarray(batch["vector"], dtype="float32"))
            model_ids.update(str(m) for m in numpy.unique(batch["model_id"]))
    if len(model_ids) > 1:
        raise ValueError(f"The encoded rows come from {len(model_ids)} different models: {sorted(model_ids)}")
    if len(set(ids)) != len(ids):
        raise ValueError("The ids of the encoded rows are not unique")
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    vectors = numpy.vstack(chunks)[order] if chunks else numpy.zeros((0, 0), dtype="float32")
    return (
        [ids[i] for i in order],
        numpy.ascontiguousarray(vectors, dtype="float32"),
        model_ids.pop() if model_ids else "",
    )


def _tensor_rows(chunk: Any) -> numpy.ndarray:
    """A Parquet tensor column chunk (Ray's tensor extension or Arrow's fixed-shape tensor) as
    a float32 (n, width) array."""
    if hasattr(chunk, "to_numpy_ndarray"):
        return numpy.asarray(chunk.to_numpy_ndarray(), dtype="float32").reshape(len(chunk), -1)
    storage = chunk.storage if hasattr(chunk, "storage") else chunk
    return numpy.asarray(storage.flatten().to_numpy(zero_copy_only=False), dtype="float32").reshape(len(chunk), -1)


class SearchShard:
    """A Ray Data actor: loads the pipeline and the shared corpus index once, then finds the
    duplicates of batches of query positions."""

    def __init__(self, model: str, pipe_name: str, state: Any, threshold: float, k: int, c: int) -> None:
        one_thread()
        ray = _ray()
        store, index_state = ray.get(state) if isinstance(state, ray.ObjectRef) else state
        self.index = CorpusIndex(spacy.load(model), store, pipe_name=pipe_name, state=index_state)
        self.threshold, self.k, self.c = threshold, k, c

    def __call__(self, batch: Dict[str, numpy.ndarray]) -> Dict[str, numpy.ndarray]:
        pairs = self.index.duplicates(self.threshold, k=self.k, c=self.c, query_ids=batch["data"].tolist())
        return {
            "i": numpy.asarray([p[0] for p in pairs], dtype="int64"),
            "j": numpy.asarray([p[1] for p in pairs], dtype="int64"),
            "score": numpy.asarray([p[2] for p in pairs], dtype="float32"),
        }


def find_duplicates_dataset(
    encoded: Any,
    model: str,
    *,
    threshold: Optional[float] = None,
    k: int = 10,
    candidates: str = "auto",
    c: int = CANDIDATES,
    pipe_name: str = PIPE_NAME,
    workers: int = 2,
    batch_size: int = 4096,
) -> List[IdPair]:
    """Duplicate pairs (id_a, id_b, score) of an encoded Dataset (or the Parquet directory
    `write_vectors` wrote), id_a < id_b, best first: the
    pairs `find_duplicates` gives for the collection ordered by id (the same candidates and the
    same exact scores). The driver fits the compact space and builds the candidate index once;
    the actors share it through the object store and search shards of the queries. A shard is
    a Ray task: if its actor dies, Ray restarts the actor and runs the shard again."""
    ray = _ray()
    ids, vectors, model_id = collect_vectors(encoded)
    nlp = spacy.load(model)
    pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
    if len(ids) and model_id != pipe.model_id:
        raise ValueError(f"The vectors were encoded by model '{model_id}', but {model} is model '{pipe.model_id}'")
    if not len(ids):
        return []
    lexical_width = vector_space(pipe.comparison).lexical_width
    learned, lexical = vectors[:, : vectors.shape[1] - lexical_width], None
    if lexical_width:
        lexical = csr_matrix(vectors[:, vectors.shape[1] - lexical_width :])
    store = MemoryStore(numpy.ascontiguousarray(learned), lexical, model_id)
    index = CorpusIndex(nlp, store, pipe_name=pipe_name, candidates=candidates)
    state = ray.put((store, index.state()))
    limit = dedupe_threshold(pipe, threshold)
    # In-memory positions: a read task could wait forever for the CPUs the actors hold. Shards
    # of at most `batch_size` queries keep every task short, so Ray Data sees steady progress.
    n_shards = max(4 * workers, -(-len(ids) // max(1, batch_size)))
    shards = numpy.array_split(numpy.arange(len(ids), dtype="int64"), max(1, min(len(ids), n_shards)))
    positions = ray.data.from_numpy(shards)
    found = positions.map_batches(
        SearchShard,
        fn_constructor_kwargs={
            "model": str(model),
            "pipe_name": pipe_name,
            "state": state,
            "threshold": limit,
            "k": k,
            "c": c,
        },
        batch_size=batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=1,
        max_restarts=-1,
        max_task_retries=-1,
    )
    pairs: List[Tuple[int, int, float]] = []
    for batch in found.iter_batches(batch_format="numpy", batch_size=None):
        pairs.extend(zip(batch["i"].tolist(), batch["j"].tolist(), batch["score"].tolist()))
    return [(ids[i], ids[j], score) for i, j, score in sort_pairs(pairs)]


def dedupe_jsonl(
    model: str,
    input: str,
    vectors: str,
    *,
    threshold: Optional[float] = None,
    k: int = 10,
    candidates: str = "auto",
    c: int = CANDIDATES,
    workers: int = 2,
) -> List[IdPair]:
    """Encode a JSONL collection ('text' and unique 'id' fields; a file, files or a directory) on
    Ray, write its vectors as Parquet to `vectors`, and return its duplicate pairs as
    `find_duplicates_dataset` does. Connects to a running Ray (RAY_ADDRESS) or starts one."""
    ray = _ray()
    if not ray.is_initialized():
        ray.init()
    texts = ray.data.read_json(input).materialize()  # read before the actors take the CPUs
    write_vectors(encode_dataset(texts, model, workers=workers), vectors)
    return find_duplicates_dataset(
        vectors, model, threshold=threshold, k=k, candidates=candidates, c=c, workers=workers
    )
