"""A collection's full vectors on disk, in chunks: the package's one on-disk format (a `dedupe` work
dir, an `index` directory), written by the resumable encoding run (`resumable.py`) or at once
(`write_store`). A store directory holds:

- `manifest.json`: what decides the content (model id, pipe, comparison, the input's fingerprint,
  chunk size, widths), the finished chunks with a SHA-256 of each chunk's rows and lexical file, and
  the SHA-256 of every other file it lists; replaced atomically after each finished chunk or file.
- `learned.npy`: the learned columns, float32 (n, learned_width) or compact (`precision.py`: the
  manifest's `precision` and `dims`), allocated when the store is made.
- `lexical-NNNNN.npz`: a hybrid pipe's lexical columns of chunk NNNNN, as an exact sparse matrix.

A file whose checksum is not the recorded one is an error naming it.
"""

import errno
import hashlib
import io
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple, Union

import numpy
import srsly
from scipy.sparse import csr_matrix, load_npz, save_npz, vstack

from ..component import PIPE_NAME
from ..defaults import CHUNK_SIZE
from ..files import DirKind, atomic_write, check_outputs
from .precision import Dequantized, check_precision, is_full, layout, quantize, stored_precision

FORMAT = "spacy_siamese.vector_store.v2"
MANIFEST = "manifest.json"
LEARNED = "learned.npy"
# What a store directory holds (names start so): a directory with anything else is not replaced.
STORE_FILES = (MANIFEST, LEARNED, "lexical-", "compact-", "candidates-", "texts.jsonl", "ids.jsonl")
STORE: DirKind = ("a vector store", lambda names: all(name.startswith(STORE_FILES) for name in names))

# The fields of a manifest and their types.
FIELDS = {"model_id": str, "pipe_name": str, "n": int, "chunk_size": int, "done": list, "checksums": dict}
FIELDS.update(learned_width=int, lexical_width=int)


class MemoryStore:
    """Full vectors in memory (learned columns dense, a hybrid's lexical ones sparse) with `VectorStore`'s interface."""

    path: Optional[Path] = None
    precision = "float32"  # of the learned columns (`precision.py`)
    exact = True  # whether rows are the full vectors (not compact: lower precision or truncated)

    def __init__(self, learned: numpy.ndarray, lexical: Optional[csr_matrix], model_id: str) -> None:
        self.learned, self.lexical, self.model_id = learned, lexical, model_id

    def __len__(self) -> int:
        return len(self.learned)

    def rows(self, ids: Union[Sequence[int], numpy.ndarray]) -> numpy.ndarray:
        """The full vectors of items `ids`, float32 (len(ids), width)."""
        ids = numpy.asarray(ids, dtype="int64")
        learned = numpy.asarray(self.learned[ids], dtype="float32")
        if self.lexical is None:
            return learned
        return numpy.hstack([learned, self.lexical[ids].toarray().astype("float32", copy=False)])

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
        learned: Any = self._learned()
        precision, dims = stored_precision(self.manifest)
        self.precision, self.exact = precision, is_full(precision, dims, self.manifest["learned_width"])
        if not self.exact:
            learned = Dequantized(learned, precision, dims, self.manifest["learned_width"])
        lexical = None
        if self.manifest["lexical_width"]:
            parts = [self._lexical(i) for i in range(self.n_chunks)]
            lexical = vstack(parts, format="csr") if parts else csr_matrix((0, self.manifest["lexical_width"]))
        super().__init__(learned, lexical, self.manifest["model_id"])

    @property
    def n_chunks(self) -> int:
        return n_chunks(self.manifest["n"], self.manifest["chunk_size"])

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
        if sha256(data) != expected:
            raise damaged(self.path / name, "its checksum is not the one in the manifest", self.fix)
        return data

    def save_file(self, name: str, data: bytes) -> None:
        _save(self.path / name, data)
        self.manifest.setdefault("files", {})[name] = sha256(data)
        write_manifest(self.path, self.manifest)

    def _learned(self) -> numpy.ndarray:
        """learned.npy, memory-mapped, after checking its shape and each chunk's checksum."""
        file = self.path / LEARNED
        learned = open_learned(file, self.manifest, self.fix)
        size = self.manifest["chunk_size"]
        for i in range(self.n_chunks):
            if sha256(learned[i * size : (i + 1) * size].tobytes()) != self.manifest["checksums"][str(i)]:
                raise damaged(file, f"the rows of chunk {i} do not have their recorded checksum", self.fix)
        return learned

    def _lexical(self, i: int) -> csr_matrix:
        data = self.read_file(lexical_name(i))
        if data is None:
            raise damaged(self.path / MANIFEST, f"no checksum of {lexical_name(i)}", self.fix)
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


def write_store(
    path: Union[str, Path],
    vectors: numpy.ndarray,
    *,
    model_id: str,
    space: Any,
    pipe_name: str = PIPE_NAME,
    chunk_size: int = CHUNK_SIZE,
    precision: str = "float32",
    dims: Optional[int] = None,
) -> VectorStore:
    """A vector store at `path` (replaced) of full vectors encoded elsewhere (e.g. by an index), at `precision`."""
    path = Path(path)
    key = store_key(model_id, pipe_name, space, len(vectors), chunk_size, vectors.shape[1], None, precision, dims)
    manifest = create_store(path, key)
    for i in range(n_chunks(len(vectors), chunk_size)):
        record_chunk(manifest, i, write_chunk(path, key, i, vectors[i * chunk_size : (i + 1) * chunk_size]))
    write_manifest(path, manifest)
    return VectorStore(path)


def store_key(
    model_id: str,
    pipe_name: str,
    space: Any,
    n: int,
    chunk_size: int,
    width: int,
    source: Any = None,
    precision: str = "float32",
    dims: Optional[int] = None,
) -> Dict[str, Any]:
    """What decides a store's content (resumed only when all of it is the same), the comparison's weight as
    text (JSON rounds floats); ValueError for an unknown precision or dims outside the learned columns."""
    learned_width = int(width - space.lexical_width)
    return {
        "format": FORMAT,
        "model_id": model_id,
        "pipe_name": pipe_name,
        "comparison": {"kind": space.kind, "weight": repr(space.weight)},
        "n": int(n),
        "chunk_size": int(chunk_size),
        "learned_width": learned_width,
        "lexical_width": int(space.lexical_width),
        "source": source or {},
        "precision": precision,
        "dims": check_precision(precision, dims, learned_width),
    }


def read_manifest(path: Union[str, Path], *, fix: str) -> Dict[str, Any]:
    """A store's manifest, or a ValueError naming the file and the fix."""
    file = Path(path) / MANIFEST
    if not file.exists():
        raise ValueError(f"{path} is not a vector store: it has no {MANIFEST}.")
    manifest = read_json(file, fix)
    if manifest.get("format") != FORMAT:
        raise ValueError(f"{file} is not a manifest of this version's vector store ({FORMAT}): {fix}")
    bad = [name for name, kind in FIELDS.items() if not isinstance(manifest.get(name), kind)]
    if not bad:
        sums, count = manifest["checksums"], n_chunks(manifest["n"], max(1, manifest["chunk_size"]))
        bad += ["chunk_size"] if manifest["chunk_size"] < 1 else []
        bad += ["done"] if any(not isinstance(i, int) or not 0 <= i < count for i in manifest["done"]) else []
        bad += ["checksums"] if any(not isinstance(sums.get(str(i)), str) for i in manifest["done"]) else []
    if bad:
        raise damaged(file, f"no valid {', '.join(bad)}", fix)
    try:  # a store of an earlier version has neither: float32, every column
        check_precision(manifest.get("precision", "float32"), manifest.get("dims"), manifest["learned_width"])
    except ValueError as err:
        raise ValueError(f"{file} records vectors this version cannot read ({err}): {fix}") from None
    return manifest


def open_learned(file: Path, key: Dict[str, Any], fix: str) -> numpy.ndarray:
    """A store's learned.npy, memory-mapped read-only; a ValueError naming it and `fix` if it is not of `key`'s
    dtype and shape (e.g. empty: numpy's EOFError, which a CLI reports as "Aborted.")."""
    dtype, shape = learned_layout(key)
    try:
        learned = numpy.load(file, mmap_mode="r") if shape[0] else numpy.zeros(shape, dtype=dtype)
    except (OSError, ValueError, EOFError) as err:
        raise damaged(file, str(err) or type(err).__name__, fix) from None
    if learned.shape != shape or learned.dtype != dtype:
        raise damaged(file, f"{learned.dtype} {learned.shape}, not {dtype} {shape}", fix)
    return learned


def learned_layout(key: Dict[str, Any]) -> Tuple[numpy.dtype, Tuple[int, ...]]:
    """The dtype and shape of a store's learned.npy."""
    dtype, tail = layout(*stored_precision(key))
    return dtype, (key["n"], *tail)


def create_store(path: Path, key: Dict[str, Any]) -> Dict[str, Any]:
    """A new empty store of settings `key` at `path` (if `check_replaceable`), learned.npy allocated; its manifest."""
    check_replaceable(path)
    if path.exists():
        shutil.rmtree(path)
    with disk_errors(path / LEARNED):
        path.mkdir(parents=True)
        _allocate(path / LEARNED, *learned_layout(key))
    manifest = {**key, "done": [], "checksums": {}}
    write_manifest(path, manifest)
    return manifest


def write_manifest(path: Path, manifest: Dict[str, Any]) -> None:
    _save(path / MANIFEST, srsly.json_dumps(manifest, indent=2).encode("utf8"))


def check_replaceable(path: Path) -> None:
    """A ValueError if `path` is not a directory of only a vector store's files (replacing it deletes the user's)."""
    check_outputs([], [], output_dirs=[path], kind=STORE)


def read_json(file: Path, fix: str) -> Dict[str, Any]:
    try:
        manifest = srsly.read_json(file)
    except (OSError, ValueError) as err:
        raise damaged(file, f"not valid JSON: {err}", fix) from None
    if not isinstance(manifest, dict):
        raise damaged(file, f"a JSON {type(manifest).__name__}, not an object", fix)
    return manifest


def _allocate(file: Path, dtype: numpy.dtype, shape: Tuple[int, ...]) -> None:
    """An .npy file of `dtype` and `shape` whose blocks are allocated on disk: a full disk fails here,
    not later (a sparse file's first write to a full disk kills a memory-mapped writer: SIGBUS)."""
    numpy.lib.format.open_memmap(file, mode="w+", dtype=dtype, shape=shape).flush()
    with open(file, "ab") as out:
        if hasattr(os, "posix_fallocate") and out.seek(0, 2):
            try:
                os.posix_fallocate(out.fileno(), 0, out.tell())
            except OSError as err:
                if err.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # not supported by that filesystem
                    raise
        os.fsync(out.fileno())


def n_chunks(n: int, chunk_size: int) -> int:
    return (int(n) + chunk_size - 1) // chunk_size


def write_chunk(path: Path, key: Dict[str, Any], i: int, full: numpy.ndarray) -> Tuple[str, Optional[str]]:
    """Write chunk i's rows (ordinary writes into the allocated file, flushed) and lexical file; their checksums."""
    width = key["learned_width"]
    rows = quantize(full[:, :width], *stored_precision(key))
    learned = rows.tobytes()
    file = path / LEARNED
    row_bytes = rows.itemsize * int(numpy.prod(rows.shape[1:]))
    with disk_errors(file), open(file, "r+b") as out:
        out.seek(numpy.load(file, mmap_mode="r").offset + i * key["chunk_size"] * row_bytes)
        out.write(learned)
        out.flush()
        os.fsync(out.fileno())
    if not key["lexical_width"]:
        return sha256(learned), None
    buffer = io.BytesIO()
    save_npz(buffer, csr_matrix(full[:, width:]))
    _save(path / lexical_name(i), buffer.getvalue())
    return sha256(learned), sha256(buffer.getvalue())


def record_chunk(manifest: Dict[str, Any], i: int, sums: Tuple[str, Optional[str]]) -> None:
    """List chunk i as done, with its checksums."""
    manifest["checksums"][str(i)] = sums[0]
    if sums[1] is not None:
        manifest.setdefault("files", {})[lexical_name(i)] = sums[1]
    manifest["done"] = sorted({*manifest["done"], i})


def _save(file: Path, data: bytes) -> None:
    with disk_errors(file):
        file.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(file) as out:
            out.write(data)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def lexical_name(i: int) -> str:
    return f"lexical-{i:05d}.npz"
