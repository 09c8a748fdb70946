"""Percentile bootstrap intervals over pairs or queries, and the figures of each group of pairs."""

import warnings
from collections import Counter
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

import numpy
from scipy.stats import bootstrap

from ..metrics import is_binary, main_metric, metric_value, partner_rank_values

NO_GROUP = "(no group)"


def figures(labels: numpy.ndarray) -> Sequence[str]:
    """The figures per group and with intervals: acc and ROC AUC (0/1 labels), or Spearman and Pearson."""
    return ("acc", "auc") if is_binary(labels) else ("spearman", "pearson")


def check_bootstrap(n_resamples: int, confidence: float) -> None:
    """A ValueError unless n_resamples >= 0 (0: no intervals) and 0 < confidence < 1."""
    if n_resamples < 0 or not 0 < confidence < 1:
        raise ValueError(f"bootstrap must be >= 0 and confidence in (0, 1), got {n_resamples} and {confidence}.")


def interval(
    statistic: Callable[[numpy.ndarray], float], n: int, *, n_resamples: int, confidence: float, seed: int
) -> Optional[List[float]]:
    """The percentile bootstrap interval of `statistic(indices)` over resamples of range(n), or None if undefined."""
    if n < 2:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns when the statistic is NaN or constant
        result = bootstrap(
            (numpy.arange(n),),
            statistic,
            vectorized=False,
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            random_state=numpy.random.default_rng(seed),
        )
    low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return [low, high] if numpy.isfinite(low) and numpy.isfinite(high) else None


def pair_intervals(
    scores: Mapping[str, numpy.ndarray],
    labels: numpy.ndarray,
    thresholds: Mapping[str, float],
    *,
    reference: Optional[str] = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Dict[str, Any]:
    """Intervals of every method's `figures` and of `reference`'s lead over each other method on
    the main figure (a paired bootstrap over the pairs)."""
    y = numpy.asarray(labels, dtype="f8")
    n = len(y)
    settings: Dict[str, Any] = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    out = _skeleton("pairs", settings)
    for method, s in scores.items():
        out["intervals"][method] = {
            name: interval(_figure(name, s, y, thresholds[method]), n, **settings) for name in figures(y)
        }
    if reference is not None and reference in scores:
        main = main_metric(y)
        ref = scores[reference]
        for method, s in scores.items():
            if method != reference:

                def lead(i: numpy.ndarray, s: numpy.ndarray = s) -> float:
                    return metric_value(main, ref[i], y[i]) - metric_value(main, s[i], y[i])

                out["differences"][method] = _lead(reference, main, lead, n, settings)
    return out


def rank_intervals(
    ranks: Mapping[str, numpy.ndarray],
    *,
    ks: Sequence[int] = (1, 10),
    reference: Optional[str] = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Dict[str, Any]:
    """Intervals of every method's mrr@k (k > 1) and recall@k from its partners' 1-based `ranks`,
    and of `reference`'s lead on mrr@max(k) (a paired bootstrap over the queries)."""
    settings: Dict[str, Any] = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    out = _skeleton("queries", settings)
    sizes = {len(r) for r in ranks.values()}
    if len(sizes) > 1:
        raise ValueError(f"Every method needs the ranks of the same queries, got {sorted(sizes)} ranks.")
    n = sizes.pop() if sizes else 0
    # Each figure is a mean over the queries of a per-query value: the interval resamples those values.
    values = {method: partner_rank_values(r, ks) for method, r in ranks.items()}
    # mrr@1 is recall@1 when a query has one relevant text: no interval of its own.
    names = [name for k in ks for name in ([f"mrr@{k}"] if k > 1 else []) + [f"recall@{k}"]]
    for method, per_query in values.items():
        out["intervals"][method] = {name: interval(_mean(per_query[name]), n, **settings) for name in names}
    if reference is not None and reference in values:
        main = f"mrr@{max(ks)}"
        ref = values[reference][main]
        for method, per_query in values.items():
            if method != reference:
                out["differences"][method] = _lead(reference, main, _mean(ref - per_query[main]), n, settings)
    return out


def group_results(
    scores: Mapping[str, numpy.ndarray],
    labels: numpy.ndarray,
    thresholds: Mapping[str, float],
    groups: Sequence[str],
    *,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
) -> Dict[str, Dict[str, Any]]:
    """Each group's `figures`, largest group first (no group: NO_GROUP); intervals with `n_resamples` > 0."""
    y = numpy.asarray(labels, dtype="f8")
    names = numpy.asarray([group or NO_GROUP for group in groups], dtype=object)
    if len(names) != len(y):
        raise ValueError(f"Got {len(names)} groups for {len(y)} pairs.")
    wanted = figures(y)
    sizes = Counter(names.tolist())
    out: Dict[str, Dict[str, Any]] = {}
    for name in sorted(sizes, key=lambda g: (-sizes[g], g)):
        rows = numpy.flatnonzero(names == name)
        part = {method: s[rows] for method, s in scores.items()}
        out[name] = {
            "n_pairs": len(rows),
            "results": {
                method: {figure: _finite(metric_value(figure, s, y[rows], thresholds[method])) for figure in wanted}
                for method, s in part.items()
            },
        }
        if n_resamples > 0:
            out[name]["bootstrap"] = pair_intervals(
                part, y[rows], thresholds, n_resamples=n_resamples, confidence=confidence, seed=seed
            )["intervals"]
    return out


def _skeleton(over: str, settings: Mapping[str, Any]) -> Dict[str, Any]:
    """The bootstrap report before its intervals: settings, and what was resampled."""
    return {**settings, "kind": f"percentile bootstrap over the {over}", "intervals": {}, "differences": {}}


def _lead(
    of: str, metric: str, statistic: Callable[[numpy.ndarray], float], n: int, settings: Mapping[str, Any]
) -> Dict[str, Any]:
    """`of`'s lead over another method on `metric`: `statistic` of all n indices, and its interval."""
    value = _finite(statistic(numpy.arange(n)))
    return {"metric": metric, "of": of, "value": value, "interval": interval(statistic, n, **settings)}


def _mean(values: numpy.ndarray) -> Callable[[numpy.ndarray], float]:
    """The mean of the values at the given indices."""
    return lambda i: float(values[i].mean())


def _figure(
    name: str, scores: numpy.ndarray, labels: numpy.ndarray, threshold: float
) -> Callable[[numpy.ndarray], float]:
    """The figure `name` of the pairs at the given indices."""
    return lambda i: metric_value(name, scores[i], labels[i], threshold)


def _finite(value: float) -> Optional[float]:
    return value if numpy.isfinite(value) else None
