"""The resumable encoding run: a collection's texts encoded chunk by chunk into a vector store
(`store.py`), each finished chunk listed in the manifest. A run killed at any point and started again
with the same settings encodes only the chunks the manifest does not list; other settings start a new
store, with a warning.
"""

import multiprocessing
import warnings
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Deque, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import numpy
from spacy.language import Language
from spacy.util import minibatch
from tqdm import tqdm

from ..component import PIPE_NAME, get_similarity_pipe
from ..space import vector_space
from ..util import one_thread, show_progress
from .encode import TextOrDoc
from .store import (
    CHUNK_SIZE,
    LEARNED,
    MANIFEST,
    VectorStore,
    check_replaceable,
    create_store,
    n_chunks,
    open_learned,
    read_json,
    read_manifest,
    record_chunk,
    store_key,
    write_chunk,
    write_manifest,
)

Encoded = Tuple[int, int, Tuple[str, Optional[str]]]  # a chunk's index, size and checksums
_WORKER: Dict[str, Any] = {}  # the forked encoding worker's pipeline and settings


class StoreWarning(UserWarning):
    """A work dir of other settings (model, input, format, ...) is started afresh."""


def encode_collection(
    nlp: Language,
    texts: Iterable[TextOrDoc],
    n: int,
    path: Union[str, Path],
    *,
    source: Optional[Dict[str, Any]] = None,
    pipe_name: str = PIPE_NAME,
    chunk_size: int = CHUNK_SIZE,
    batch_size: int = 256,
    n_process: int = 1,
    progress: bool = True,
    fresh: bool = False,
    precision: str = "float32",
    dims: Optional[int] = None,
) -> VectorStore:
    """Encode the `n` texts or docs of `texts` into a vector store at `path`, resuming one that a run
    with the same model, `source` (what identifies the input, e.g. a hash of its bytes) and chunk size
    left there, unless `fresh`. `n_process > 1` encodes chunks in forked processes, one BLAS thread each;
    at most 2 * n_process chunks of texts are read ahead. `precision` and `dims`: the stored learned
    columns (`precision.py`); ValueError for an unknown precision."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    if n_process < 1:
        raise ValueError(f"n_process must be positive, got {n_process}")
    path = Path(path)
    pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
    space = vector_space(pipe.comparison)
    width = pipe.encoder.get_dim("nO")
    key = store_key(str(pipe.model_id), pipe_name, space, n, chunk_size, width, source, precision, dims)
    manifest = _resume_or_create(path, key, fresh=fresh)
    done = set(manifest["done"])
    settings = {"path": str(path), "batch_size": batch_size, **key}
    todo = ((i, chunk) for i, chunk in enumerate(minibatch(texts, chunk_size)) if i not in done)
    with tqdm(total=n, desc="encoding", unit="doc", disable=not show_progress(progress)) as bar:
        bar.update(sum(min(chunk_size, n - i * chunk_size) for i in done))
        for i, count, sums in _run_chunks(nlp, todo, settings, n_process):
            record_chunk(manifest, i, sums)
            write_manifest(path, manifest)
            bar.update(count)
    if len(manifest["done"]) != n_chunks(n, chunk_size):
        raise ValueError(f"Expected {n:,} texts to encode, got fewer: the input changed while it was read.")
    return VectorStore(path)


def _resume_or_create(path: Path, key: Dict[str, Any], *, fresh: bool) -> Dict[str, Any]:
    """The manifest of a store at `path` made with the same `key`, or a new empty store; a saved
    index (`SimilarityIndex.save`: the user's, with texts, ids or candidates) is refused."""
    if _saved_index(path):
        raise ValueError(f"{path} is a saved index, not a work dir: give another work dir (the index is kept)")
    if not fresh and (path / MANIFEST).exists():
        fix = f"delete {path} or pass --fresh"
        manifest = read_json(path / MANIFEST, fix)
        changed = [field for field, value in key.items() if manifest.get(field) != value]
        if not changed:
            manifest = read_manifest(path, fix=fix)  # its fields checked
            open_learned(path / LEARNED, key, fix)
            return manifest
        check_replaceable(path)
        message = f"{path} holds vectors of other settings ({', '.join(changed)}): starting afresh"
        warnings.warn(message, StoreWarning, stacklevel=3)
    return create_store(path, key)


def _saved_index(path: Path) -> bool:
    try:
        return "index" in read_json(path / MANIFEST, "")
    except ValueError:  # none, or damaged: the caller's checks say so
        return False


def _run_chunks(
    nlp: Language, todo: Iterator[Tuple[int, List[TextOrDoc]]], settings: Dict[str, Any], n_process: int
) -> Iterator[Encoded]:
    """Encode chunks, yielding (chunk index, size, checksums) as each finishes; at most
    2 * n_process chunks are read ahead. A worker's error (e.g. a full disk) ends the run, and so does a
    worker that dies (e.g. killed for lack of memory): a ChildProcessError, not a wait for its chunk."""
    _WORKER.update(nlp=nlp, **settings)
    if n_process == 1:
        yield from map(_encode_chunk, todo)
        return
    context = multiprocessing.get_context("fork")
    pending: Deque["Future[Encoded]"] = deque()
    with ProcessPoolExecutor(n_process, mp_context=context, initializer=one_thread) as pool:
        try:
            for task in todo:
                pending.append(pool.submit(_encode_chunk, task))
                while len(pending) >= 2 * n_process:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        except BrokenProcessPool:
            raise ChildProcessError(
                "An encoding process died (killed, e.g. for lack of memory): the chunks listed so far are kept. "
                "Run again to resume, with a smaller --n-process if memory ran out."
            ) from None
        finally:  # an error or an abandoned run: the chunks not started are not encoded
            for future in pending:
                future.cancel()


def _encode_chunk(task: Tuple[int, List[TextOrDoc]]) -> Encoded:
    """Encode one chunk into the store (rows of learned.npy, its lexical file)."""
    i, texts = task
    pipe = get_similarity_pipe(_WORKER["nlp"], _WORKER["pipe_name"])
    distinct: Dict[Any, int] = {}  # each distinct text of the chunk is encoded once
    where = [distinct.setdefault(t if isinstance(t, str) else (n, None), n) for n, t in enumerate(texts)]
    encoded = pipe.encode([texts[n] for n in distinct.values()], batch_size=_WORKER["batch_size"])
    full = encoded[numpy.unique(where, return_inverse=True)[1]] if texts else encoded
    return i, len(texts), write_chunk(Path(_WORKER["path"]), _WORKER, i, full)
