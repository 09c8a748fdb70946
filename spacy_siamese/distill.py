"""Distillation from a sentence-transformers teacher (extra `spacy-siamese[distill]`): pairs of a
collection labelled with the teacher's cosine (vectors cached on disk) or a cross-encoder teacher's
probability (`spacy_siamese.teacher`), written as an ordinary pair file; the student needs no torch.

Each sampled anchor text is paired with its nearest neighbour (by the teacher's vectors, or TF-IDF
for a cross-encoder), a neighbour of a random rank among the nearest `neighbours`, and a random text.
"""

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy

from .files import sha256_file
from .teacher import cross_encoder_scores, is_cross_encoder, load_scorer
from .util import atomic_write, distinct_pair_texts, given_path, import_extra, pair_rows

NEIGHBOURS = 20
BLOCK = 2048


def load_teacher(name_or_path: str) -> Any:
    """A sentence-transformers model by name (the Hugging Face hub, or its cache) or directory."""
    sentence_transformers = import_extra("sentence_transformers", "distill", "Distillation from a teacher")
    return sentence_transformers.SentenceTransformer(str(name_or_path), device="cpu")


def teacher_label(teacher: str) -> str:
    """A teacher as a report names it: its model name, or its directory by the last two parts."""
    return given_path(teacher, parts=2) if Path(teacher).exists() else teacher


def teacher_vectors(
    teacher: Union[str, Any],
    texts: Sequence[str],
    *,
    cache_dir: Optional[Union[str, Path]] = None,
    batch_size: int = 64,
    progress: bool = False,
) -> numpy.ndarray:
    """The teacher's unit-length vectors of `texts`, float32 (N, d). With `cache_dir`, they are
    stored there under a key of the teacher's name and the texts, and read back on a rerun."""
    name = teacher if isinstance(teacher, str) else type(teacher).__name__
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"teacher-{cache_key(teacher, texts)}.npy"
        if path.exists():
            vectors = numpy.load(path)
            if vectors.shape[0] == len(texts):
                return vectors
    model = load_teacher(teacher) if isinstance(teacher, str) else teacher
    vectors = model.encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=progress
    ).astype("float32")
    if path is not None:
        _save_array(path, vectors)
        path.with_suffix(".json").write_text(json.dumps({"teacher": name, "n_texts": len(texts)}) + "\n")
    return vectors


def _save_array(path: Path, array: numpy.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as file:
        numpy.save(file, array)


def cache_key(teacher: Union[str, Any], texts: Sequence[str]) -> str:
    """A key of a teacher and texts: its name, the weights of a teacher directory (so a teacher
    trained again in the same place is not read from the cache) and the texts."""
    name = teacher if isinstance(teacher, str) else type(teacher).__name__
    digest = hashlib.sha1(name.encode("utf8"))
    if isinstance(teacher, str) and Path(teacher).is_dir():
        for weights in sorted(Path(teacher).glob("*.safetensors")) + sorted(Path(teacher).glob("*.bin")):
            digest.update(sha256_file(weights).encode("ascii"))
    for text in texts:
        digest.update(text.encode("utf8") + b"\0")
    return digest.hexdigest()[:16]


def nearest_neighbours(vectors: Any, queries: numpy.ndarray, k: int) -> numpy.ndarray:
    """The k nearest other rows of `vectors` (dense, or a scipy sparse matrix) for each query
    row index, by inner product, nearest first: int (len(queries), k)."""
    k = min(k, vectors.shape[0] - 1)
    out = numpy.zeros((len(queries), max(k, 0)), dtype="int64")
    if k <= 0:
        return out
    for start in range(0, len(queries), BLOCK):
        block = queries[start : start + BLOCK]
        scores = vectors[block] @ vectors.T
        scores = numpy.asarray(scores.toarray() if hasattr(scores, "toarray") else scores, dtype="f4")
        rows = numpy.arange(len(block))
        scores[rows, block] = -numpy.inf  # not itself
        top = numpy.argpartition(-scores, k - 1, axis=1)[:, :k]
        order = numpy.argsort(-scores[rows[:, None], top], axis=1, kind="stable")
        out[start : start + len(block)] = top[rows[:, None], order]
    return out


def teacher_pairs(
    texts: Sequence[str], vectors: numpy.ndarray, *, n_pairs: int, neighbours: int = NEIGHBOURS, seed: int = 0
) -> List[Dict[str, Any]]:
    """About `n_pairs` pairs of distinct texts, labelled with the teacher's cosine clipped to
    [0, 1]: for each of n_pairs / 3 seeded anchors, its nearest neighbour, a neighbour of a
    random rank among the nearest `neighbours`, and a random text."""
    if len(texts) != len(vectors):
        raise ValueError(f"teacher_pairs: {len(texts)} texts but {len(vectors)} vectors")
    return [
        {"text1": texts[a], "text2": texts[b], "label": round(float(max(0.0, vectors[a] @ vectors[b])), 6)}
        for a, b in sample_pairs(vectors, n_pairs=n_pairs, neighbours=neighbours, seed=seed)
    ]


def sample_pairs(vectors: Any, *, n_pairs: int, neighbours: int = NEIGHBOURS, seed: int = 0) -> List[Tuple[int, int]]:
    """About `n_pairs` (row, row) pairs of distinct rows of `vectors` (dense or sparse): for each
    of n_pairs / 3 seeded anchors, its nearest row, a row of a random rank among the nearest
    `neighbours`, and a random row."""
    n_texts = vectors.shape[0]
    if n_texts < 2:
        raise ValueError("teacher_pairs: needs at least two texts")
    rng = numpy.random.default_rng(seed)
    n_anchors = min(n_texts, max(1, -(-n_pairs // 3)))
    anchors = numpy.sort(rng.choice(n_texts, size=n_anchors, replace=False))
    near = nearest_neighbours(vectors, anchors, neighbours)
    ranks = rng.integers(1, near.shape[1], size=n_anchors) if near.shape[1] > 1 else numpy.zeros(n_anchors, "int64")
    randoms = rng.integers(0, n_texts - 1, size=n_anchors)
    randoms = randoms + (randoms >= anchors)  # any text but the anchor
    rows = []
    for t, anchor in enumerate(anchors):
        for other in (near[t, 0], near[t, ranks[t]], randoms[t]):
            rows.append((int(anchor), int(other)))
    return rows[:n_pairs]


def tfidf_rows(texts: Sequence[str]) -> Any:
    """Unit-length TF-IDF rows of the texts (word unigrams and bigrams, sublinear counts): the
    neighbours of a teacher that has no vectors."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    return TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=1).fit_transform(texts)


def cross_encoder_pairs(
    teacher: str,
    texts: Sequence[str],
    *,
    n_pairs: int,
    neighbours: int = NEIGHBOURS,
    seed: int = 0,
    cache_dir: Optional[Union[str, Path]] = None,
    progress: bool = False,
) -> List[Dict[str, Any]]:
    """Silver pairs: pairs of `texts` sampled as in `teacher_pairs` with TF-IDF neighbours,
    labelled with the cross-encoder `teacher`'s probability (a directory; see
    `spacy_siamese.teacher`). With `cache_dir`, its scores are kept there and read back."""
    rows = sample_pairs(tfidf_rows(texts), n_pairs=n_pairs, neighbours=neighbours, seed=seed)
    pairs = [(texts[a], texts[b]) for a, b in rows]
    path = None
    if cache_dir is not None:
        path = Path(cache_dir) / f"scores-{cache_key(teacher, [t for pair in pairs for t in pair])}.npy"
    if path is not None and path.exists():
        scores = numpy.load(path)
    else:
        scores = cross_encoder_scores(load_scorer(teacher), pairs, progress=progress)
        if path is not None:
            _save_array(path, scores)
    return [{"text1": a, "text2": b, "label": round(float(s), 6)} for (a, b), s in zip(pairs, scores)]


def teacher_pair_scores(
    teacher: str,
    pairs: Sequence[Tuple[str, str]],
    *,
    cache_dir: Optional[Union[str, Path]] = None,
    progress: bool = False,
) -> numpy.ndarray:
    """A teacher's score of each pair, float64 (n,): a CrossEncoder directory's probability, or
    a bi-encoder's cosine of the two texts' vectors (cached in `cache_dir` as `teacher_vectors`)."""
    if Path(teacher).is_dir() and is_cross_encoder(teacher):
        return cross_encoder_scores(load_scorer(teacher), pairs, progress=progress)
    texts = distinct_pair_texts(pairs)
    vectors = teacher_vectors(teacher, texts, cache_dir=cache_dir, progress=progress).astype("f8")
    a, b = pair_rows(texts, pairs)
    return (vectors[a] * vectors[b]).sum(axis=1)
