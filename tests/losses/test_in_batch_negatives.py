import numpy
import pytest
from spacy.util import registry

from spacy_siamese.losses import InBatchNegativesLoss, PairLogLoss, in_batch_columns, ranking_loss

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
