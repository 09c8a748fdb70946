"""Metrics for scored pairs (classification, ranking, correlation) and for retrieval."""

import numbers
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy
from scipy.sparse import csr_matrix, issparse
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    mean_absolute_error,
    mean_squared_error,
    precision_recall_fscore_support,
    roc_auc_score,
    roc_curve,
)
from sklearn.preprocessing import normalize

ArrayLike = Union[Sequence[float], numpy.ndarray]
Vectors = Union[numpy.ndarray, csr_matrix]


def is_binary(labels: ArrayLike) -> bool:
    """Whether every label is 0 or 1."""
    return bool(numpy.all(numpy.isin(numpy.asarray(labels, dtype="f"), (0.0, 1.0))))


def best_threshold(scores: ArrayLike, labels: ArrayLike) -> float:
    """The threshold that maximises the accuracy of `score >= threshold` (labels >= 0.5 are
    positive): a midpoint between distinct scores, the highest on ties; 0.5 for no pairs."""
    s = numpy.asarray(scores, dtype="f8").ravel()
    gold = numpy.asarray(labels, dtype="f8").ravel() >= 0.5
    if s.size == 0:
        return 0.5
    n_pos = int(gold.sum())
    n_neg = s.size - n_pos
    if n_pos == 0 or n_neg == 0:  # one class: predict it for every pair
        return float(s.min()) if n_neg == 0 else float(s.max() + 1e-6)
    # One point per distinct score, highest first; point 0 predicts nothing positive.
    fpr, tpr, cuts = roc_curve(gold, s, drop_intermediate=False)
    correct = numpy.rint(tpr * n_pos) + n_neg - numpy.rint(fpr * n_neg)
    k = int(numpy.argmax(correct))
    if k == 0:
        return float(cuts[1] + 1e-6)
    if k == len(cuts) - 1:
        return float(cuts[k])
    return _midpoint(cuts[k], cuts[k + 1])


def precision_threshold(scores: ArrayLike, labels: ArrayLike, precision: float) -> Optional[float]:
    """The lowest threshold (a midpoint) at which `score >= threshold` has at least `precision`; None if none does."""
    s = numpy.asarray(scores, dtype="f8").ravel()
    gold = numpy.asarray(labels, dtype="f8").ravel() >= 0.5
    if not gold.any():
        return None
    order = numpy.argsort(-s, kind="stable")
    s, gold = s[order], gold[order]
    last = numpy.r_[s[1:] != s[:-1], True]  # the last pair of each run of equal scores
    tp = numpy.cumsum(gold)[last]
    cut = s[last]
    ok = numpy.flatnonzero(tp / numpy.arange(1, len(s) + 1)[last] >= precision)
    if not len(ok):
        return None
    k = int(ok[-1])
    return float(cut[k]) if k == len(cut) - 1 else _midpoint(cut[k], cut[k + 1])


def _midpoint(high: float, low: float) -> float:
    """A threshold between two scores: their midpoint, or `high` where it rounds to `low` (adjacent floats)."""
    mid = (high + low) / 2
    return float(mid if mid > low else high)


def pair_metrics(scores: ArrayLike, labels: ArrayLike, threshold: float = 0.5) -> Dict[str, Optional[float]]:
    """acc, p, r, f at `threshold`, ROC AUC and AP (0/1 labels of both classes, else None), and for
    graded labels `regression_metrics`."""
    s, y = scores_and_labels(scores, labels)
    gold, pred = y >= 0.5, s >= threshold
    p, r, _, _ = precision_recall_fscore_support(gold, pred, average="binary", pos_label=True, zero_division=0.0)
    f = 2 * p * r / (p + r) if p + r else 0.0  # the harmonic mean of p and r, as stored scores have it
    acc = float(accuracy_score(gold, pred))
    out: Dict[str, Optional[float]] = {"acc": acc, "p": float(p), "r": float(r), "f": float(f), "auc": None, "ap": None}
    binary = is_binary(y)
    if binary and gold.any() and not gold.all():
        out["auc"] = float(roc_auc_score(gold, s))
        out["ap"] = float(average_precision_score(gold, s))
    if not binary:
        out.update(regression_metrics(s, y))
    return out


def correlation(scores: ArrayLike, labels: ArrayLike) -> Dict[str, Optional[float]]:
    """Pearson and Spearman correlation (None where a side is constant)."""
    s, y = scores_and_labels(scores, labels)
    if s.std() == 0 or y.std() == 0:
        return {"pearson": None, "spearman": None}
    return {"pearson": float(pearsonr(s, y)[0]), "spearman": float(spearmanr(s, y)[0])}


def regression_metrics(scores: ArrayLike, labels: ArrayLike) -> Dict[str, Optional[float]]:
    """Pearson, Spearman, mean squared and mean absolute error of scores against graded labels."""
    s, y = scores_and_labels(scores, labels)
    return {**correlation(s, y), "mse": float(mean_squared_error(y, s)), "mae": float(mean_absolute_error(y, s))}


def main_metric(labels: ArrayLike) -> str:
    """The threshold-free figure a pair file is read by: ROC AUC for 0/1 labels, else Spearman."""
    return "auc" if is_binary(labels) else "spearman"


def metric_value(name: str, scores: ArrayLike, labels: ArrayLike, threshold: float = 0.5) -> float:
    """One figure of `pair_metrics` ("acc" at `threshold`, "auc", "pearson" or "spearman"),
    NaN where it is undefined (one class for AUC, a constant side for a correlation)."""
    s, y = scores_and_labels(scores, labels)
    if name == "acc":
        return float(numpy.mean((s >= threshold) == (y >= 0.5)))
    if name == "auc":
        gold = y >= 0.5
        return float(roc_auc_score(gold, s)) if gold.any() and not gold.all() else float("nan")
    if name in ("pearson", "spearman"):
        value = correlation(s, y)[name]
        return float("nan") if value is None else value
    raise ValueError(f"Unknown metric {name!r}: choose acc, auc, pearson or spearman.")


def scores_and_labels(scores: ArrayLike, labels: ArrayLike) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Scores and labels as flat float arrays of the same, non-zero length, or a ValueError."""
    s = numpy.asarray(scores, dtype="f8").ravel()
    y = numpy.asarray(labels, dtype="f8").ravel()
    if s.shape != y.shape:
        raise ValueError(f"Got {s.size} scores for {y.size} labels.")
    if s.size == 0:
        raise ValueError("Cannot score an empty set of pairs.")
    return s, y


# Retrieval


def check_ks(ks: Sequence[int], *, name: str = "ks") -> None:
    """A ValueError naming `name` unless `ks` are cut-offs of a ranking: integers of at least 1, each once."""
    if isinstance(ks, (str, numbers.Number)):
        raise ValueError(f"{name} must be a sequence of integers of at least 1, e.g. (1, 10), got {ks!r}.")
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"{name}: each k must be an integer of at least 1, got {k!r}.")
    if len(set(ks)) < len(ks):
        raise ValueError(f"{name}: each k must be given once, got {list(ks)}.")


def partner_rank_values(ranks: ArrayLike, ks: Sequence[int] = (1, 10)) -> Dict[str, numpy.ndarray]:
    """Per query whose one relevant text is at a 1-based rank: its mrr@k (1/rank within the top
    k, else 0) and recall@k (0 or 1) for each k. A figure over the queries is the mean of its values."""
    check_ks(ks)
    r = numpy.asarray(ranks, dtype="f8")
    if r.ndim != 1 or (r < 1).any():
        raise ValueError("Ranks must be a 1-d sequence of 1-based ranks.")
    out: Dict[str, numpy.ndarray] = {}
    for k in ks:
        out[f"mrr@{k}"] = numpy.where(r <= k, 1.0 / r, 0.0)
        out[f"recall@{k}"] = (r <= k).astype("f8")
    return out


def retrieval_metrics(
    vectors: Vectors, labels: Sequence[Iterable[str]], *, ks: Sequence[int] = (1, 10), batch_size: int = 2048
) -> Dict[str, float]:
    """Each row of `vectors` as a query against all other rows, ranked by cosine (ties in row order); row j is relevant
    to row i when they share a label, and queries without one are skipped. Returns mrr, map, and for each k mrr@k, p@k
    and recall@k (shares of the top k and of the relevant), and n_queries."""
    check_ks(ks)
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
    V = unit_rows(vectors)
    L = label_matrix(labels)
    n = V.shape[0]
    if L.shape[0] != n:
        raise ValueError(f"Got {n} vectors for {L.shape[0]} label sets.")
    sums = dict.fromkeys(["mrr", "map"] + [f"{name}@{k}" for k in ks for name in ("mrr", "p", "recall")], 0.0)
    n_queries = 0
    ranks = numpy.arange(1, n)
    for start in range(0, n, batch_size):
        rows = numpy.arange(start, min(start + batch_size, n))
        product: Any = V @ V.T if len(rows) == n else V[rows] @ V.T  # one block: the symmetric product
        S = numpy.asarray(product.toarray() if issparse(product) else product, dtype="f8")
        S[numpy.arange(len(rows)), rows] = -numpy.inf  # the query itself sorts last
        order = numpy.argsort(-S, axis=1, kind="stable")[:, :-1]
        rel = numpy.take_along_axis((L[rows] @ L.T).toarray() > 0, order, axis=1)
        rel = rel[rel.any(axis=1)].astype("f8")
        if not len(rel):
            continue
        n_queries += len(rel)
        first = rel.argmax(axis=1) + 1
        n_rel = rel.sum(axis=1)
        sums["mrr"] += float((1.0 / first).sum())
        sums["map"] += float(((numpy.cumsum(rel, axis=1) / ranks * rel).sum(axis=1) / n_rel).sum())
        for k in ks:
            sums[f"mrr@{k}"] += float(numpy.where(first <= k, 1.0 / first, 0.0).sum())
            sums[f"p@{k}"] += float(rel[:, :k].sum())  # a count: divided once at the end
            sums[f"recall@{k}"] += float((rel[:, :k].sum(axis=1) / n_rel).sum())
    if not n_queries:
        raise ValueError("No query has a relevant document: no two documents share a label.")
    out: Dict[str, float] = {key: value / n_queries for key, value in sums.items()}
    for k in ks:
        out[f"p@{k}"] = sums[f"p@{k}"] / (n_queries * min(k, n - 1))
    out["n_queries"] = n_queries
    return out


def pair_auc(vectors: Vectors, pairs: Sequence[Tuple[int, int, float]]) -> float:
    """ROC AUC of the cosine of rows i and j against the labels of (i, j, label) pairs."""
    i = numpy.asarray([p[0] for p in pairs])
    j = numpy.asarray([p[1] for p in pairs])
    U = unit_rows(vectors)
    cosines = U[i].multiply(U[j]).sum(axis=1) if issparse(U) else (U[i] * U[j]).sum(axis=1)
    return float(roc_auc_score([p[2] for p in pairs], numpy.asarray(cosines).ravel()))


def unit_rows(vectors: Vectors) -> Vectors:
    """Rows scaled to length 1 (zero rows stay zero, so their cosine is 0), as float64."""
    return normalize(csr_matrix(vectors, dtype="f8") if issparse(vectors) else numpy.asarray(vectors, dtype="f8"))


def label_matrix(labels: Sequence[Iterable[str]]) -> csr_matrix:
    """A (n_docs, n_labels) 0/1 matrix of the documents' labels."""
    index: Dict[str, int] = {}
    rows: List[int] = []
    cols: List[int] = []
    for i, doc_labels in enumerate(labels):
        if isinstance(doc_labels, str):
            raise ValueError(
                f"The labels of document {i} are one string, {doc_labels!r}, not one string per label: "
                f"give each document a list of labels ([{doc_labels!r}])."
            )
        for label in set(doc_labels):
            rows.append(i)
            cols.append(index.setdefault(label, len(index)))
    return csr_matrix((numpy.ones(len(rows), dtype="f4"), (rows, cols)), shape=(len(labels), max(len(index), 1)))
