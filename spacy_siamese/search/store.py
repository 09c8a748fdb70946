"""A collection's full vectors on disk, in chunks that a restarted run reuses: the package's one
on-disk format (a `dedupe` work dir, an `index` directory). A store directory holds:

- `manifest.json`: what decides the content (model id, pipe, comparison, the input's fingerprint,
  chunk size, widths), the finished chunks with a SHA-256 of each chunk's rows and lexical file, and
  the SHA-256 of every other file it lists; replaced atomically after each finished chunk or file.
- `learned.npy`: the learned columns, float32 (n, learned_width), allocated when the store is made.
- `lexical-NNNNN.npz`: a hybrid pipe's lexical columns of chunk NNNNN, as an exact sparse matrix.

A run killed at any point and started again with the same settings encodes only the chunks the
manifest does not list; other settings start a new store, with a warning. A file whose checksum is
not the recorded one is an error naming it.
"""

import errno
import hashlib
import io
import multiprocessing
import os
import shutil
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from scipy.sparse import csr_matrix, load_npz, save_npz, vstack
from spacy.language import Language
from spacy.util import minibatch
from tqdm import tqdm

from ..component import PIPE_NAME, get_similarity_pipe
from ..files import DirKind, atomic_write, check_outputs
from ..util import one_thread, show_progress
from .encode import TextOrDoc
from .space import vector_space

FORMAT = "spacy_siamese.vector_store.v2"
MANIFEST = "manifest.json"
LEARNED = "learned.npy"
CHUNK_SIZE = 8192
# What a store directory holds (names start so): a directory with anything else is not replaced.
STORE_FILES = (MANIFEST, LEARNED, "lexical-", "compact-", "candidates-", "texts.jsonl", "ids.jsonl")
STORE: DirKind = ("a vector store", lambda names: all(name.startswith(STORE_FILES) for name in names))

# The fields of a manifest and their types.
FIELDS = {"model_id": str, "pipe_name": str, "n": int, "chunk_size": int, "done": list, "checksums": dict}
FIELDS.update(learned_width=int, lexical_width=int)
_WORKER: Dict[str, Any] = {}  # the forked encoding worker's pipeline and settings


class StoreWarning(UserWarning):
    """A work dir of other settings (model, input, format, ...) is started afresh."""


class MemoryStore:
    """Full vectors held in memory as learned columns (dense) and lexical columns (sparse, for a
    hybrid), with the interface of `VectorStore`: e.g. shipped to Ray workers."""

    path: Optional[Path] = None

    def __init__(self, learned: numpy.ndarray, lexical: Optional[csr_matrix], model_id: str) -> None:
        self.learned = learned
        self.lexical = lexical
        self.model_id = model_id

    def __len__(self) -> int:
        return len(self.learned)

    def rows(self, ids: Union[Sequence[int], numpy.ndarray]) -> numpy.ndarray:
        """The full vectors of items `ids`, float32 (len(ids), width)."""
        ids = numpy.asarray(ids, dtype="int64")
        if self.lexical is None:
            return numpy.asarray(self.learned[ids], dtype="float32")
        width = self.learned.shape[1]
        out = numpy.empty((len(ids), width + self.lexical.shape[1]), dtype="float32")
        out[:, :width] = self.learned[ids]
        out[:, width:] = self.lexical[ids].toarray()
        return out

    def read_file(self, name: str) -> Optional[bytes]:
        """The bytes of a file saved with `save_file` (checked), None if there is none."""
        return None

    def save_file(self, name: str, data: bytes) -> None:
        """Keep a file beside the vectors (a cache a rerun reads): nothing for a store in memory."""


class VectorStore(MemoryStore):
    """The full vectors of a collection, read from disk and checked: `rows(ids)` are the items'
    `doc.vector`, so `pipe.compare` of two rows is `doc.similarity`. `fix`: a damaged file's advice."""

    path: Path

    def __init__(self, path: Union[str, Path], *, fix: Optional[str] = None) -> None:
        path = Path(path)
        self.path = path
        self.fix = fix or f"delete {path} or pass --fresh"
        self.manifest = read_manifest(path, fix=self.fix)
        if not self.complete:
            raise ValueError(f"The vector store at {path} is not complete: run the encoding again to finish it.")
        learned = self._learned()
        lexical = None
        if self.manifest["lexical_width"]:
            parts = [self._lexical(i) for i in range(self.n_chunks)]
            lexical = vstack(parts, format="csr") if parts else csr_matrix((0, self.manifest["lexical_width"]))
        super().__init__(learned, lexical, self.manifest["model_id"])

    @property
    def n_chunks(self) -> int:
        return _n_chunks(self.manifest["n"], self.manifest["chunk_size"])

    @property
    def complete(self) -> bool:
        return len(self.manifest["done"]) == self.n_chunks

    def read_file(self, name: str) -> Optional[bytes]:
        expected = self.manifest.get("files", {}).get(name)
        if expected is None:
            return None
        try:
            data = (self.path / name).read_bytes()
        except OSError as err:
            raise damaged(self.path / name, err.strerror or str(err), self.fix) from None
        if _sha256(data) != expected:
            raise damaged(self.path / name, "its checksum is not the one in the manifest", self.fix)
        return data

    def save_file(self, name: str, data: bytes) -> None:
        _save(self.path / name, data)
        self.manifest.setdefault("files", {})[name] = _sha256(data)
        write_manifest(self.path, self.manifest)

    def _learned(self) -> numpy.ndarray:
        """learned.npy, memory-mapped, after checking its shape and each chunk's checksum."""
        file, shape = self.path / LEARNED, (self.manifest["n"], self.manifest["learned_width"])
        try:
            learned = numpy.load(file, mmap_mode="r") if shape[0] else numpy.zeros(shape, dtype="<f4")
        except (OSError, ValueError) as err:
            raise damaged(file, str(err), self.fix) from None
        if learned.shape != shape or learned.dtype != numpy.dtype("<f4"):
            raise damaged(file, f"{learned.dtype} {learned.shape}, not float32 {shape}", self.fix)
        size = self.manifest["chunk_size"]
        for i in range(self.n_chunks):
            if _sha256(learned[i * size : (i + 1) * size].tobytes()) != self.manifest["checksums"][str(i)]:
                raise damaged(file, f"the rows of chunk {i} do not have their recorded checksum", self.fix)
        return learned

    def _lexical(self, i: int) -> csr_matrix:
        data = self.read_file(_lexical_name(i))
        if data is None:
            raise damaged(self.path / MANIFEST, f"no checksum of {_lexical_name(i)}", self.fix)
        return load_npz(io.BytesIO(data)).tocsr()


def damaged(file: Path, problem: str, fix: str) -> ValueError:
    """The error of a damaged or missing file of a store: the file, what is wrong and the fix."""
    return ValueError(f"{file} is damaged or missing ({problem}): {fix}")


@contextmanager
def disk_errors(file: Path) -> Iterator[None]:
    """An OS error (a full disk, a lost mount) while writing `file` as an OSError naming it."""
    try:
        yield
    except OSError as err:
        reason = err.strerror or str(err)
        raise OSError(
            err.errno,
            f"Could not write {file}: {reason}. Fix that (e.g. free space) and run again: finished work is kept",
        ) from None


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
) -> VectorStore:
    """Encode the `n` texts or docs of `texts` into a vector store at `path`, resuming one that a run
    with the same model, `source` (what identifies the input, e.g. a hash of its bytes) and chunk size
    left there, unless `fresh`. `n_process > 1` encodes chunks in forked processes, one BLAS thread each;
    at most 2 * n_process chunks of texts are read ahead."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    if n_process < 1:
        raise ValueError(f"n_process must be positive, got {n_process}")
    path = Path(path)
    pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
    space = vector_space(pipe.comparison)
    width = pipe.encoder.get_dim("nO")
    key = store_key(str(pipe.model_id), pipe_name, space, n, chunk_size, width, source)
    manifest = _resume_or_create(path, key, fresh=fresh)
    done = set(manifest["done"])
    n_chunks = _n_chunks(n, chunk_size)
    settings = {"path": str(path), "batch_size": batch_size, **key}
    bar = tqdm(total=n, desc="encoding", unit="doc", disable=not show_progress(progress))
    bar.update(sum(min(chunk_size, n - i * chunk_size) for i in done))
    todo = ((i, chunk) for i, chunk in enumerate(minibatch(texts, chunk_size)) if i not in done)
    with bar:
        for i, count, sums in _run_chunks(nlp, todo, settings, n_process):
            _record(manifest, i, sums)
            write_manifest(path, manifest)
            bar.update(count)
    if len(manifest["done"]) != n_chunks:
        raise ValueError(f"Expected {n:,} texts to encode, got fewer: the input changed while it was read.")
    return VectorStore(path)


def write_store(
    path: Union[str, Path],
    vectors: numpy.ndarray,
    *,
    model_id: str,
    space: Any,
    pipe_name: str = PIPE_NAME,
    chunk_size: int = CHUNK_SIZE,
) -> VectorStore:
    """A vector store at `path` (replaced) of full vectors encoded elsewhere (e.g. held by an index) by
    model `model_id` with that `VectorSpace`."""
    path = Path(path)
    key = store_key(model_id, pipe_name, space, len(vectors), chunk_size, vectors.shape[1])
    manifest = _resume_or_create(path, key, fresh=True)
    for i in range(_n_chunks(len(vectors), chunk_size)):
        _record(manifest, i, _write_chunk(path, key, i, vectors[i * chunk_size : (i + 1) * chunk_size]))
    write_manifest(path, manifest)
    return VectorStore(path)


def store_key(
    model_id: str, pipe_name: str, space: Any, n: int, chunk_size: int, width: int, source: Any = None
) -> Dict[str, Any]:
    """What decides a store's content (a store is resumed only when all of it is the same); the
    comparison's kind and lexical weight as text (JSON rounds floats)."""
    return {
        "format": FORMAT,
        "model_id": model_id,
        "pipe_name": pipe_name,
        "comparison": {"kind": space.kind, "weight": repr(space.weight)},
        "n": int(n),
        "chunk_size": int(chunk_size),
        "learned_width": int(width - space.lexical_width),
        "lexical_width": int(space.lexical_width),
        "source": source or {},
    }


def read_manifest(path: Union[str, Path], *, fix: Optional[str] = None) -> Dict[str, Any]:
    """A store's manifest, or a ValueError naming the file and the fix."""
    file = Path(path) / MANIFEST
    fix = fix or f"delete {path} or pass --fresh"
    if not file.exists():
        raise ValueError(f"{path} is not a vector store: it has no {MANIFEST}.")
    manifest = _read_json(file, fix)
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{file} is not a manifest of this version's vector store ({FORMAT}): {fix}")
    bad = [name for name, kind in FIELDS.items() if not isinstance(manifest.get(name), kind)]
    if not bad:
        sums, n_chunks = manifest["checksums"], _n_chunks(manifest["n"], max(1, manifest["chunk_size"]))
        bad += ["chunk_size"] if manifest["chunk_size"] < 1 else []
        bad += ["done"] if any(not isinstance(i, int) or not 0 <= i < n_chunks for i in manifest["done"]) else []
        bad += ["checksums"] if any(not isinstance(sums.get(str(i)), str) for i in manifest["done"]) else []
    if bad:
        raise damaged(file, f"no valid {', '.join(bad)}", fix)
    return manifest


def write_manifest(path: Path, manifest: Dict[str, Any]) -> None:
    file = path / MANIFEST
    with disk_errors(file), atomic_write(file) as out:
        out.write(srsly.json_dumps(manifest, indent=2).encode("utf8"))


def check_replaceable(path: Path) -> None:
    """A ValueError if `path` is not a directory holding only what a vector store writes (so that
    replacing it would delete the user's files)."""
    check_outputs([], [], output_dirs=[path], kind=STORE)


# -- encoding ------------------------------------------------------------------------


def _resume_or_create(path: Path, key: Dict[str, Any], *, fresh: bool) -> Dict[str, Any]:
    """The manifest of a store at `path` made with the same `key`, or a new empty store."""
    if not fresh and (path / MANIFEST).exists():
        fix = f"delete {path} or pass --fresh"
        manifest = _read_json(path / MANIFEST, fix)
        changed = [field for field, value in key.items() if manifest.get(field) != value]
        if not changed:
            manifest = read_manifest(path, fix=fix)  # its fields checked
            if not (path / LEARNED).exists():
                raise damaged(path / LEARNED, "no such file", fix)
            return manifest
        check_replaceable(path)
        message = f"{path} holds vectors of other settings ({', '.join(changed)}): starting afresh"
        warnings.warn(message, StoreWarning, stacklevel=3)
    check_replaceable(path)
    if path.exists():
        shutil.rmtree(path)
    with disk_errors(path / LEARNED):
        path.mkdir(parents=True)
        _allocate(path / LEARNED, (key["n"], key["learned_width"]))
    manifest = {**key, "done": [], "checksums": {}}
    write_manifest(path, manifest)
    return manifest


def _read_json(file: Path, fix: str) -> Dict[str, Any]:
    try:
        manifest = srsly.read_json(file)
    except (OSError, ValueError) as err:
        raise damaged(file, f"not valid JSON: {err}", fix) from None
    if not isinstance(manifest, dict):
        raise damaged(file, f"a JSON {type(manifest).__name__}, not an object", fix)
    return manifest


def _allocate(file: Path, shape: Tuple[int, int]) -> None:
    """An .npy file of float32 `shape` whose blocks are allocated on disk: a full disk fails here,
    not later (a sparse file's first write to a full disk kills a memory-mapped writer: SIGBUS)."""
    numpy.lib.format.open_memmap(file, mode="w+", dtype="<f4", shape=shape).flush()
    with open(file, "ab") as out:
        if hasattr(os, "posix_fallocate") and out.seek(0, 2):
            try:
                os.posix_fallocate(out.fileno(), 0, out.tell())
            except OSError as err:
                if err.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # not supported by that filesystem
                    raise
        os.fsync(out.fileno())


def _n_chunks(n: int, chunk_size: int) -> int:
    return (int(n) + chunk_size - 1) // chunk_size


def _run_chunks(
    nlp: Language, todo: Iterator[Tuple[int, List[TextOrDoc]]], settings: Dict[str, Any], n_process: int
) -> Iterator[Tuple[int, int, Tuple[str, Optional[str]]]]:
    """Encode chunks, yielding (chunk index, size, checksums) as each finishes; at most
    2 * n_process chunks are read ahead. A worker's error (e.g. a full disk) ends the run."""
    _WORKER.update(nlp=nlp, **settings)
    if n_process == 1:
        for i, chunk in todo:
            yield _encode_chunk((i, chunk))
        return
    context = multiprocessing.get_context("fork")
    with context.Pool(n_process, initializer=one_thread) as pool:
        pending: List[Any] = []
        for task in todo:
            pending.append(pool.apply_async(_encode_chunk, (task,)))
            while len(pending) >= 2 * n_process:
                yield pending.pop(0).get()
        for result in pending:
            yield result.get()


def _encode_chunk(task: Tuple[int, List[TextOrDoc]]) -> Tuple[int, int, Tuple[str, Optional[str]]]:
    """Encode one chunk into the store (rows of learned.npy, its lexical file)."""
    i, texts = task
    pipe = get_similarity_pipe(_WORKER["nlp"], _WORKER["pipe_name"])
    distinct: Dict[Any, int] = {}  # each distinct text of the chunk is encoded once
    where = [distinct.setdefault(t if isinstance(t, str) else (n, None), n) for n, t in enumerate(texts)]
    encoded = pipe.encode([texts[n] for n in distinct.values()], batch_size=_WORKER["batch_size"])
    full = encoded[numpy.unique(where, return_inverse=True)[1]] if texts else encoded
    return i, len(texts), _write_chunk(Path(_WORKER["path"]), _WORKER, i, full)


def _write_chunk(path: Path, key: Dict[str, Any], i: int, full: numpy.ndarray) -> Tuple[str, Optional[str]]:
    """Write chunk i's rows (ordinary writes into the allocated file, flushed to disk) and lexical
    file; their checksums."""
    width = key["learned_width"]
    learned = numpy.ascontiguousarray(full[:, :width], dtype="<f4").tobytes()
    file = path / LEARNED
    with disk_errors(file), open(file, "r+b") as out:
        out.seek(numpy.load(file, mmap_mode="r").offset + i * key["chunk_size"] * 4 * width)
        out.write(learned)
        out.flush()
        os.fsync(out.fileno())
    if not key["lexical_width"]:
        return _sha256(learned), None
    buffer = io.BytesIO()
    save_npz(buffer, csr_matrix(full[:, width:]))
    _save(path / _lexical_name(i), buffer.getvalue())
    return _sha256(learned), _sha256(buffer.getvalue())


def _record(manifest: Dict[str, Any], i: int, sums: Tuple[str, Optional[str]]) -> None:
    """List chunk i as done, with its checksums."""
    manifest["checksums"][str(i)] = sums[0]
    if sums[1] is not None:
        manifest.setdefault("files", {})[_lexical_name(i)] = sums[1]
    manifest["done"] = sorted({*manifest["done"], i})


def _save(file: Path, data: bytes) -> None:
    with disk_errors(file):
        file.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(file) as out:
            out.write(data)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _lexical_name(i: int) -> str:
    return f"lexical-{i:05d}.npz"
