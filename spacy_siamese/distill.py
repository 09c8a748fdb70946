"""Distillation from a sentence-transformers teacher (extra `spacy-siamese[distill]`).

The teacher's vectors of a collection are computed once and cached on disk; pairs of its texts
are then labelled with the teacher's cosine and written as an ordinary pair file, which trains
any encoder of the package with the pair losses (CoSENT or squared error), alone or as one
dataset of a multi-dataset config. The student never needs torch: only this step does.

Pairs: for each sampled anchor text, its nearest neighbour under the teacher, a neighbour of a
random rank among the nearest `neighbours`, and a random text, so that the labels cover close,
related and unrelated pairs (random pairs alone are almost all unrelated).

Vectors: `losses.teacher_scores.save_teacher_table` writes the teacher's vectors of the paired
texts beside the pair file, and `spacy-siamese.TeacherScores.v1` trains the student's in-batch
score matrix towards the teacher's cosines of the same texts (n^2 targets a batch instead of n).
"""

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy

from .util import atomic_write, given_path, import_extra

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
        digest = hashlib.sha1(name.encode("utf8"))
        for text in texts:
            digest.update(text.encode("utf8") + b"\0")
        path = Path(cache_dir) / f"teacher-{digest.hexdigest()[:16]}.npy"
        if path.exists():
            vectors = numpy.load(path)
            if vectors.shape[0] == len(texts):
                return vectors
    model = load_teacher(teacher) if isinstance(teacher, str) else teacher
    vectors = model.encode(
        list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=progress
    ).astype("float32")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(path) as file:
            numpy.save(file, vectors)
        path.with_suffix(".json").write_text(json.dumps({"teacher": name, "n_texts": len(texts)}) + "\n")
    return vectors


def nearest_neighbours(vectors: numpy.ndarray, queries: numpy.ndarray, k: int) -> numpy.ndarray:
    """The k nearest other rows of `vectors` for each query row index, by inner product,
    nearest first: int (len(queries), k)."""
    k = min(k, len(vectors) - 1)
    out = numpy.zeros((len(queries), max(k, 0)), dtype="int64")
    if k <= 0:
        return out
    for start in range(0, len(queries), BLOCK):
        block = queries[start : start + BLOCK]
        scores = vectors[block] @ vectors.T
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
    if len(texts) < 2:
        raise ValueError("teacher_pairs: needs at least two texts")
    rng = numpy.random.default_rng(seed)
    n_anchors = min(len(texts), max(1, -(-n_pairs // 3)))
    anchors = numpy.sort(rng.choice(len(texts), size=n_anchors, replace=False))
    near = nearest_neighbours(vectors, anchors, neighbours)
    ranks = rng.integers(1, near.shape[1], size=n_anchors) if near.shape[1] > 1 else numpy.zeros(n_anchors, "int64")
    randoms = rng.integers(0, len(texts) - 1, size=n_anchors)
    randoms = randoms + (randoms >= anchors)  # any text but the anchor
    rows = []
    for t, anchor in enumerate(anchors):
        for other in (near[t, 0], near[t, ranks[t]], randoms[t]):
            rows.append((int(anchor), int(other)))
    return [
        {"text1": texts[a], "text2": texts[b], "label": round(float(max(0.0, vectors[a] @ vectors[b])), 6)}
        for a, b in rows[:n_pairs]
    ]
