"""Ray Data engine: encode a Dataset on an actor pool, write the vectors as Parquet and find
the duplicates of the encoded collection (docs/search.md)."""

import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy
import spacy
from spacy.language import Language

from ..component import PIPE_NAME, get_similarity_pipe
from ..files import atomic_directory
from ..search.corpus import CANDIDATES, CorpusIndex, check_candidates, sort_pairs
from ..search.dedupe import dedupe_threshold
from ..search.texts import JSONL_SUFFIXES, scan_collection
from ..space import vector_space
from ..util import import_extra, is_uri, one_thread, show_progress, timed
from .parquet import PART, collect_vectors, encoded_table, write_part
from .ray_local import init_local_ray

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
    """A Ray Data actor that loads the pipeline once and encodes blocks of texts: the rows, or with
    `output` one Parquet file a block (its name, or a bad row's error)."""

    def __init__(
        self, model: str, text_column: str, id_column: str, pipe_name: str, batch_size: int, output: Optional[str]
    ) -> None:
        one_thread()
        self.nlp = spacy.load(model)
        self.pipe = get_similarity_pipe(self.nlp, pipe_name, initialized=True)
        self.columns, self.batch_size, self.output = (text_column, id_column), batch_size, output
        self.lexical_width = vector_space(self.pipe.comparison).lexical_width

    def __call__(self, batch: Dict[str, numpy.ndarray]) -> Any:
        text_column, id_column = self.columns
        problem = batch_problem(batch, text_column, id_column)
        if problem is not None:
            if self.output is None:
                raise ValueError(problem)
            return {"file": numpy.asarray([""]), "error": numpy.asarray([problem])}
        vectors = self.pipe.encode([str(text) for text in batch[text_column]], batch_size=self.batch_size)
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
    """The files of a local JSONL collection that `dedupe_jsonl` checks and Ray reads: `path` itself, or
    a directory's top-level .jsonl, .ndjson and .json files, plain or compressed. ValueError if none."""
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
    """The record count of `jsonl_files(path)`, checked as `dedupe` reads them, with ids (ValueError: file, line)."""
    n = 0
    for file in jsonl_files(path):
        if file.suffix.lower() in COMPRESSIONS:
            continue
        collection = scan_collection(file, format="jsonl", field=text_column, id_field=id_column)
        if not collection.keyed:
            raise ValueError(f"{file}: no '{id_column}' field: dedupe-ray keys the pairs by the records' ids")
        n += collection.n
    return n


def check_vectors_dir(path: Path) -> None:
    """Refuse a --vectors-output path that `dedupe_jsonl` would not replace whole with this run's Parquet
    files: a file, or a directory holding anything but an earlier run's."""
    if path.exists() and not path.is_dir():
        raise ValueError(f"--vectors-output {path} is a file, not a directory for the Parquet vectors")
    others = sorted(p.name for p in path.iterdir() if not PART.fullmatch(p.name)) if path.is_dir() else []
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise ValueError(
            f"--vectors-output {path} holds other files than the Parquet vectors of a run ({shown}), which the run "
            "would replace: give a new directory"
        )


def ray_error_cause(err: BaseException) -> BaseException:
    """The exception a Ray task raised, out of Ray's wrappers (RayTaskError, UserCodeException)."""
    seen = {id(err)}
    while True:
        cause = getattr(err, "cause", None) or err.__cause__
        if cause is None or id(cause) in seen:
            return err
        seen.add(id(cause))
        err = cause


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
    """`dataset` encoded on `workers` actors: rows of id, vector, model_id (and a hybrid's lexical
    columns), or with `output` (directory or URI) Parquet files there, named by the rows."""
    settings = dict(text_column=text_column, id_column=id_column, pipe_name=pipe_name, batch_size=batch_size)
    return _on_actors(dataset, EncodeBatch, dict(model=str(model), output=output, **settings), block_size, workers)


def _on_actors(dataset: Any, actor: type, kwargs: Dict[str, Any], batch_size: int, workers: int) -> Any:
    """`dataset.map_batches` of numpy batches on a pool of `workers` actors, one CPU each."""
    pool = _ray().data.ActorPoolStrategy(size=workers)
    return dataset.map_batches(
        actor, fn_constructor_kwargs=kwargs, batch_size=batch_size, batch_format="numpy", compute=pool, num_cpus=1
    )


def write_encoded(dataset: Any, model: str, path: str, **settings: Any) -> List[str]:
    """Encode `dataset` with `encode_dataset(dataset, model, output=path, **settings)`; the names of
    the Parquet files this run wrote in `path` (the vectors never pass through the driver)."""
    names: List[str] = []
    for batch in encode_dataset(dataset, model, output=str(path), **settings).iter_batches(batch_format="numpy"):
        problem = next((str(error) for error in batch["error"] if error), None)
        if problem is not None:
            raise ValueError(problem)
        names.extend(str(name) for name in batch["file"])
    return sorted(names)


def read_vectors(path: str) -> Any:
    """The encoded rows that `write_encoded` wrote in a directory, as a Dataset."""
    return _ray().data.read_parquet(str(path))


class SearchShard:
    """A Ray Data actor: the duplicates of batches of query positions, on a pipeline and corpus index loaded once."""

    def __init__(self, model: str, pipe_name: str, state: Any, threshold: float, k: int, c: int) -> None:
        one_thread()
        ray = _ray()
        store, index_state = ray.get(state) if isinstance(state, ray.ObjectRef) else state
        self.index = CorpusIndex(spacy.load(model), store, pipe_name=pipe_name, state=index_state)
        self.threshold, self.k, self.c = threshold, k, c

    def __call__(self, batch: Dict[str, numpy.ndarray]) -> Dict[str, numpy.ndarray]:
        pairs = self.index.duplicates(self.threshold, k=self.k, c=self.c, query_ids=batch["data"].tolist())
        i, j = (numpy.asarray([pair[side] for pair in pairs], dtype="int64") for side in (0, 1))
        return {"i": i, "j": j, "score": numpy.asarray([pair[2] for pair in pairs], dtype="float32")}


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
    """Duplicate pairs (id_a, id_b, score), id_a < id_b, best first, of an encoded Dataset or of
    `write_encoded`'s Parquet directory, as `find_duplicates` gives them; actors search shards of
    the queries. `stages`, if given, gets the seconds of each stage."""
    nlp = spacy.load(model) if nlp is None else nlp
    pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
    limit = dedupe_threshold(pipe, threshold)  # before the reads
    ray = _ray()
    stages = {} if stages is None else stages
    with timed(stages, "collect"):
        ids, store = collect_vectors(encoded, files=files)
    if len(ids) and store.model_id != pipe.model_id:
        raise ValueError(
            f"The vectors were encoded by model '{store.model_id}', but {model} is model '{pipe.model_id}'"
        )
    if not len(ids):
        return []
    with timed(stages, "index"):
        index = CorpusIndex(nlp, store, pipe_name=pipe_name, candidates=candidates)
    with timed(stages, "search"):
        state = ray.put((store, index.state()))
        # In-memory positions: a read task could wait forever for the CPUs the actors hold. Shards
        # of at most `batch_size` queries keep every task short, so Ray Data sees steady progress.
        n_shards = max(4 * workers, -(-len(ids) // max(1, batch_size)))
        shards = numpy.array_split(numpy.arange(len(ids), dtype="int64"), max(1, min(len(ids), n_shards)))
        settings = dict(model=str(model), pipe_name=pipe_name, state=state, threshold=limit, k=k, c=c)
        found = _on_actors(ray.data.from_numpy(shards), SearchShard, settings, batch_size, workers)
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
    progress: bool = True,
    nlp: Optional[Language] = None,
    stages: Optional[Dict[str, float]] = None,
) -> List[IdPair]:
    """Encode a JSONL collection ('text', unique 'id') on Ray (RAY_ADDRESS, else a local Ray),
    write its vectors as Parquet to `vectors` and return its duplicate pairs as
    `find_duplicates_dataset` does. Local inputs are checked before Ray starts. Raises ValueError."""
    ray = _ray()
    # Everything that can be checked here, before Ray starts and encodes the collection
    paths: Union[str, List[str]] = input  # a remote directory: Ray lists it
    if not is_uri(input):
        local = jsonl_files(Path(input))  # the files checked here are the files Ray reads
        for file in local:
            check_jsonl(file)  # with file and line, not in a task's traceback
        paths = [str(file) for file in local]
    if not is_uri(vectors):
        check_vectors_dir(Path(vectors))
    check_candidates(candidates)
    nlp = spacy.load(model) if nlp is None else nlp
    limit = dedupe_threshold(get_similarity_pipe(nlp, initialized=True), threshold)
    stages = {} if stages is None else stages
    with timed(stages, "start"):
        if not ray.is_initialized():
            init_local_ray(ray, include_dashboard=False)  # ended with this process, even a killed one
        ray.data.DataContext.get_current().enable_progress_bars = show_progress(progress)
    start = time.perf_counter()
    # The read tasks reserve no CPU, so they run while the actors start instead of waiting for them.
    # A local input's files are listed: Ray reads them all, and no others.
    texts = ray.data.read_json(paths, num_cpus=0, file_extensions=None if isinstance(paths, list) else JSONL_EXTENSIONS)
    try:
        if is_uri(vectors):  # only this run's files are read
            files = write_encoded(texts, model, vectors, workers=workers)
        else:  # written beside and then in place of the directory: a killed run's files never join a rerun's
            with atomic_directory(vectors) as tmp:
                files = write_encoded(texts, model, str(tmp), workers=workers)
    except ray.exceptions.RayError as err:
        cause = ray_error_cause(err)
        first = (str(cause).strip().splitlines() or [""])[0]
        raise ValueError(
            f"Reading or encoding {input} on Ray failed ({type(cause).__name__}: {first}); Ray's log has the traceback"
        ) from err
    except ValueError as err:  # a bad row, reported by an actor
        raise ValueError(f"{input}: {err}") from err
    stages["encode"] = time.perf_counter() - start
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
