import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix

from spacy_siamese.metrics import (
    best_threshold,
    pair_auc,
    pair_metrics,
    partner_rank_values,
    precision_threshold,
    regression_metrics,
    retrieval_metrics,
)
from spacy_siamese.scoring import score_pairs


def test_pair_metrics_by_hand():
    scores = [0.9, 0.8, 0.3, 0.6, 0.1]
    labels = [1, 1, 1, 0, 0]
    m = pair_metrics(scores, labels, threshold=0.5)
    # predicted positive: 0.9, 0.8, 0.6 -> tp=2, fp=1, fn=1
    assert m["acc"] == pytest.approx(3 / 5)
    assert m["p"] == pytest.approx(2 / 3)
    assert m["r"] == pytest.approx(2 / 3)
    assert m["f"] == pytest.approx(2 / 3)
    # positive/negative orderings: (0.9,0.6) (0.9,0.1) (0.8,0.6) (0.8,0.1) (0.3,0.1) right; (0.3,0.6) wrong
    assert m["auc"] == pytest.approx(5 / 6)
    # ranked: 0.9+ 0.8+ 0.6- 0.3+ 0.1-: precision at each positive 1, 1, 3/4
    assert m["ap"] == pytest.approx((1 + 1 + 3 / 4) / 3)


def test_nothing_predicted_positive_scores_zero_not_nan():
    m = pair_metrics([0.1, 0.2], [1, 0], threshold=0.9)
    assert (m["acc"], m["p"], m["r"], m["f"]) == (0.5, 0.0, 0.0, 0.0)


def test_best_threshold_separates_when_possible():
    scores = numpy.array([0.2, 0.35, 0.4, 0.7, 0.9])
    labels = numpy.array([0, 0, 0, 1, 1])
    t = best_threshold(scores, labels)
    assert t == pytest.approx((0.4 + 0.7) / 2)  # the midpoint of the cut
    assert pair_metrics(scores, labels, t)["acc"] == 1.0


def test_best_threshold_edges_and_ties():
    assert best_threshold([], []) == 0.5
    assert best_threshold([0.5, 0.5, 0.5], [1, 0, 1]) == 0.5  # all positive beats all negative
    assert best_threshold([0.3, 0.8], [1, 1]) == 0.3  # one class: everything positive...
    assert best_threshold([0.1, 0.2], [0, 0]) == pytest.approx(0.2 + 1e-6)  # ...or nothing
    # best: nothing positive (2 of 3 right) -> above the top score
    assert best_threshold([0.9, 0.1, 0.2], [0, 1, 0]) == pytest.approx(0.9 + 1e-6)
    # two cuts are equally good (0.75, and 0.3 = all positive): the higher threshold wins
    assert best_threshold([0.9, 0.6, 0.3], [1, 0, 1]) == pytest.approx(0.75)


def _reference_best_threshold(scores, labels):
    """The accuracy search written out: every cut between distinct scores, in order."""
    s = numpy.asarray(scores, dtype="f8")
    gold = numpy.asarray(labels) >= 0.5
    distinct = numpy.unique(s)[::-1]
    cuts = [distinct[0] + 1e-6] + [(a + b) / 2 for a, b in zip(distinct, distinct[1:])] + [distinct[-1]]
    accuracy = [numpy.mean((s >= cut) == gold) for cut in cuts]
    return float(cuts[int(numpy.argmax(accuracy))])


@pytest.mark.parametrize("seed", range(20))
def test_best_threshold_matches_the_exhaustive_search(seed):
    rng = numpy.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    scores = rng.integers(0, 8, n) / 7.0 if seed % 2 else rng.random(n).astype("f4")
    labels = rng.integers(0, 2, n)
    assert best_threshold(scores, labels) == pytest.approx(_reference_best_threshold(scores, labels), abs=1e-12)


def test_one_class_has_no_ranking_metrics():
    m = pair_metrics([0.2, 0.8], [1, 1])
    assert m["auc"] is None and m["ap"] is None


def test_graded_labels_report_regression_metrics():
    m = pair_metrics([0.1, 0.4, 0.8], [0.0, 0.5, 1.0])
    assert m["pearson"] == pytest.approx(numpy.corrcoef([0.1, 0.4, 0.8], [0.0, 0.5, 1.0])[0, 1])
    assert m["spearman"] == pytest.approx(1.0)
    assert m["mse"] == pytest.approx((0.01 + 0.01 + 0.04) / 3)
    assert "mse" not in pair_metrics([0.1, 0.8], [0, 1])
    assert m["auc"] is None
    assert pair_metrics([0.5, 0.5, 0.5], [0.0, 0.5, 1.0])["pearson"] is None  # constant scores


def test_regression_metrics_by_hand():
    m = regression_metrics([0.1, 0.4, 0.8], [0.0, 0.5, 1.0])
    assert m["mse"] == pytest.approx((0.01 + 0.01 + 0.04) / 3)
    assert m["mae"] == pytest.approx((0.1 + 0.1 + 0.2) / 3)
    assert m["spearman"] == pytest.approx(1.0)


def test_bad_input():
    with pytest.raises(ValueError, match="3 scores for 2 labels"):
        pair_metrics([0.1, 0.2, 0.3], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        pair_metrics([], [])


def test_scorer_keys_and_prefix():
    result = score_pairs([], pair_scores=lambda _: ([0.9, 0.1], [1, 0]), threshold=0.4)
    assert set(result) == {"sim_acc", "sim_p", "sim_r", "sim_f", "sim_auc", "sim_ap", "sim_threshold"}
    assert result["sim_acc"] == 1.0 and result["sim_threshold"] == 0.4


# Retrieval: four documents on a line; a and b share label x, c and d share y, b and c share z.
VECTORS = numpy.array([[1.0, 0.0], [0.9, 0.1], [0.1, 0.9], [0.0, 1.0]])
LABELS = [("x",), ("x", "z"), ("y", "z"), ("y",)]


def test_partner_rank_values_per_query():
    values = partner_rank_values([1, 2, 11], ks=(1, 10))
    assert list(values) == ["mrr@1", "recall@1", "mrr@10", "recall@10"]
    numpy.testing.assert_allclose(values["mrr@10"], [1, 0.5, 0])
    numpy.testing.assert_allclose(values["recall@1"], [1, 0, 0])
    numpy.testing.assert_allclose(values["mrr@1"], [1, 0, 0])
    for bad in ([0, 1], [[1, 2]]):
        with pytest.raises(ValueError, match="1-based ranks"):
            partner_rank_values(bad)


def test_retrieval_metrics_by_hand():
    # ranking by cosine: a: b c d; b: a c d; c: d b a; d: c b a
    # relevant:          a: b      b: a c    c: d b    d: c
    m = retrieval_metrics(VECTORS, LABELS, ks=(1, 2))
    assert m["n_queries"] == 4
    assert m["mrr"] == pytest.approx(1.0)
    assert m["p@1"] == pytest.approx(1.0)
    assert m["p@2"] == pytest.approx((1 / 2 + 2 / 2 + 2 / 2 + 1 / 2) / 4)
    assert m["recall@1"] == pytest.approx((1 + 1 / 2 + 1 / 2 + 1) / 4)
    assert m["map"] == pytest.approx(1.0)
    # d as the only document of a's label: a then ranks it last
    m = retrieval_metrics(VECTORS, [("x",), ("w",), ("v",), ("x",)], ks=(1, 2))
    assert m["n_queries"] == 2
    assert m["mrr"] == pytest.approx(1 / 3) and m["mrr@2"] == 0.0 and m["map"] == pytest.approx(1 / 3)


def test_retrieval_ties_rank_in_document_order():
    zeros = numpy.zeros((3, 2))  # all cosines 0
    m = retrieval_metrics(zeros, [("x",), ("y",), ("x",)], ks=(1,))
    # query 0: [1, 2] -> first relevant at rank 2; query 2: [0, 1] -> rank 1
    assert m["mrr"] == pytest.approx((1 / 2 + 1) / 2)


def test_retrieval_sparse_and_blocks_agree_with_dense():
    rng = numpy.random.default_rng(0)
    X = rng.random((40, 12)) * (rng.random((40, 12)) > 0.6)
    labels = [(str(i % 5),) for i in range(40)]
    dense = retrieval_metrics(X, labels)
    assert retrieval_metrics(csr_matrix(X), labels) == pytest.approx(dense)
    assert retrieval_metrics(X, labels, batch_size=7) == pytest.approx(dense)


def test_retrieval_needs_relevant_documents():
    with pytest.raises(ValueError, match="share a label"):
        retrieval_metrics(VECTORS, [("a",), ("b",), ("c",), ("d",)])


@pytest.mark.parametrize(
    "ks,message",
    [
        ((0,), "got 0"),  # retrieval_metrics divided by zero
        ((1, -2), "got -2"),
        ((2.5,), "got 2.5"),
        ((True,), "got True"),
        ((10, 10), r"given once, got \[10, 10\]"),  # summed twice: mrr@10 and p@10 doubled
        (10, "sequence of integers"),
    ],
)
def test_retrieval_cut_offs_are_distinct_positive_integers(ks, message):
    with pytest.raises(ValueError, match=f"ks.*{message}"):
        retrieval_metrics(VECTORS, LABELS, ks=ks)
    with pytest.raises(ValueError, match=f"ks.*{message}"):
        partner_rank_values([1, 2], ks=ks)
    assert set(retrieval_metrics(VECTORS, LABELS, ks=numpy.array([1, 3]))) >= {"mrr@3", "p@3"}


@pytest.mark.parametrize("batch_size", [0, -1])
def test_retrieval_batch_size_must_be_positive(batch_size):
    """Not Python's range() error (0) or "no query has a relevant document" (negative: no batch)."""
    with pytest.raises(ValueError, match=f"batch_size must be at least 1, got {batch_size}"):
        retrieval_metrics(VECTORS, LABELS, batch_size=batch_size)


def test_retrieval_labels_are_label_sets_not_strings():
    """One string per document is refused, not read as the set of its characters ('sports'
    and 'politics' would share 's', 'p', 'o' and 't')."""
    with pytest.raises(ValueError, match="not one string"):
        retrieval_metrics(VECTORS, ["sports", "politics", "sports", "politics"])


def test_pair_auc():
    pairs = [(0, 1, 1.0), (2, 3, 1.0), (0, 3, 0.0), (1, 2, 0.0)]
    assert pair_auc(VECTORS, pairs) == 1.0
    assert pair_auc(csr_matrix(VECTORS), pairs) == 1.0
    assert pair_auc(VECTORS, [(0, 1, 0.0), (0, 3, 1.0)]) == 0.0


def test_precision_threshold_is_the_lowest_cut_with_that_precision():
    scores = [0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
    labels = [1, 1, 0, 1, 1, 0, 0]
    # precision from the top: 1, 1, 2/3, 3/4, 4/5, 4/6, 4/7
    assert precision_threshold(scores, labels, 0.8) == pytest.approx((0.6 + 0.5) / 2)
    assert precision_threshold(scores, labels, 1.0) == pytest.approx((0.9 + 0.8) / 2)
    assert precision_threshold(scores, labels, 0.5) == pytest.approx(0.4)  # every pair
    assert precision_threshold(scores, [0] * 7, 0.5) is None
    assert precision_threshold([0.9, 0.8], [0, 1], 0.9) is None


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1)), min_size=1, max_size=40),
    st.floats(0.05, 1.0),
)
def test_precision_threshold_reaches_the_precision_and_finds_the_most(pairs, precision):
    scores = numpy.array([s for s, _ in pairs])
    labels = numpy.array([y for _, y in pairs])
    t = precision_threshold(scores, labels, precision)
    cuts = sorted(set(scores))
    reachable = [c for c in cuts if labels[scores >= c].mean() >= precision and labels[scores >= c].any()]
    if t is None:
        assert not reachable
        return
    chosen = scores >= t
    assert labels[chosen].mean() >= precision - 1e-12
    assert chosen.sum() == max((scores >= c).sum() for c in reachable)


def test_thresholds_between_adjacent_scores_leave_the_lower_score_out():
    scores, labels = [0.0, 5e-324], [0, 1]  # no float lies between the two scores: the midpoint rounds to 0
    assert precision_threshold(scores, labels, 1.0) == 5e-324
    assert best_threshold(scores, labels) == 5e-324
