import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from spacy_siamese.evaluation.uncertainty import NO_GROUP, group_results, interval, pair_intervals, rank_intervals
from spacy_siamese.metrics import main_metric, metric_value


def graded(n, noise, seed=0):
    rng = numpy.random.default_rng(seed)
    y = rng.random(n)
    return y + rng.normal(0, noise, n), y


def test_metric_value_is_the_figure_of_the_library():
    s, y = graded(50, 0.3)
    gold = (y >= 0.5).astype(float)
    assert metric_value("spearman", s, y) == pytest.approx(spearmanr(s, y)[0])
    assert metric_value("auc", s, gold) == pytest.approx(roc_auc_score(gold, s))
    assert metric_value("acc", [0.2, 0.7, 0.9], [0, 0, 1], 0.6) == pytest.approx(2 / 3)
    assert numpy.isnan(metric_value("auc", [0.1, 0.9], [1, 1]))
    assert numpy.isnan(metric_value("spearman", [0.5, 0.5, 0.5], [0.1, 0.2, 0.3]))
    assert main_metric([0, 1, 1]) == "auc" and main_metric([0.2, 1.0]) == "spearman"
    with pytest.raises(ValueError, match="Unknown metric 'f1'"):
        metric_value("f1", [0.1], [1])


def spearman_of(s, y):
    return lambda i: metric_value("spearman", s[i], y[i])


def test_the_interval_holds_the_figure_and_narrows_with_more_pairs():
    widths = []
    for n in (100, 1600):
        s, y = graded(n, 0.5)
        bounds = interval(spearman_of(s, y), n, n_resamples=400, confidence=0.95, seed=0)
        assert bounds[0] < metric_value("spearman", s, y) < bounds[1]
        widths.append(bounds[1] - bounds[0])
    assert widths[1] < widths[0] / 2  # about 1 / sqrt(n): a quarter


def test_the_interval_is_seeded_and_undefined_resamples_give_none():
    s, y = graded(60, 0.4)
    run = [interval(spearman_of(s, y), 60, n_resamples=200, confidence=0.9, seed=3) for _ in range(2)]
    assert run[0] == run[1]
    gold = numpy.array([1.0] + [0.0] * 9)  # one positive: many resamples have none
    auc = interval(lambda i: metric_value("auc", s[:10][i], gold[i]), 10, n_resamples=200, confidence=0.95, seed=0)
    assert auc is None
    assert interval(spearman_of(s, y), 1, n_resamples=10, confidence=0.95, seed=0) is None  # nothing to resample


def test_pair_intervals_of_each_method_and_of_the_lead_over_the_others():
    s, y = graded(400, 0.3)
    worse = y + numpy.random.default_rng(1).normal(0, 1.0, len(y))
    scores = {"model": s, "baseline": worse}
    out = pair_intervals(scores, y, {"model": 0.5, "baseline": 0.5}, reference="model", n_resamples=300, seed=0)
    assert set(out["intervals"]) == {"model", "baseline"}
    assert set(out["intervals"]["model"]) == {"spearman", "pearson"}
    lead = out["differences"]["baseline"]
    assert lead["metric"] == "spearman" and lead["of"] == "model" and list(out["differences"]) == ["baseline"]
    expected = metric_value("spearman", s, y) - metric_value("spearman", worse, y)
    assert lead["value"] == pytest.approx(expected) and lead["interval"][0] > 0  # clearly better
    binary = pair_intervals({"model": s}, (y >= 0.5).astype(float), {"model": 0.5}, n_resamples=100)
    assert set(binary["intervals"]["model"]) == {"acc", "auc"} and binary["differences"] == {}


def test_the_lead_over_itself_is_exactly_zero_on_every_resample():
    s, y = graded(100, 0.3)
    out = pair_intervals({"a": s, "b": s.copy()}, y, {"a": 0.5, "b": 0.5}, reference="a", n_resamples=100)
    assert out["differences"]["b"]["value"] == 0 and out["differences"]["b"]["interval"] == [0.0, 0.0]


def test_rank_intervals_resample_the_queries_of_every_method_together():
    rng = numpy.random.default_rng(0)
    good = rng.integers(1, 4, 300)  # partners in the top 3
    bad = good + rng.integers(0, 20, 300)  # the same queries, ranked lower
    out = rank_intervals({"model": good, "other": bad}, ks=(1, 10), reference="model", n_resamples=300, seed=0)
    assert out["kind"] == "percentile bootstrap over the queries"
    assert set(out["intervals"]["other"]) == {"recall@1", "mrr@10", "recall@10"}  # no mrr@1: recall@1
    for method, ranks in (("model", good), ("other", bad)):
        low, high = out["intervals"][method]["mrr@10"]
        assert low < numpy.where(ranks <= 10, 1 / ranks, 0).mean() < high
    assert out["intervals"]["model"]["recall@10"] == [1.0, 1.0]  # every partner in the top 10
    lead = out["differences"]["other"]
    assert lead["metric"] == "mrr@10" and lead["of"] == "model" and lead["interval"][0] > 0
    same = rank_intervals({"a": good, "b": good.copy()}, reference="a", n_resamples=50)
    assert same["differences"]["b"]["value"] == 0 and same["differences"]["b"]["interval"] == [0.0, 0.0]
    assert rank_intervals({"a": good}, reference="missing", n_resamples=50)["differences"] == {}
    with pytest.raises(ValueError, match="same queries"):
        rank_intervals({"a": good, "b": bad[:10]})
    with pytest.raises(ValueError, match="1-based"):
        rank_intervals({"a": good - 1})


def test_groups_are_scored_on_their_own_largest_first():
    s, y = graded(90, 0.2)
    s[60:] = numpy.random.default_rng(2).random(30)  # the last group: noise
    groups = ["news"] * 40 + ["captions"] * 20 + [""] * 30
    out = group_results({"model": s}, y, {"model": 0.5}, groups)
    assert list(out) == ["news", NO_GROUP, "captions"]
    assert out["news"]["n_pairs"] == 40 and out[NO_GROUP]["n_pairs"] == 30
    news = out["news"]["results"]["model"]["spearman"]
    assert news == pytest.approx(metric_value("spearman", s[:40], y[:40]))
    assert news > out[NO_GROUP]["results"]["model"]["spearman"] + 0.3
    assert "bootstrap" not in out["news"]
    boot = group_results({"model": s}, y, {"model": 0.5}, groups, n_resamples=50)
    assert set(boot["captions"]["bootstrap"]["model"]) == {"spearman", "pearson"}
    with pytest.raises(ValueError, match="Got 2 groups for 90 pairs"):
        group_results({"model": s}, y, {"model": 0.5}, ["a", "b"])


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 1), st.sampled_from([0.0, 1.0]), st.sampled_from("abc")), min_size=1, max_size=40)
)
def test_any_grouping_covers_every_pair_once_and_undefined_figures_are_none(rows):
    s = numpy.array([r[0] for r in rows])
    y = numpy.array([r[1] for r in rows])
    groups = [r[2] for r in rows]
    out = group_results({"m": s}, y, {"m": 0.5}, groups)
    assert sum(entry["n_pairs"] for entry in out.values()) == len(rows)
    for name, entry in out.items():
        rows_of = [i for i, g in enumerate(groups) if g == name]
        auc = entry["results"]["m"]["auc"]
        assert (auc is None) == (len(set(y[rows_of])) < 2)
