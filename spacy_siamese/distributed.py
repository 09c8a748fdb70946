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

import hashlib
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy
import spacy
from scipy.sparse import csr_matrix
from spacy.language import Language

from .component import PIPE_NAME, get_similarity_pipe
from .search.corpus import CANDIDATES, CorpusIndex, check_candidates, sort_pairs
from .search.dedupe import dedupe_threshold
from .search.space import vector_space
from .search.store import MemoryStore
from .search.texts import JSONL_SUFFIXES, scan_collection
from .util import import_extra, one_thread, show_progress

IdPair = Tuple[Any, Any, float]


def _ray() -> Any:
    """The ray module with Ray Data, or an ImportError naming the extra that installs it."""
    import_extra("ray.data", "ray", "The Ray engine")
    return import_extra("ray", "ray", "The Ray engine")


# The files of a directory that `dedupe_jsonl` reads, those `dedupe` reads (Ray Data's own default
# leaves out .ndjson), plainly or compressed (read by Ray only, so checked in the actors).
COMPRESSIONS = (".gz", ".br", ".zst", ".lz4")
JSONL_EXTENSIONS = [f"{suffix[1:]}{c}" for suffix in JSONL_SUFFIXES for c in ("", *COMPRESSIONS)]

# Rows a Ray Data block (a task of an encoding actor) holds: large blocks keep the driver's
# scheduling and the object store's traffic small against the encoding itself.
BLOCK_SIZE = 2048


class EncodeBatch:
    """A Ray Data actor: loads the pipeline once, then encodes blocks of texts. With `output`,
    it writes each block's encoded rows as one Parquet file there and returns the file's name,
    or for a block with a bad row no file and the error (`write_encoded` raises it: an exception
    raised in an actor reaches the driver only as text in Ray's traceback); without, it returns
    the encoded rows and raises on a bad row."""

    def __init__(
        self, model: str, text_column: str, id_column: str, pipe_name: str, batch_size: int, output: Optional[str]
    ) -> None:
        one_thread()
        self.nlp = spacy.load(model)
        self.pipe = get_similarity_pipe(self.nlp, pipe_name, initialized=True)
        self.columns = (text_column, id_column)
        self.batch_size = batch_size
        self.lexical_width = vector_space(self.pipe.comparison).lexical_width
        self.output = output

    def __call__(self, batch: Dict[str, numpy.ndarray]) -> Any:
        text_column, id_column = self.columns
        problem = batch_problem(batch, text_column, id_column)
        if problem is not None:
            if self.output is None:
                raise ValueError(problem)
            return {"file": numpy.asarray([""]), "error": numpy.asarray([problem])}
        texts = [str(text) for text in batch[text_column]]
        vectors = self.pipe.encode(texts, batch_size=self.batch_size)
        table = encoded_table(numpy.asarray(batch[id_column]), vectors, self.lexical_width, str(self.pipe.model_id))
        if self.output is None:
            return table
        return {"file": numpy.asarray([write_part(table, self.output)]), "error": numpy.asarray([""])}


def batch_problem(batch: Dict[str, numpy.ndarray], text_column: str, id_column: str) -> Optional[str]:
    """What is wrong with a block's rows, or None: a row without a string text or without an id
    (Ray Data reads a missing field as null, which would otherwise be encoded as the text "None")."""
    for column in (text_column, id_column):
        if column not in batch:
            return f"The records have no '{column}' field (fields: {', '.join(map(repr, batch))})"
    ids = numpy.asarray(batch[id_column]).tolist()
    no_id = sum(key is None for key in ids)
    if no_id:
        return f"{no_id:,} record(s) without an '{id_column}' in a block of {len(ids):,}"
    bad = [key for key, text in zip(ids, batch[text_column]) if not isinstance(text, str)]
    if bad:
        shown = ", ".join(map(repr, bad[:5])) + (", ..." if len(bad) > 5 else "")
        return f"{len(bad):,} record(s) without a string '{text_column}' field (ids {shown})"
    return None


def jsonl_files(path: Path) -> List[Path]:
    """The files of a local JSONL collection, those `dedupe_jsonl` checks and gives Ray to read: `path`
    itself, or a directory's .jsonl, .ndjson and .json files, plain or compressed, at its top level
    only (files in its subdirectories are not read). Raises ValueError for a directory without any."""
    if not path.is_dir():
        return [path]
    names = tuple(f".{extension}" for extension in JSONL_EXTENSIONS)
    files = sorted(p for p in path.iterdir() if p.is_file() and p.name.lower().endswith(names))
    if not files:
        raise ValueError(
            f"{path}: no .jsonl, .ndjson or .json files (plain or compressed) in the directory "
            "(its subdirectories are not read)"
        )
    return files


def check_jsonl(path: Path, *, text_column: str = "text", id_column: str = "id") -> int:
    """Check a local JSONL collection as `dedupe` reads it (UTF-8, every line an object with a string
    text field, ids unique within a file) and that its records have ids: each file of `jsonl_files`
    but the compressed ones, which Ray alone reads (so they are checked in the actors). An id
    repeated across files is refused after encoding, by `collect_vectors`. Returns the number of
    records checked; raises ValueError naming the file and line."""
    n = 0
    for file in jsonl_files(path):
        if file.suffix.lower() in COMPRESSIONS:
            continue
        collection = scan_collection(file, format="jsonl", field=text_column, id_field=id_column)
        if not collection.keyed:
            raise ValueError(f"{file}: no '{id_column}' field: dedupe-ray keys the pairs by the records' ids")
        n += collection.n
    return n


def ray_error_cause(err: BaseException) -> BaseException:
    """The exception a Ray task raised, out of Ray's wrappers (RayTaskError, UserCodeException)."""
    seen = {id(err)}
    while True:
        cause = getattr(err, "cause", None) or err.__cause__
        if cause is None or id(cause) in seen:
            return err
        seen.add(id(cause))
        err = cause


def write_part(table: Any, directory: str) -> str:
    """Write encoded rows as one Parquet file in `directory` (a local path or a URI pyarrow
    knows, e.g. s3://bucket/vectors) and return the file's name. The name comes from the rows'
    ids, so a block that Ray runs again (its actor died) replaces its own file, never adds a copy."""
    import pyarrow.parquet

    fs, root = _filesystem(directory)
    fs.create_dir(root, recursive=True)
    name = "part-" + hashlib.sha1(repr(table.column("id").to_pylist()).encode("utf8")).hexdigest()[:24] + ".parquet"
    tmp = f"{root}/.{name}.{uuid.uuid4().hex}.tmp"  # hidden: readers of the directory skip it
    pyarrow.parquet.write_table(table, tmp, filesystem=fs, compression="none", use_dictionary=False)
    fs.move(tmp, f"{root}/{name}")
    return name


def _filesystem(directory: str) -> Tuple[Any, str]:
    """(pyarrow filesystem, path in it) of a local directory or a URI."""
    import pyarrow.fs

    if "://" in directory:
        return pyarrow.fs.FileSystem.from_uri(directory)
    return pyarrow.fs.LocalFileSystem(), str(Path(directory).absolute())


def encoded_table(ids: numpy.ndarray, vectors: numpy.ndarray, lexical_width: int, model_id: str) -> Any:
    """Encoded rows as an Arrow table: id, the learned columns ("vector", fixed-size list), a
    hybrid's lexical columns as sparse rows ("lexical_indices", "lexical_values", with
    "lexical_width"), model_id. Sparse rows keep a few values a text instead of thousands."""
    import pyarrow

    n, width = vectors.shape
    learned = numpy.ascontiguousarray(vectors[:, : width - lexical_width], dtype="float32")
    columns = {
        "id": pyarrow.array(ids),
        "vector": pyarrow.FixedSizeListArray.from_arrays(pyarrow.array(learned.reshape(-1)), learned.shape[1]),
        "model_id": pyarrow.array([model_id] * n, type=pyarrow.string()),
        "lexical_width": pyarrow.array(numpy.full(n, lexical_width, dtype="int32")),
    }
    if lexical_width:
        lexical = csr_matrix(vectors[:, width - lexical_width :], dtype="float32")
        offsets = pyarrow.array(lexical.indptr.astype("int32"))
        columns["lexical_indices"] = pyarrow.ListArray.from_arrays(offsets, pyarrow.array(lexical.indices, "int32"))
        columns["lexical_values"] = pyarrow.ListArray.from_arrays(offsets, pyarrow.array(lexical.data, "float32"))
    return pyarrow.table(columns)


def encode_dataset(
    dataset: Any,
    model: str,
    *,
    text_column: str = "text",
    id_column: str = "id",
    pipe_name: str = PIPE_NAME,
    batch_size: int = 256,
    block_size: int = BLOCK_SIZE,
    workers: int = 2,
    output: Optional[str] = None,
) -> Any:
    """A Dataset of encoded rows (id, vector, model_id and, for a hybrid, its sparse lexical
    columns): `dataset` encoded on a pool of `workers` actors, `block_size` rows a task and
    `batch_size` docs a `nlp.pipe` batch. With `output` (a local directory or a URI such as
    s3://bucket/vectors), each actor writes its blocks' rows as Parquet files there instead, and
    the Dataset's rows name the files ("file"): see `write_encoded`."""
    settings = dict(text_column=text_column, id_column=id_column, pipe_name=pipe_name, batch_size=batch_size)
    ray = _ray()
    return dataset.map_batches(
        EncodeBatch,
        fn_constructor_kwargs={"model": str(model), "output": output, **settings},
        batch_size=block_size,
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=workers),
        num_cpus=1,
    )


def write_encoded(dataset: Any, model: str, path: str, **settings: Any) -> List[str]:
    """Encode `dataset` with `encode_dataset(dataset, model, output=path, **settings)` and return
    the names of the Parquet files this run wrote in `path`. The vectors never pass through
    the driver or the object store."""
    written = encode_dataset(dataset, model, output=str(path), **settings)
    names: List[str] = []
    for batch in written.iter_batches(batch_format="numpy"):
        problem = next((str(error) for error in batch["error"] if error), None)
        if problem is not None:
            raise ValueError(problem)
        names.extend(str(name) for name in batch["file"])
    return sorted(names)


def read_vectors(path: str) -> Any:
    """The encoded rows that `write_encoded` wrote in a directory, as a Dataset."""
    return _ray().data.read_parquet(str(path))


def collect_vectors(encoded: Any, *, files: Optional[Sequence[str]] = None) -> Tuple[List[Any], MemoryStore]:
    """(ids, vectors) of an encoded Dataset, or of a directory of Parquet files that
    `write_encoded` wrote (its `files` only, if given; read directly with pyarrow, much faster
    than through Ray Data), ordered by id (ids must be unique). The vectors are a
    `MemoryStore`: learned columns dense, a hybrid's lexical columns sparse, and the model id."""
    import pyarrow

    if isinstance(encoded, (str, Path)):
        import pyarrow.dataset

        fs, root = _filesystem(str(encoded))
        source = root if files is None else [f"{root}/{name}" for name in files]
        table = pyarrow.dataset.dataset(source, format="parquet", filesystem=fs).to_table()
    else:
        batches = list(encoded.iter_batches(batch_format="pyarrow", batch_size=None))
        table = pyarrow.concat_tables(batches) if batches else pyarrow.table({"id": pyarrow.array([])})
    ids = table.column("id").to_pylist()
    if not ids:
        return [], MemoryStore(numpy.zeros((0, 0), dtype="float32"), None, "")
    model_ids = sorted(set(map(str, table.column("model_id").unique().to_pylist())))
    if len(model_ids) > 1:
        raise ValueError(f"The encoded rows come from {len(model_ids)} different models: {model_ids}")
    if len(set(ids)) != len(ids):
        raise ValueError("The ids of the encoded rows are not unique")
    order = numpy.asarray(sorted(range(len(ids)), key=lambda i: ids[i]), dtype="int64")
    learned = _list_values(table.column("vector")).reshape(len(ids), -1)[order]
    lexical = None
    lexical_width = int(table.column("lexical_width")[0].as_py())
    if lexical_width:
        offsets, indices = _list_offsets(table.column("lexical_indices"))
        values = _list_values(table.column("lexical_values"))
        lexical = csr_matrix((values, indices, offsets), shape=(len(ids), lexical_width))[order]
    store = MemoryStore(numpy.ascontiguousarray(learned, dtype="float32"), lexical, model_ids[0])
    return [ids[i] for i in order], store


def _list_values(column: Any) -> numpy.ndarray:
    """The values of a (fixed-size) list column, concatenated, as float32."""
    array = column.combine_chunks()
    return numpy.asarray(array.flatten().to_numpy(zero_copy_only=False), dtype="float32")


def _list_offsets(column: Any) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """(row offsets from 0, values as int32) of a list column."""
    array = column.combine_chunks()
    offsets = numpy.asarray(array.offsets.to_numpy(), dtype="int64")
    return offsets - offsets[0], numpy.asarray(array.flatten().to_numpy(zero_copy_only=False), dtype="int32")


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
    files: Optional[Sequence[str]] = None,
    nlp: Optional[Language] = None,
    stages: Optional[Dict[str, float]] = None,
) -> List[IdPair]:
    """Duplicate pairs (id_a, id_b, score) of an encoded Dataset (or the Parquet directory
    `write_encoded` wrote, its `files` only if given), id_a < id_b, best first: the
    pairs `find_duplicates` gives for the collection ordered by id (the same candidates and the
    same exact scores). The driver fits the compact space and builds the candidate index once;
    the actors share it through the object store and search shards of the queries. A shard is
    a Ray task: if its actor dies, Ray restarts the actor and runs the shard again. `nlp` is the
    pipeline at `model` if the caller has loaded it already. `stages`, if given, gets the
    seconds of each stage (collect, index, search)."""
    nlp = spacy.load(model) if nlp is None else nlp
    pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
    limit = dedupe_threshold(pipe, threshold)  # before the reads
    ray = _ray()
    stages = {} if stages is None else stages
    mark = time.perf_counter()
    ids, store = collect_vectors(encoded, files=files)
    if len(ids) and store.model_id != pipe.model_id:
        raise ValueError(
            f"The vectors were encoded by model '{store.model_id}', but {model} is model '{pipe.model_id}'"
        )
    if not len(ids):
        return []
    stages["collect"] = time.perf_counter() - mark
    mark = time.perf_counter()
    index = CorpusIndex(nlp, store, pipe_name=pipe_name, candidates=candidates)
    stages["index"] = time.perf_counter() - mark
    mark = time.perf_counter()
    state = ray.put((store, index.state()))
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
    )
    pairs: List[Tuple[int, int, float]] = []
    for batch in found.iter_batches(batch_format="numpy", batch_size=None):
        pairs.extend(zip(batch["i"].tolist(), batch["j"].tolist(), batch["score"].tolist()))
    stages["search"] = time.perf_counter() - mark
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
    progress: bool = True,
    nlp: Optional[Language] = None,
    stages: Optional[Dict[str, float]] = None,
) -> List[IdPair]:
    """Encode a JSONL collection ('text' and unique 'id' fields) on Ray, write its vectors as Parquet
    to `vectors`, and return its duplicate pairs as `find_duplicates_dataset` does. Connects to a
    running Ray (RAY_ADDRESS) or starts one. `progress` shows Ray Data's progress bars (on a
    terminal); `nlp` is the pipeline at `model` if the caller has loaded it already; `stages`, if
    given, gets the seconds of each stage (start, encode, collect, index, search). A local input
    is a file or a directory and Ray reads the files `jsonl_files` lists (a directory's top level
    only), each checked by `check_jsonl` first; `vectors`, `candidates` and the threshold are
    checked before Ray starts too. A remote input (a URI) is read by Ray as given and checked
    block by block in the actors, and their errors are raised as ValueError."""
    ray = _ray()
    # Everything that can be checked here, before Ray starts and encodes the collection
    paths: Union[str, List[str]] = input  # a remote directory: Ray lists it
    if "://" not in input:
        local = jsonl_files(Path(input))  # the files checked here are the files Ray reads
        for file in local:
            check_jsonl(file)  # with file and line, not in a task's traceback
        paths = [str(file) for file in local]
    if "://" not in vectors and Path(vectors).exists() and not Path(vectors).is_dir():
        raise ValueError(f"--vectors {vectors} is a file, not a directory for the Parquet vectors")
    check_candidates(candidates)
    nlp = spacy.load(model) if nlp is None else nlp
    limit = dedupe_threshold(get_similarity_pipe(nlp, initialized=True), threshold)
    stages = {} if stages is None else stages
    mark = time.perf_counter()
    if not ray.is_initialized():
        ray.init(include_dashboard=False)
    ray.data.DataContext.get_current().enable_progress_bars = show_progress(progress)
    stages["start"] = time.perf_counter() - mark
    mark = time.perf_counter()
    # The read tasks reserve no CPU, so they run while the actors start instead of waiting for them.
    # A local input's files are listed: Ray reads them all, and no others.
    extensions = None if isinstance(paths, list) else JSONL_EXTENSIONS
    texts = ray.data.read_json(paths, num_cpus=0, file_extensions=extensions)
    try:
        files = write_encoded(texts, model, vectors, workers=workers)
    except ray.exceptions.RayError as err:
        cause = ray_error_cause(err)
        first = (str(cause).strip().splitlines() or [""])[0]
        raise ValueError(
            f"Reading or encoding {input} on Ray failed ({type(cause).__name__}: {first}); Ray's log has the traceback"
        ) from err
    except ValueError as err:  # a bad row, reported by an actor
        raise ValueError(f"{input}: {err}") from err
    stages["encode"] = time.perf_counter() - mark
    return find_duplicates_dataset(
        vectors,
        model,
        threshold=limit,
        k=k,
        candidates=candidates,
        c=c,
        workers=workers,
        files=files,
        nlp=nlp,
        stages=stages,
    )
