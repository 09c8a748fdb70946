"""Ray Data engine (extra `spacy-siamese[ray]`): encode a Ray Dataset with a pipeline, write the
vectors with their ids as Parquet, and find the duplicates of the encoded collection.

Encoding runs `map_batches` over an actor pool: each actor loads the pipeline once. Dedupe
builds one index on the driver, shares it through the object store, and searches shards of the
queries on an actor pool; the merged pairs are those of `find_duplicates` on the same vectors
(each query's result does not depend on the other queries of its shard).

On a cluster (`ray start` on each node; the model directory readable on every node):

    RAY_ADDRESS=auto python -m spacy_siamese.distributed MODEL INPUT.jsonl \\
        --vectors VECTORS_DIR --output pairs.jsonl --workers 8
"""

import argparse
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import numpy
import spacy

from .search.dedupe import duplicate_pairs, sort_pairs
from .search.encode import PIPE_NAME, check_pipe, encode
from .search.index import SimilarityIndex

IdPair = Tuple[Any, Any, float]


def _ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as err:
        raise ImportError("The Ray engine needs Ray Data: pip install 'spacy-siamese[ray]'") from err
    return ray


class EncodeBatch:
    """A Ray Data actor: loads the pipeline once, then encodes batches of texts."""

    def __init__(self, model: str, text_column: str, id_column: str, pipe_name: str, batch_size: int) -> None:
        self.nlp = spacy.load(model)
        self.pipe = check_pipe(self.nlp, pipe_name)
        self.columns = (text_column, id_column)
        self.pipe_name = pipe_name
        self.batch_size = batch_size

    def __call__(self, batch: Dict[str, numpy.ndarray]) -> Dict[str, numpy.ndarray]:
        text_column, id_column = self.columns
        texts = [str(text) for text in batch[text_column]]
        vectors, _ = encode(self.nlp, texts, pipe_name=self.pipe_name, batch_size=self.batch_size, progress=False)
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
    """(ids, vectors, model_id) of an encoded Dataset, ordered by id (ids must be unique)."""
    ids: List[Any] = []
    chunks = []
    model_ids: Set[str] = set()
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
    return [ids[i] for i in order], numpy.ascontiguousarray(vectors), model_ids.pop() if model_ids else ""


class SearchShard:
    """A Ray Data actor: loads the pipeline and the shared index once, then finds the duplicates
    of batches of query positions."""

    def __init__(self, model: str, pipe_name: str, state: Any, threshold: Optional[float], k: int) -> None:
        ray = _ray()
        vectors, faiss_bytes, backend = ray.get(state) if isinstance(state, ray.ObjectRef) else state
        self.index = SimilarityIndex(spacy.load(model), vectors, pipe_name=pipe_name)
        if faiss_bytes is not None:
            import faiss

            self.index.backend = backend
            self.index._faiss = faiss.deserialize_index(faiss_bytes)
        self.threshold, self.k = threshold, k

    def __call__(self, batch: Dict[str, numpy.ndarray]) -> Dict[str, numpy.ndarray]:
        pairs = duplicate_pairs(self.index, threshold=self.threshold, k=self.k, query_ids=batch["data"].tolist())
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
    backend: str = "exact",
    pipe_name: str = PIPE_NAME,
    workers: int = 2,
    batch_size: int = 1024,
) -> List[IdPair]:
    """Duplicate pairs (id_a, id_b, score) of an encoded Dataset, id_a < id_b, best first: the
    result of `find_duplicates` on the collection ordered by id."""
    ray = _ray()
    ids, vectors, model_id = collect_vectors(encoded)
    nlp = spacy.load(model)
    index = SimilarityIndex(nlp, vectors, backend=backend, pipe_name=pipe_name)
    if len(ids) and model_id != index.model_id:
        raise ValueError(f"The vectors were encoded by model '{model_id}', but {model} is model '{index.model_id}'")
    faiss_bytes = None
    if index._faiss is not None:
        import faiss

        faiss_bytes = faiss.serialize_index(index._faiss)
    state = ray.put((vectors, faiss_bytes, backend))
    # In-memory positions: a read task could wait forever for the CPUs the actors hold. Shards
    # of at most `batch_size` queries keep every task short, so Ray Data sees steady progress
    # (it stops an execution whose blocks do not move for 30 minutes).
    n_shards = max(4 * workers, -(-len(ids) // max(1, batch_size)))
    shards = numpy.array_split(numpy.arange(len(ids), dtype="int64"), max(1, min(len(ids), n_shards)))
    positions = ray.data.from_numpy(shards)
    found = positions.map_batches(
        SearchShard,
        fn_constructor_kwargs={
            "model": str(model),
            "pipe_name": pipe_name,
            "state": state,
            "threshold": threshold,
            "k": k,
        },
        batch_size=batch_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=1,
    )
    pairs: List[Tuple[int, int, float]] = []
    for batch in found.iter_batches(batch_format="numpy", batch_size=None):
        pairs.extend(zip(batch["i"].tolist(), batch["j"].tolist(), batch["score"].tolist()))
    return [(ids[i], ids[j], score) for i, j, score in sort_pairs(pairs)]


def main(argv: Optional[List[str]] = None) -> None:
    """Encode a JSONL collection (text, id) on Ray, write the vectors, write its duplicate pairs."""
    parser = argparse.ArgumentParser(prog="python -m spacy_siamese.distributed", description=main.__doc__)
    parser.add_argument("model", help="pipeline directory, readable on every node")
    parser.add_argument("input", help="JSONL file(s) or directory with 'text' and unique 'id' fields")
    parser.add_argument("--vectors", required=True, help="directory for the Parquet vectors")
    parser.add_argument("--output", required=True, type=Path, help="JSONL file of duplicate pairs")
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--backend", default="exact")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    ray = _ray()
    ray.init(ignore_reinit_error=True)
    texts = ray.data.read_json(args.input).materialize()  # read before the actors take the CPUs
    encoded = encode_dataset(texts, args.model, workers=args.workers)
    write_vectors(encoded, args.vectors)
    pairs = find_duplicates_dataset(
        read_vectors(args.vectors),
        args.model,
        threshold=args.threshold,
        k=args.k,
        backend=args.backend,
        workers=args.workers,
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with args.output.open("w", encoding="utf8") as file:
        for a, b, score in pairs:
            file.write(json.dumps({"id1": a, "id2": b, "score": score}) + "\n")
    print(f"Wrote {len(pairs):,} duplicate pairs to {args.output}")


if __name__ == "__main__":
    main()
