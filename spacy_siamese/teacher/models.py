"""Teachers as they are used: a sentence-transformers bi-encoder (a name or a directory) or a
CrossEncoder directory (extra `spacy-siamese[teacher]`), loaded on demand; their vectors and pair
scores, cached on disk under a key of the teacher's weights and the texts, each entry checked
against its record (shape, dtype, SHA-256) and refused when it holds non-finite values."""

import hashlib
import json
import pickle
from functools import cache, partial
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy

from ..files import PathLike, atomic_write, sha256_file
from ..util import distinct_pair_texts, given_path, import_extra, pair_rows

EXTRA = "teacher"
TEACHER_BATCH = 64  # texts or pairs the teacher reads at once
CHUNK = 8192  # texts or pairs a cache entry: a killed run keeps every finished chunk


def device_name() -> str:
    """ "cuda" when torch sees a GPU, else "cpu"."""
    torch = import_extra("torch", EXTRA, "A teacher")
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_model(kind: str, name_or_path: PathLike, **settings: Any) -> Any:
    """sentence-transformers' `kind` ("SentenceTransformer" or "CrossEncoder") of a name or
    directory. Raises ValueError naming the weights file when torch refuses to unpickle it."""
    st = import_extra("sentence_transformers", EXTRA, "A teacher")
    from safetensors import SafetensorError  # a dependency of transformers

    try:
        return getattr(st, kind)(str(name_or_path), **settings)
    except SafetensorError as err:
        found = sorted(Path(name_or_path).rglob("*.safetensors")) if Path(name_or_path).is_dir() else []
        where = ", ".join(map(str, found)) or name_or_path
        raise ValueError(f"{where}: not a whole safetensors file ({err}): copy the model again.") from None
    except pickle.UnpicklingError:
        found = [p for p in Path(name_or_path).rglob("*.bin")] if Path(name_or_path).is_dir() else []
        where = found[0] if found else name_or_path
        raise ValueError(
            f"{where}: torch refuses to load this pickle (it holds more than weights, and unpickling it could "
            "run code): convert the model to safetensors (model.safetensors) from a copy you trust."
        ) from None


def load_teacher(name_or_path: str) -> Any:
    """A sentence-transformers bi-encoder by name (the Hugging Face hub, or its cache) or directory."""
    return load_model("SentenceTransformer", name_or_path, device="cpu")


def load_scorer(path: PathLike) -> Any:
    """A CrossEncoder from its directory, on the GPU when torch sees one."""
    return load_model("CrossEncoder", path, device=device_name())


def is_cross_encoder(path: PathLike) -> bool:
    """Whether a model directory holds a CrossEncoder (a sequence classifier), not a bi-encoder with vectors."""
    path = Path(path)
    if not path.is_dir():
        return False
    settings = path / "config_sentence_transformers.json"
    if settings.exists():
        return _json_object(settings).get("model_type") == "CrossEncoder"
    config = path / "config.json"
    if (path / "modules.json").exists() or not config.exists():
        return False
    architectures = _json_object(config).get("architectures") or []
    return any(str(name).endswith("ForSequenceClassification") for name in architectures)


def _json_object(path: Path) -> Dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: a JSON {type(value).__name__}, not an object")
    return value


def teacher_label(teacher: str) -> str:
    """A teacher as a report names it: its model name, or its directory by the last two parts."""
    return given_path(teacher, parts=2) if Path(teacher).exists() else teacher


def check_cache_dir(cache_dir: Optional[PathLike]) -> None:
    """Refuse, before any work, a cache directory that is an existing file."""
    if cache_dir is not None and Path(cache_dir).exists() and not Path(cache_dir).is_dir():
        raise ValueError(f"The teacher cache {cache_dir} is a file: give a directory (new or one it wrote before).")


def teacher_vectors(
    teacher: Union[str, Any], texts: Sequence[str], *, cache_dir: Optional[PathLike] = None, progress: bool = False
) -> numpy.ndarray:
    """The teacher's unit-length vectors of `texts`, float32 (N, d), kept in `cache_dir` (`in_chunks`)
    when given. Raises ValueError on non-finite vectors, or a cache entry that does not match its record."""
    model = cache(lambda: load_teacher(teacher) if isinstance(teacher, str) else teacher)  # loaded at its first use

    def encode(chunk: Sequence[str]) -> numpy.ndarray:
        vectors = model().encode(
            list(chunk),
            batch_size=TEACHER_BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        return numpy.asarray(vectors, dtype="float32")

    return in_chunks(texts, encode, teacher, "teacher", cache_dir, f"The vectors of the teacher {_name(teacher)}")


def cross_encoder_scores(model: Any, pairs: Sequence[Sequence[str]], *, progress: bool = False) -> numpy.ndarray:
    """A CrossEncoder's probability of each pair (its sigmoid of the logit), float64 (n,)."""
    if not len(pairs):
        return numpy.zeros((0,), dtype="f8")
    scores = model.predict(
        [(a, b) for a, b in pairs], batch_size=TEACHER_BATCH, show_progress_bar=progress, convert_to_numpy=True
    )
    return numpy.asarray(scores, dtype="f8").reshape(len(pairs))


def teacher_pair_scores(
    teacher: str, pairs: Sequence[Tuple[str, str]], *, cache_dir: Optional[PathLike] = None, progress: bool = False
) -> numpy.ndarray:
    """A teacher's score of each pair, float64 (n,): a CrossEncoder directory's probability, or a
    bi-encoder's cosine of the two texts' vectors; cached in `cache_dir` as `teacher_vectors`."""
    if is_cross_encoder(teacher):
        model = cache(lambda: load_scorer(teacher))

        def score(chunk: Sequence[Tuple[str, str]]) -> numpy.ndarray:
            return cross_encoder_scores(model(), chunk, progress=progress)

        return in_chunks(pairs, score, teacher, "scores", cache_dir, f"The scores of the teacher {_name(teacher)}")
    texts = distinct_pair_texts(pairs)
    vectors = teacher_vectors(teacher, texts, cache_dir=cache_dir, progress=progress).astype("f8")
    a, b = pair_rows(texts, pairs)
    return (vectors[a] * vectors[b]).sum(axis=1)


def cache_key(teacher: Union[str, Any], texts: Sequence[str]) -> str:
    """A key of a teacher and texts: its name, every file of a teacher directory (its weights and
    its settings, pooling and normalisation included: a teacher changed in place is not read from
    the cache) and the texts."""
    digest = hashlib.sha1(_name(teacher).encode("utf8"))
    if isinstance(teacher, str) and Path(teacher).is_dir():
        for file in sorted(p for p in Path(teacher).rglob("*") if p.is_file()):
            digest.update(f"{file.relative_to(teacher)}\0{sha256_file(file)}".encode("utf8"))
    for text in texts:
        digest.update(text.encode("utf8") + b"\0")
    return digest.hexdigest()[:16]


def in_chunks(
    items: Sequence[Any],
    compute: Callable[[Sequence[Any]], numpy.ndarray],
    teacher: Union[str, Any],
    prefix: str,
    cache_dir: Optional[PathLike],
    what: str,
) -> numpy.ndarray:
    """`compute` of `items` (texts, or pairs of texts), in chunks of CHUNK each `cached` in
    `cache_dir` (when given) as `<prefix>-<key>.npy`, keyed by the teacher and the chunk's texts."""
    if cache_dir is None or not len(items):
        return cached(None, len(items), lambda: compute(items), what)
    parts = []
    for start in range(0, len(items), CHUNK):
        chunk = items[start : start + CHUNK]
        texts = [t for item in chunk for t in ((item,) if isinstance(item, str) else item[:2])]
        path = Path(cache_dir) / f"{prefix}-{cache_key(teacher, texts)}.npy"
        parts.append(cached(path, len(chunk), partial(compute, chunk), what))
    return numpy.concatenate(parts)


def cached(path: Optional[Path], rows: int, compute: Callable[[], numpy.ndarray], what: str) -> numpy.ndarray:
    """`compute()` (`rows` rows, all finite), kept at `path` (.npy, beside a .json record of its
    shape, dtype and SHA-256) when given, and read back from there while it matches its record.
    An entry without a whole record is computed again. Raises ValueError naming the file."""
    if path is not None and path.exists() and path.with_suffix(".json").exists():
        record_path = path.with_suffix(".json")
        try:
            record = json.loads(record_path.read_text(encoding="utf8"))
            whole = isinstance(record, dict) and {"shape", "dtype", "sha256"} <= set(record)
            array = numpy.load(path, allow_pickle=False) if whole else None
        except (OSError, ValueError, EOFError) as err:  # EOFError: numpy's word for an empty or cut file
            raise ValueError(
                f"The teacher cache file {path} or its record {record_path.name} cannot be read ({err}): "
                "delete both files to compute them again."
            ) from None
        if array is not None:
            found = {"shape": list(array.shape), "dtype": str(array.dtype), "sha256": sha256_file(path)}
            if any(record[key] != value for key, value in found.items()) or len(array) != rows:
                raise ValueError(
                    f"The teacher cache file {path} ({array.dtype} {array.shape}) does not match its record "
                    f"{record_path.name} or the {rows:,} rows asked for: delete both files to compute them again."
                )
            return check_finite(array, f"The teacher cache file {path}")
    array = check_finite(compute(), what)
    if len(array) != rows:
        raise ValueError(f"{what}: {len(array)} rows for {rows} inputs.")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path) as file:
            numpy.save(file, array)
        record = {"shape": list(array.shape), "dtype": str(array.dtype), "sha256": sha256_file(path)}
        with atomic_write(path.with_suffix(".json")) as file:  # last: an entry without its record is computed again
            file.write((json.dumps(record) + "\n").encode("utf8"))
    return array


def check_finite(array: numpy.ndarray, what: str) -> numpy.ndarray:
    """`array`, or a ValueError naming `what` when a value is NaN or infinite."""
    bad = ~numpy.isfinite(array).reshape(len(array), -1).all(axis=1) if array.size else numpy.zeros(0, bool)
    if bad.any():
        raise ValueError(f"{what}: NaN or infinite values in {int(bad.sum()):,} of {len(array):,} rows.")
    return array


def _name(teacher: Union[str, Any]) -> str:
    return str(teacher) if isinstance(teacher, (str, Path)) else type(teacher).__name__
