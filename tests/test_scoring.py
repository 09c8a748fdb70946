import numpy
import pytest

from spacy_siamese.scoring import best_threshold, pair_metrics


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
    assert m["ap"] is not None


def test_best_threshold_separates_when_possible():
    scores = numpy.array([0.2, 0.35, 0.4, 0.7, 0.9])
    labels = numpy.array([0, 0, 0, 1, 1])
    t = best_threshold(scores, labels)
    assert 0.4 < t < 0.7
    assert pair_metrics(scores, labels, t)["acc"] == 1.0


def test_best_threshold_with_ties_and_degenerate_input():
    assert best_threshold([0.5, 0.5, 0.5], [1, 0, 1]) <= 0.5  # all positive beats all negative
    assert best_threshold([], []) == 0.5
    t = best_threshold([0.1, 0.2], [0, 0])
    assert pair_metrics([0.1, 0.2], [0, 0], t)["acc"] == 1.0


def test_one_class_has_no_ranking_metrics():
    m = pair_metrics([0.2, 0.8], [1, 1])
    assert m["auc"] is None and m["ap"] is None


def test_graded_labels_report_correlation():
    m = pair_metrics([0.1, 0.4, 0.8], [0.0, 0.5, 1.0])
    assert m["pearson"] > 0.95 and m["spearman"] == pytest.approx(1.0)


def test_bad_input():
    with pytest.raises(ValueError, match="3 scores for 2 labels"):
        pair_metrics([0.1, 0.2, 0.3], [0, 1])
    with pytest.raises(ValueError, match="empty"):
        pair_metrics([], [])
