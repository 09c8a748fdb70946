import numpy
import pytest
from spacy.util import registry

from spacy_siamese.losses import InBatchNegativesLoss, PairLogLoss, in_batch_columns, ranking_loss
from spacy_siamese.losses._util import known_duplicates

from ..gradcheck import assert_grad_close, numeric_grad

rng = numpy.random.default_rng(0)
TRUTHS = numpy.array([1, 0, 1, 1, 0], dtype="f8")


def batch_output(k: int = 1) -> numpy.ndarray:
    return rng.uniform(0.05, 0.95, size=(len(TRUTHS), k + len(TRUTHS)))


@pytest.mark.parametrize("logits", ["scaled", "logit"])
@pytest.mark.parametrize("k", [1, 2])
def test_loss_gradients(logits, k):
    loss_fn = InBatchNegativesLoss(PairLogLoss(), scale=3.0, logits=logits, weight=0.7)
    scores = batch_output(k)
    d, _ = loss_fn(scores, TRUTHS)
    numeric = numeric_grad(lambda: loss_fn(scores, TRUTHS)[1], scores, 1e-7)
    assert_grad_close(d, numeric, rtol=1e-4, atol=1e-7)


def test_loss_is_the_pair_loss_plus_the_weighted_ranking_loss():
    scores = batch_output(2)
    pair_d, pair_loss = PairLogLoss()(scores[:, :2], TRUTHS)
    rank_d, rank_loss = ranking_loss(4.0 * scores[:, 2:], TRUTHS >= 0.5)
    d, loss = InBatchNegativesLoss(scale=4.0, weight=0.5)(scores, TRUTHS)
    assert loss == pytest.approx(pair_loss + 0.5 * rank_loss)
    numpy.testing.assert_allclose(d[:, :2], pair_d)
    numpy.testing.assert_allclose(d[:, 2:], 0.5 * 4.0 * rank_d)


def test_logit_mode_ranks_on_the_log_odds():
    scores = batch_output(1)
    M = scores[:, 1:]
    _, rank_loss = ranking_loss(2.0 * numpy.log(M / (1 - M)), TRUTHS >= 0.5)
    _, pair_loss = PairLogLoss()(scores[:, :1], TRUTHS)
    _, loss = InBatchNegativesLoss(scale=2.0, logits="logit")(scores, TRUTHS)
    assert loss == pytest.approx(pair_loss + rank_loss)


def test_ranking_loss_value_and_symmetry():
    Z = rng.normal(size=(4, 4))
    positive = numpy.array([True, False, True, False])
    _, loss = ranking_loss(Z, positive)
    rows = [Z[i, i] - numpy.log(numpy.exp(Z[i]).sum()) for i in (0, 2)]
    cols = [Z[i, i] - numpy.log(numpy.exp(Z[:, i]).sum()) for i in (0, 2)]
    assert loss == pytest.approx(-(sum(rows) + sum(cols)) / 4)
    assert ranking_loss(Z.T, positive)[1] == pytest.approx(loss)  # swapping the sides
    d, _ = ranking_loss(Z, positive)
    d_t, _ = ranking_loss(Z.T, positive)
    numpy.testing.assert_allclose(d, d_t.T)


def test_only_duplicate_pairs_are_queries():
    Z = rng.normal(size=(3, 3))
    d, loss = ranking_loss(Z, numpy.zeros(3, dtype=bool))
    assert loss == 0.0 and not d.any()
    d, _ = ranking_loss(Z, numpy.array([True, False, False]))
    # non-duplicates are candidates in the duplicate's row and column, nothing else
    assert d[0].any() and d[:, 0].any()
    assert not d[1:, 1:].any()


def test_a_well_separated_batch_has_a_small_loss():
    M = numpy.full((4, 4), 0.1)
    numpy.fill_diagonal(M, 0.95)
    scores = numpy.hstack([numpy.diag(M)[:, None], M])
    _, good = InBatchNegativesLoss(scale=20.0, weight=1.0)(scores, numpy.ones(4))
    _, bad = InBatchNegativesLoss(scale=20.0, weight=1.0)(numpy.hstack([scores[:, :1], M.T[::-1]]), numpy.ones(4))
    assert good < bad


def test_in_batch_columns_split_the_pair_columns_from_the_matrix():
    scores = batch_output(2)
    pair_scores, M = in_batch_columns(scores, len(TRUTHS), "X")
    numpy.testing.assert_array_equal(pair_scores, scores[:, :2])
    numpy.testing.assert_array_equal(M, scores[:, 2:])
    assert pair_scores.flags["C_CONTIGUOUS"]


def test_loss_needs_the_batch_matrix():
    with pytest.raises(ValueError, match="WithInBatchScores"):
        InBatchNegativesLoss()(rng.uniform(size=(4, 1)), numpy.ones(4))
    with pytest.raises(ValueError, match="logits"):
        InBatchNegativesLoss(logits="cosine")
    for eps in (0.0, 0.7):  # 0: an infinite logit at a score of 0 or 1; 0.7: every logit silently the same
        with pytest.raises(ValueError, match=f"InBatchNegatives: eps must be in \\(0, 0.5\\), got {eps}"):
            InBatchNegativesLoss(logits="logit", eps=eps)


def test_registered_with_a_nested_pair_loss():
    loss = registry.resolve(
        {
            "loss": {
                "@losses": "spacy-siamese.InBatchNegatives.v1",
                "scale": 10.0,
                "pair_loss": {"@losses": "spacy-siamese.LogLoss.v2", "label_smoothing": 0.1},
            }
        }
    )["loss"]
    assert isinstance(loss, InBatchNegativesLoss) and loss.pair_loss.label_smoothing == 0.1
    assert loss.scale == 10.0


def test_a_known_duplicate_in_the_batch_is_not_a_negative():
    """Pairs (q1, d) and (q2, d): d is the positive of q1 twice over, and q2 is a labelled duplicate
    of d. Without the texts, the loss pushes s(q2, d) down in d's column as if q2 were a negative."""
    texts_a, texts_b = ["q1", "q2", "r"], ["d", "d", "s"]
    truths = numpy.ones(3)
    M = numpy.array([[0.9, 0.9, 0.1], [0.9, 0.9, 0.1], [0.1, 0.1, 0.9]])  # a perfect scorer
    scores = numpy.hstack([numpy.diag(M)[:, None], M])
    loss_fn = InBatchNegativesLoss(scale=20.0)
    d_blind, loss_blind = loss_fn(scores, truths)
    assert d_blind[1, 1 + 0] > 0  # s(q2, d) would be lowered
    d, loss = loss_fn.for_texts(texts_a, texts_b)(scores, truths)
    assert d[1, 1 + 0] == 0.0 and d[0, 1 + 1] == 0.0  # neither known duplicate is a negative
    _, pair_loss = PairLogLoss()(scores[:, :1], truths)
    assert loss - pair_loss < 0.01 and loss_blind - pair_loss > 0.4  # log 2 in 4 of the 6 softmaxes
    numpy.testing.assert_allclose(d[:, 0], d_blind[:, 0])  # the pair loss is unchanged


def test_known_duplicates_are_joined_through_the_batch_pairs_and_identical_texts():
    positive = numpy.array([True, True, False, True])
    known = known_duplicates(["a", "b", "a", "x"], ["c", "c", "e", "a"], positive)
    # a~c, b~c, x~a: one cluster {a, b, c, x}; e (a negative partner of a) is in no cluster
    expected = numpy.array(
        [
            [False, True, False, True],
            [True, False, False, True],
            [True, True, False, True],  # pair 2 is no duplicate, but A_2 = "a" is a duplicate of c and of a
            [True, True, False, False],
        ]
    )
    numpy.testing.assert_array_equal(known, expected)
    with pytest.raises(ValueError, match="Got 1 and 2 texts for a batch of 2 pairs"):
        known_duplicates(["a"], ["b", "c"], numpy.ones(2, dtype=bool))


@pytest.mark.parametrize("logits", ["scaled", "logit"])
def test_gradient_with_known_duplicates(logits):
    loss_fn = InBatchNegativesLoss(PairLogLoss(), scale=3.0, logits=logits, weight=0.7)
    scores = batch_output(2)
    batch = loss_fn.for_texts(["a", "b", "a", "c", "e"], ["x", "x", "y", "z", "a"])
    d, _ = batch(scores, TRUTHS)
    assert_grad_close(d, numeric_grad(lambda: batch(scores, TRUTHS)[1], scores, 1e-7), rtol=1e-4, atol=1e-7)


def test_without_shared_texts_the_texts_change_nothing():
    scores = batch_output(1)
    loss_fn = InBatchNegativesLoss(scale=5.0)
    d, loss = loss_fn.for_texts(list("abcde"), list("fghij"))(scores, TRUTHS)
    d_blind, loss_blind = loss_fn(scores, TRUTHS)
    assert loss == loss_blind
    numpy.testing.assert_array_equal(d, d_blind)


@pytest.mark.parametrize(
    "truths,message",
    [
        ([1.0, numpy.nan, 0.0, 1.0, 0.0], "a pair label must be a finite number in \\[0, 1\\], got nan \\(label 1\\)"),
        ([1.0, 0.0, 0.0, 2.0, 0.0], "got 2.0 \\(label 3\\)"),
        ([1.0, 0.0], "need one label for each of the 5 pairs of the batch, got labels of shape \\(2,\\)"),
    ],
)
def test_bad_labels_are_named(truths, message):
    """A nan label made the loss nan; two labels for five pairs were split as 3 pair columns."""
    with pytest.raises(ValueError, match=f"InBatchNegatives: .*{message}"):
        InBatchNegativesLoss()(batch_output(1), numpy.array(truths))
