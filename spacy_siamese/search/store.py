"""A collection's learned vectors on disk, written in chunks that a restarted run reuses.

Layout of a store directory:

- `manifest.json`: what was encoded (model id, pipe, input, chunk size, widths) and which chunks
  are finished. It is replaced atomically after each finished chunk.
- `learned.npy`: the learned columns, float32 (n, learned_width), written in place (memmap).
- `lexical-NNNNN.npz`: a hybrid pipe's lexical columns of chunk NNNNN, as a sparse matrix (the
  hashed TF-IDF row has a few non-zero columns; its values are kept exactly).

A run killed at any point (even `kill -9`) and started again with the same model, input and
chunk size finds the manifest and encodes only the chunks it does not list; a chunk's rows are
written before the manifest names it, so a listed chunk is complete. Different settings start a
new store. Texts are read lazily: the parent holds at most `2 * n_process` chunks of texts.
"""

import multiprocessing
import shutil
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from scipy.sparse import csr_matrix, load_npz, save_npz, vstack
from spacy.language import Language
from spacy.util import minibatch
from tqdm import tqdm

from ..component import PIPE_NAME, get_similarity_pipe
from ..util import atomic_write, one_thread, show_progress
from .encode import TextOrDoc
from .space import vector_space

FORMAT = "spacy_siamese.vector_store.v1"
MANIFEST = "manifest.json"
LEARNED = "learned.npy"
CHUNK_SIZE = 8192
# What a store directory holds (names start so): a directory with anything else is not replaced.
STORE_FILES = (MANIFEST, LEARNED, "lexical-", "compact-")

_WORKER: Dict[str, Any] = {}  # the forked encoding worker's pipeline and settings


class MemoryStore:
    """Full vectors held in memory as learned columns (dense) and lexical columns (sparse, for a
    hybrid), with the interface of `VectorStore`: e.g. shipped to Ray workers."""

    path: Optional[Path] = None

    def __init__(self, learned: numpy.ndarray, lexical: Optional[csr_matrix], model_id: str) -> None:
        self.learned = learned
        self.lexical = lexical
        self._model_id = model_id

    def __len__(self) -> int:
        return len(self.learned)

    @property
    def model_id(self) -> str:
        return self._model_id

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


class VectorStore(MemoryStore):
    """The learned vectors of a collection of `len(store)` items, read from disk.

    `rows(ids)` gives the pipe's full vectors (learned and, for a hybrid, lexical columns) of
    the items, exactly as `doc.vector` has them, so `pipe.compare` of two rows is
    `doc.similarity` of the two texts."""

    def __init__(self, path: Union[str, Path]) -> None:
        self.manifest = read_manifest(path)
        if not self.complete:
            raise ValueError(f"The vector store at {path} is not complete: run the encoding again to finish it.")
        lexical = None
        if self.manifest["lexical_width"]:
            parts = [load_npz(Path(path) / _lexical_name(i)) for i in range(self.n_chunks)]
            lexical = vstack(parts, format="csr") if parts else csr_matrix((0, self.manifest["lexical_width"]))
        super().__init__(numpy.load(Path(path) / LEARNED, mmap_mode="r"), lexical, self.manifest["model_id"])
        self.path = Path(path)

    @property
    def n_chunks(self) -> int:
        return _n_chunks(self.manifest["n"], self.manifest["chunk_size"])

    @property
    def complete(self) -> bool:
        return len(self.manifest["done"]) == self.n_chunks


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
) -> VectorStore:
    """Encode the `n` texts of `texts` into a vector store at `path` (a Doc gives the vector
    `pipe.vectors` gives), resuming a store that an interrupted run with the same model,
    `source` (what identifies the input, e.g. its file name, size and modification time) and
    chunk size left there. `n_process > 1` encodes chunks in forked worker processes (one
    BLAS thread each)."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    if n_process < 1:
        raise ValueError(f"n_process must be positive, got {n_process}")
    path = Path(path)
    pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
    space = vector_space(pipe.comparison)
    width = pipe.encoder.get_dim("nO")
    lexical_width = space.lexical_width
    key = {
        "format": FORMAT,
        "model_id": pipe.model_id,
        "pipe_name": pipe_name,
        "n": int(n),
        "chunk_size": int(chunk_size),
        "learned_width": int(width - lexical_width),
        "lexical_width": int(lexical_width),
        "source": source or {},
    }
    manifest = _resume_or_create(path, key)
    done = set(manifest["done"])
    n_chunks = _n_chunks(n, chunk_size)
    settings = {"path": str(path), "n": n, "batch_size": batch_size, "pipe_name": pipe_name, **key}
    bar = tqdm(total=n, desc="encoding", unit="doc", disable=not show_progress(progress))
    bar.update(sum(min(chunk_size, n - i * chunk_size) for i in done))
    todo = ((i, chunk) for i, chunk in enumerate(minibatch(texts, chunk_size)) if i not in done)
    with bar:
        for i, count in _run_chunks(nlp, todo, settings, n_process):
            manifest["done"] = sorted({*manifest["done"], i})
            _write_manifest(path, manifest)
            bar.update(count)
    if len(manifest["done"]) != n_chunks:
        raise ValueError(f"Expected {n:,} texts to encode, got fewer: the input changed while it was read.")
    return VectorStore(path)


def write_store(
    path: Union[str, Path],
    vectors: numpy.ndarray,
    *,
    model_id: str,
    lexical_width: int = 0,
    pipe_name: str = PIPE_NAME,
    source: Optional[Dict[str, Any]] = None,
    chunk_size: int = CHUNK_SIZE,
) -> VectorStore:
    """A vector store at `path` of full vectors encoded elsewhere (e.g. by Ray workers) by
    model `model_id`; a hybrid's last `lexical_width` columns are kept sparse."""
    vectors = numpy.asarray(vectors, dtype="float32")
    path = Path(path)
    key = {
        "format": FORMAT,
        "model_id": model_id,
        "pipe_name": pipe_name,
        "n": len(vectors),
        "chunk_size": int(chunk_size),
        "learned_width": int(vectors.shape[1] - lexical_width),
        "lexical_width": int(lexical_width),
        "source": source or {},
    }
    _remove_store(path)
    manifest = _resume_or_create(path, key)
    learned = numpy.load(path / LEARNED, mmap_mode="r+")
    learned[:] = vectors[:, : key["learned_width"]]
    learned.flush()
    del learned
    for i in range(_n_chunks(len(vectors), chunk_size)):
        if lexical_width:
            rows = vectors[i * chunk_size : (i + 1) * chunk_size, key["learned_width"] :]
            save_npz(path / _lexical_name(i), csr_matrix(rows))
    manifest["done"] = list(range(_n_chunks(len(vectors), chunk_size)))
    _write_manifest(path, manifest)
    return VectorStore(path)


def read_manifest(path: Union[str, Path]) -> Dict[str, Any]:
    file = Path(path) / MANIFEST
    if not file.exists():
        raise ValueError(f"{path} is not a vector store: it has no {MANIFEST}.")
    manifest = srsly.read_json(file)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{file} is not a spacy-siamese vector store manifest ({FORMAT}).")
    return manifest


# -- encoding ------------------------------------------------------------------------


def _resume_or_create(path: Path, key: Dict[str, Any]) -> Dict[str, Any]:
    """The manifest of a store at `path` made with the same `key`, or a new empty store."""
    if (path / MANIFEST).exists():
        try:
            manifest = read_manifest(path)
        except (ValueError, OSError):
            manifest = {}
        same = all(manifest.get(field) == value for field, value in key.items())
        if same and (path / LEARNED).exists():
            return manifest
    _remove_store(path)
    path.mkdir(parents=True)
    shape = (key["n"], key["learned_width"])
    numpy.lib.format.open_memmap(path / LEARNED, mode="w+", dtype="float32", shape=shape).flush()
    manifest = {**key, "done": []}
    _write_manifest(path, manifest)
    return manifest


def _remove_store(path: Path) -> None:
    """Remove the store at `path` (of other settings, or the start of one) to make a new one; a
    ValueError if `path` is not a directory holding only what a vector store writes."""
    if not path.exists():
        return
    if not path.is_dir():
        raise ValueError(f"{path} is not a directory: a vector store needs a directory of its own.")
    others = sorted(p.name for p in path.iterdir() if not p.name.startswith(STORE_FILES))
    if others:
        raise ValueError(
            f"{path} is not a vector store (it holds {', '.join(others[:3])}{', ...' if len(others) > 3 else ''}) "
            "and would be deleted to make one: give a new or empty directory as the work dir."
        )
    shutil.rmtree(path)


def _write_manifest(path: Path, manifest: Dict[str, Any]) -> None:
    with atomic_write(path / MANIFEST) as file:
        file.write(srsly.json_dumps(manifest, indent=2).encode("utf8"))


def _n_chunks(n: int, chunk_size: int) -> int:
    return (int(n) + chunk_size - 1) // chunk_size


def _run_chunks(
    nlp: Language, todo: Iterator[Tuple[int, List[TextOrDoc]]], settings: Dict[str, Any], n_process: int
) -> Iterator[Tuple[int, int]]:
    """Encode chunks, yielding (chunk index, size) as each finishes; at most 2 * n_process
    chunks are read ahead."""
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


def _encode_chunk(task: Tuple[int, List[TextOrDoc]]) -> Tuple[int, int]:
    """Encode one chunk into the store (rows of learned.npy, its lexical file)."""
    i, texts = task
    w = _WORKER
    nlp = w["nlp"]
    pipe = get_similarity_pipe(nlp, w["pipe_name"])
    full = pipe.encode(texts, batch_size=w["batch_size"])
    path = Path(w["path"])
    start = i * w["chunk_size"]
    learned = numpy.load(path / LEARNED, mmap_mode="r+")
    learned[start : start + len(full)] = full[:, : w["learned_width"]]
    learned.flush()
    del learned
    if w["lexical_width"]:
        with atomic_write(path / _lexical_name(i)) as file:
            save_npz(file, csr_matrix(full[:, w["learned_width"] :]))
    return i, len(texts)


def _lexical_name(i: int) -> str:
    return f"lexical-{i:05d}.npz"
