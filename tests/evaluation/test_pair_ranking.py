import pytest

from spacy_siamese.evaluation.pair_ranking import query_ranking, ranking_metrics, tpr_at_fpr


def test_tpr_at_fpr():
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]
    labels = [1, 1, 0, 1, 0, 0, 0, 0, 0, 0]
    assert tpr_at_fpr(scores, labels, 0.0) == pytest.approx(2 / 3)
    assert tpr_at_fpr(scores, labels, 1 / 7) == 1.0
    assert tpr_at_fpr(scores, [1] * 10, 0.1) is None


def test_query_ranking():
    scores = [0.9, 0.5, 0.1, 0.8, 0.7, 0.3]
    labels = [0, 1, 1, 1, 0, 1]
    queries = ["a", "a", "a", "b", "b", "c"]  # c: one candidate, skipped
    out = query_ranking(scores, labels, queries, k=3)
    assert out["n_queries"] == 2
    assert out["map"] == pytest.approx(((1 / 2 + 2 / 3) / 2 + 1.0) / 2)
    assert out["p@3"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert ranking_metrics(scores, labels, queries)["auc"] is not None
