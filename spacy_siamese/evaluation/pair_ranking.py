"""Pair metrics in the terms of Yih (2009): ROC AUC, TPR at a fixed FPR, and MAP and precision
at k over the candidates of each query (the pairs sharing their first text)."""

from typing import Dict, Hashable, Optional, Sequence

import numpy
from sklearn.metrics import roc_curve

from ..metrics import ArrayLike, pair_metrics, scores_and_labels


def tpr_at_fpr(scores: ArrayLike, labels: ArrayLike, fpr: float) -> Optional[float]:
    """The highest true positive rate of a threshold on the scores whose false positive rate is
    at most `fpr` (labels >= 0.5 are positive); None without both classes."""
    s, y = scores_and_labels(scores, labels)
    gold = y >= 0.5
    if gold.all() or not gold.any():
        return None
    fprs, tprs, _ = roc_curve(gold, s)
    return float(tprs[fprs <= fpr].max())


def query_ranking(
    scores: ArrayLike, labels: ArrayLike, queries: Sequence[Hashable], *, k: int = 3
) -> Dict[str, Optional[float]]:
    """MAP and P@k of the candidates of each query ranked by score (ties in input order), over
    the queries with at least two candidates and one positive; `n_queries` says how many."""
    s, y = scores_and_labels(scores, labels)
    if len(queries) != len(s):
        raise ValueError(f"Got {len(queries)} queries for {len(s)} scores.")
    groups: Dict[Hashable, list] = {}
    for i, query in enumerate(queries):
        groups.setdefault(query, []).append(i)
    aps, precisions = [], []
    for rows in groups.values():
        rel = y[rows] >= 0.5
        if len(rows) < 2 or not rel.any():
            continue
        ranked = rel[numpy.argsort(-s[rows], kind="stable")].astype("f8")
        hits = numpy.cumsum(ranked)
        aps.append(float((hits / numpy.arange(1, len(ranked) + 1) * ranked).sum() / ranked.sum()))
        precisions.append(float(ranked[:k].sum() / min(k, len(ranked))))
    if not aps:
        return {"map": None, f"p@{k}": None, "n_queries": 0}
    return {"map": float(numpy.mean(aps)), f"p@{k}": float(numpy.mean(precisions)), "n_queries": len(aps)}


def ranking_metrics(scores: ArrayLike, labels: ArrayLike, queries: Sequence[Hashable]) -> Dict[str, Optional[float]]:
    """AUC, MAP, P@3 (per query), and TPR at FPR 0.1 and 0.2 of scored binary pairs."""
    return {
        "auc": pair_metrics(scores, labels)["auc"],
        **query_ranking(scores, labels, queries, k=3),
        "tpr@fpr0.1": tpr_at_fpr(scores, labels, 0.1),
        "tpr@fpr0.2": tpr_at_fpr(scores, labels, 0.2),
    }
