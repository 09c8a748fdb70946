import subprocess
import sys

import numpy
import pytest
from spacy.util import registry

from spacy_siamese.losses import CoSENTLoss, InBatchNegativesLoss
from spacy_siamese.teacher.loss import TeacherScoresLoss, load_teacher_table, save_teacher_table, soft_ranking_loss

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
TEXTS = ["How do I learn Python?", "Best way to learn  python", "What is a cat?", "Cats: what are they?", "Rain"]


def unit(n: int, d: int = 6) -> numpy.ndarray:
    vectors = rng.normal(size=(n, d))
    return vectors / numpy.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def table(tmp_path):
    return save_teacher_table(tmp_path / "teacher", TEXTS, unit(len(TEXTS)))


def test_soft_ranking_loss_gradient_and_minimum():
    Z, targets = rng.normal(size=(4, 4)), rng.normal(size=(4, 4))
    d, _ = soft_ranking_loss(Z, targets)
    assert_grad_close(d, numeric_grad(lambda: soft_ranking_loss(Z, targets)[1], Z, 1e-6), rtol=1e-4, atol=1e-8)
    # zero at the teacher's own logits (and any shift of them, per row and column alike)
    d, loss = soft_ranking_loss(targets + 3.0, targets)
    assert loss == pytest.approx(0.0, abs=1e-12) and numpy.abs(d).max() < 1e-12


def test_loss_gradient_pair_columns_and_teacher_matrix(table):
    loss_fn = TeacherScoresLoss(table, CoSENTLoss(scale=5.0), scale=4.0, temperature=0.5, weight=0.7)
    a, b = [TEXTS[i] for i in (0, 2, 4)], [TEXTS[i] for i in (1, 3, 0)]
    batch = loss_fn.for_texts(a, b)
    truths = numpy.array([0.9, 0.6, 0.1])
    scores = rng.uniform(0.05, 0.95, size=(3, 2 + 3))
    d, loss = batch(scores, truths)
    assert_grad_close(d, numeric_grad(lambda: batch(scores, truths)[1], scores, 1e-7), rtol=1e-4, atol=1e-7)
    pair_d, pair_loss = CoSENTLoss(scale=5.0)(scores[:, :2], truths)
    _, vectors = load_teacher_table(table)
    T = vectors[[0, 2, 4]] @ vectors[[1, 3, 0]].T
    dZ, distill = soft_ranking_loss(4.0 * scores[:, 2:], T / 0.5)
    assert loss == pytest.approx(pair_loss + 0.7 * distill, rel=1e-6)
    numpy.testing.assert_allclose(d[:, :2], pair_d)
    numpy.testing.assert_allclose(d[:, 2:], 0.7 * 4.0 * dZ, rtol=1e-5)


def test_an_in_batch_pair_loss_trains_the_matrix_beside_the_teacher(table):
    # InBatchNegatives.v1 as the pair loss: hard in-batch negatives from the labels and the
    # teacher's soft ones train the same matrix; the batch's texts reach it (known duplicates)
    loss_fn = TeacherScoresLoss(table, InBatchNegativesLoss(scale=5.0), scale=4.0, temperature=0.5, weight=0.7)
    a, b = [TEXTS[i] for i in (0, 2, 1)], [TEXTS[i] for i in (1, 3, 0)]
    batch = loss_fn.for_texts(a, b)
    truths = numpy.array([1.0, 1.0, 1.0])  # A_2 == B_0 and B_2 == A_0: known duplicates of rows 0 and 2
    scores = rng.uniform(0.05, 0.95, size=(3, 1 + 3))
    d, loss = batch(scores, truths)
    assert_grad_close(d, numeric_grad(lambda: batch(scores, truths)[1], scores, 1e-7), rtol=1e-4, atol=1e-7)
    hard_d, hard_loss = InBatchNegativesLoss(scale=5.0).for_texts(a, b)(scores, truths)
    _, vectors = load_teacher_table(table)
    T = vectors[[0, 2, 1]] @ vectors[[1, 3, 0]].T
    dZ, distill = soft_ranking_loss(4.0 * scores[:, 1:], T / 0.5)
    assert loss == pytest.approx(hard_loss + 0.7 * distill, rel=1e-6)
    numpy.testing.assert_allclose(d[:, :1], hard_d[:, :1])
    numpy.testing.assert_allclose(d[:, 1:], hard_d[:, 1:] + 0.7 * 4.0 * dZ, rtol=1e-5)
    assert not numpy.allclose(hard_d, InBatchNegativesLoss(scale=5.0)(scores, truths)[0])  # the texts mattered


def test_texts_are_matched_by_their_words(table):
    loss_fn = TeacherScoresLoss(table)
    numpy.testing.assert_array_equal(loss_fn.teacher(["Best way to learn python "]), loss_fn.teacher([TEXTS[1]]))
    message = "has no vector for the text 'Unseen text'.*--vectors-output.*--paths.init_weights"
    with pytest.raises(ValueError, match=message):
        loss_fn.for_texts(["Unseen text"], [TEXTS[0]])


def test_the_loss_needs_texts_and_in_batch_columns(table):
    loss_fn = TeacherScoresLoss(table)
    with pytest.raises(ValueError, match="needs the texts of the batch"):
        loss_fn(numpy.zeros((2, 3)), numpy.zeros(2))
    with pytest.raises(ValueError, match="WithInBatchScores.v1"):
        loss_fn.for_texts(TEXTS[:2], TEXTS[2:4])(numpy.zeros((2, 2)), numpy.zeros(2))


def test_a_missing_or_broken_table_is_named_at_the_first_batch(tmp_path, table):
    missing = TeacherScoresLoss(tmp_path / "nowhere")  # a trained pipeline loads without its table
    with pytest.raises(ValueError, match="is not a teacher table .*vectors.npy or texts.json"):
        missing.for_texts(TEXTS[:1], TEXTS[1:2])
    (table / "texts.json").write_text('["only one"]')
    with pytest.raises(ValueError, match="does not list one text for each of the 5 vectors"):
        TeacherScoresLoss(table).for_texts(TEXTS[:1], TEXTS[1:2])
    with pytest.raises(ValueError, match="temperature > 0"):
        TeacherScoresLoss(table, temperature=0.0)


def test_a_table_with_non_finite_vectors_is_refused_naming_its_file(table):
    vectors = numpy.load(table / "vectors.npy")
    vectors[2, 0] = numpy.nan
    numpy.save(table / "vectors.npy", vectors)
    with pytest.raises(ValueError, match=r"teacher/vectors\.npy: NaN or infinite values in 1 of 5 rows"):
        TeacherScoresLoss(table).for_texts(TEXTS[:1], TEXTS[1:2])


def test_students_load_without_torch():
    """The teacher's modules, the CLI and the registered loss import in a process where torch
    and sentence-transformers cannot be imported."""
    code = (
        "import sys\n"
        "class Blocked:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('torch', 'sentence_transformers', 'transformers'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Blocked())\n"
        "import spacy_siamese, spacy_siamese.cli, spacy_siamese.teacher.train, spacy_siamese.teacher.pairs\n"
        "from thinc.api import registry\n"
        "assert 'torch' not in sys.modules\n"
        "print(registry.losses.get('spacy-siamese.TeacherScores.v1').__name__)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "TeacherScoresLoss", done.stderr


def test_registered_with_a_nested_pair_loss(table):
    make = registry.losses.get("spacy-siamese.TeacherScores.v1")
    loss_fn = make(vectors=str(table), pair_loss=CoSENTLoss(scale=10.0), weight=0.5)
    assert isinstance(loss_fn, TeacherScoresLoss) and loss_fn.weight == 0.5 and loss_fn.pair_loss.scale == 10.0


def test_bad_labels_are_named(table):
    batch = TeacherScoresLoss(table).for_texts(TEXTS[:2], TEXTS[2:4])
    with pytest.raises(ValueError, match="TeacherScores: a pair label must be a finite number in \\[0, 1\\], got nan"):
        batch(rng.uniform(size=(2, 3)), numpy.array([numpy.nan, 0.5]))
