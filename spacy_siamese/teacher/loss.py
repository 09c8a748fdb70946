"""The teacher's loss, TeacherScores.v1: a teacher's in-batch similarities distilled beside a pair
loss, and the table of the teacher's vectors it reads."""

from functools import partial
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy
import srsly
from thinc.api import get_array_module, registry
from thinc.types import Floats1d, Floats2d

from ..losses._util import Loss, check_truths, in_batch_columns
from ..losses.cosent import CoSENTLoss
from .models import check_finite

TABLE_VECTORS = "vectors.npy"
TABLE_TEXTS = "texts.json"


@registry.losses("spacy-siamese.TeacherScores.v1")
class TeacherScoresLoss:
    """Distil a teacher's similarities of every side A against every side B of a batch, plus a
    pair loss. `vectors`: a teacher table, the directory `teacher-pairs --vectors-output` wrote
    for the pair files trained on.

    Scores (n, k + n), the comparison wrapped in `spacy-siamese.WithInBatchScores.v1`: k pair
    columns, then M[i, j] = score(A_i, B_j). T[i, j] = t(A_i) . t(B_j) is the cosine of the
    teacher's unit vectors. Each row of M is trained towards the teacher's distribution over the
    batch's B sides, and each column over its A sides:

        P = softmax(scale * M[i, :]),  Q = softmax(T[i, :] / temperature)
        distill = 1/(2n) sum over the n rows and n columns of KL(Q || P)
        loss = pair_loss(pair columns, labels) + weight * distill

    `pair_loss` defaults to CoSENTLoss.v1; one that takes in-batch scores itself
    (InBatchNegatives.v1, for 0/1 labels) gets all the columns and the batch's texts, and its
    gradient on the matrix adds to the teacher's. The pipe hands the batch's texts over
    (`for_texts`); a text the table does not have is an error naming it. The table is read at
    the first batch, so a trained pipeline loads without it.
    """

    uses_in_batch_scores = True  # takes WithInBatchScores.v1's in-batch columns (DatasetLosses.v1)

    def __init__(
        self,
        vectors: Union[str, Path],
        pair_loss: Optional[Callable] = None,
        *,
        scale: float = 20.0,
        temperature: float = 0.05,
        weight: float = 1.0,
    ) -> None:
        if scale <= 0 or temperature <= 0 or weight < 0:
            raise ValueError(
                f"TeacherScores: need scale > 0, temperature > 0 and weight >= 0, got {scale}, {temperature}, {weight}"
            )
        self.path = Path(vectors)
        self._table: Optional[Tuple[Dict[str, int], numpy.ndarray]] = None  # read at the first batch
        self.pair_loss: Loss = pair_loss if pair_loss is not None else CoSENTLoss()
        self.scale = scale
        self.temperature = temperature
        self.weight = weight

    def __call__(self, scores: Floats2d, truths: Floats1d) -> Tuple[Floats2d, float]:
        raise ValueError(
            "TeacherScores needs the texts of the batch: it is called by the siamese_similarity pipe "
            "through for_texts(texts_a, texts_b)."
        )

    def for_texts(self, texts_a: Sequence[str], texts_b: Sequence[str]) -> Loss:
        """The loss of a batch whose pairs have these texts."""
        T = self.teacher(texts_a) @ self.teacher(texts_b).T
        pair_loss = self.pair_loss
        if hasattr(pair_loss, "for_texts"):
            pair_loss = pair_loss.for_texts(texts_a, texts_b)
        return partial(self.batch_loss, T=T, pair_loss=pair_loss)

    def teacher(self, texts: Sequence[str]) -> numpy.ndarray:
        """The teacher's unit vectors of `texts` (n, d)."""
        if self._table is None:
            self._table = load_teacher_table(self.path)
        keys, vectors = self._table
        rows = []
        for text in texts:
            row = keys.get(text_key(text))
            if row is None:
                raise ValueError(
                    f"TeacherScores: the teacher table {self.path} has no vector for the text {text[:80]!r}: "
                    "write the table from the pair files this loss trains on (teacher-pairs "
                    "--vectors-output). A pipe sourced from a distilled pipeline keeps this "
                    "loss; to train it on other pairs, start from its weights instead "
                    "(--paths.init_weights) and set the loss."
                )
            rows.append(row)
        return vectors[rows]

    def batch_loss(
        self, scores: Floats2d, truths: Floats1d, T: numpy.ndarray, pair_loss: Loss
    ) -> Tuple[Floats2d, float]:
        """The loss of one batch: `pair_loss` is `self.pair_loss`, given the batch's texts if it takes them."""
        xp = get_array_module(scores)
        n = len(truths)
        check_truths(truths, len(scores), "TeacherScores")
        pair_scores, M = in_batch_columns(scores, n, "TeacherScores")
        Z = self.scale * xp.asarray(M, dtype="float64")
        dZ, distill = soft_ranking_loss(Z, xp.asarray(T, dtype="float64") / self.temperature)
        d_matrix = self.weight * self.scale * dZ
        if getattr(self.pair_loss, "uses_in_batch_scores", False):
            # InBatchNegatives.v1 (hard labels) trains the same in-batch matrix: the two add up
            d_all, loss = pair_loss(scores, truths)
            d = xp.asarray(d_all, dtype="float64")
            d[:, -n:] += d_matrix
        else:
            d_pair, loss = pair_loss(pair_scores, truths)
            d = xp.hstack([xp.asarray(d_pair, dtype="float64"), d_matrix])
        return d.astype(scores.dtype), float(loss) + self.weight * distill


def soft_ranking_loss(Z: Floats2d, targets: Floats2d) -> Tuple[Floats2d, float]:
    """(dZ, loss): KL(softmax(targets) || softmax(Z)) over the rows and over the columns, averaged over 2n."""
    xp = get_array_module(Z)
    n = len(Z)
    total = 0.0
    dZ = xp.zeros_like(Z)
    for axis in (1, 0):
        log_p = Z - xp.logaddexp.reduce(Z, axis=axis, keepdims=True)
        log_q = targets - xp.logaddexp.reduce(targets, axis=axis, keepdims=True)
        q = xp.exp(log_q)
        total += float((q * (log_q - log_p)).sum())
        dZ += xp.exp(log_p) - q
    return dZ / (2 * n), total / (2 * n)


make_teacher_scores = TeacherScoresLoss  # the builder of the registered name


def text_key(text: str) -> str:
    """The key of a text in a teacher table: its words joined by single spaces (a pair file's
    text and the text of the doc read from it agree on it)."""
    return " ".join(text.split())


def table_files(directory: Union[str, Path]) -> List[Path]:
    """The files `save_teacher_table` writes in `directory`."""
    return [Path(directory) / TABLE_VECTORS, Path(directory) / TABLE_TEXTS]


def save_teacher_table(directory: Union[str, Path], texts: Sequence[str], vectors: numpy.ndarray) -> Path:
    """Write the teacher's unit vectors of `texts` (float16) and the texts to `directory`, for `TeacherScores.v1`."""
    if len(texts) != len(vectors):
        raise ValueError(f"save_teacher_table: {len(texts)} texts but {len(vectors)} vectors")
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    numpy.save(path / TABLE_VECTORS, numpy.asarray(vectors, dtype="float16"))
    srsly.write_json(path / TABLE_TEXTS, list(texts))
    return path


def load_teacher_table(directory: Union[str, Path]) -> Tuple[Dict[str, int], numpy.ndarray]:
    """({text key: row}, float32 unit vectors) of a table written by `save_teacher_table`."""
    path = Path(directory)
    missing = [name for name in (TABLE_VECTORS, TABLE_TEXTS) if not (path / name).exists()]
    if missing:
        raise ValueError(
            f"{path} is not a teacher table (no {' or '.join(missing)}): write one with "
            "`python -m spacy_siamese teacher-pairs ... --vectors-output DIR`."
        )
    texts = srsly.read_json(path / TABLE_TEXTS)
    vectors = check_finite(numpy.load(path / TABLE_VECTORS).astype("float32"), f"{path / TABLE_VECTORS}")
    if not isinstance(texts, list) or len(texts) != len(vectors):
        raise ValueError(f"{path}: {TABLE_TEXTS} does not list one text for each of the {len(vectors)} vectors")
    return {text_key(text): row for row, text in enumerate(texts)}, vectors
