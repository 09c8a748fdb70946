"""Metrics for pair similarity: classification at a threshold, ranking, correlation."""
from typing import Any, Callable, Dict, Iterable, Optional, Sequence

import numpy
from sklearn.metrics import average_precision_score, roc_auc_score
from spacy.training import Example
from spacy.util import registry


def is_binary(labels: Sequence[float]) -> bool:
    return bool(numpy.all(numpy.isin(numpy.asarray(labels, dtype="f"), (0.0, 1.0))))


def best_threshold(scores: Sequence[float], labels: Sequence[float]) -> float:
    """The threshold that maximises accuracy of `score >= threshold` on these pairs.

    Candidates are midpoints between consecutive distinct scores, so the result
    does not sit exactly on one example's score.
    """
    s = numpy.asarray(scores, dtype="f8")
    y = numpy.asarray(labels, dtype="f8") >= 0.5
    if s.size == 0:
        return 0.5
    order = numpy.argsort(-s, kind="stable")
    s_sorted, y_sorted = s[order], y[order]
    # Predicting the top k as positive: correct = positives in top k + negatives below.
    tp = numpy.concatenate([[0], numpy.cumsum(y_sorted)])
    fp = numpy.concatenate([[0], numpy.cumsum(~y_sorted)])
    correct = tp + ((~y).sum() - fp)
    # Only cut between distinct scores.
    valid = numpy.concatenate([[True], s_sorted[1:] != s_sorted[:-1], [True]])
    correct = numpy.where(valid, correct, -1)
    k = int(numpy.argmax(correct))
    if k == 0:
        return float(s_sorted[0] + 1e-6)
    if k == s.size:
        return float(s_sorted[-1])
    return float((s_sorted[k - 1] + s_sorted[k]) / 2)


def pair_metrics(
    scores: Sequence[float], labels: Sequence[float], threshold: float = 0.5
) -> Dict[str, Optional[float]]:
    """acc, p, r, f at `threshold`, plus ROC AUC and average precision (binary labels),
    or Pearson and Spearman correlation (graded labels in [0, 1])."""
    s = numpy.asarray(scores, dtype="f8")
    y = numpy.asarray(labels, dtype="f8")
    if s.shape != y.shape:
        raise ValueError(f"Got {s.size} scores for {y.size} labels.")
    if s.size == 0:
        raise ValueError("Cannot score an empty set of pairs.")
    gold = y >= 0.5
    pred = s >= threshold
    tp = float(numpy.sum(pred & gold))
    p = tp / pred.sum() if pred.sum() else 0.0
    r = tp / gold.sum() if gold.sum() else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    out: Dict[str, Optional[float]] = {
        "acc": float(numpy.mean(pred == gold)),
        "p": p,
        "r": r,
        "f": f,
        "auc": None,
        "ap": None,
    }
    if gold.all() or not gold.any():
        pass  # ranking metrics are undefined with one class
    elif is_binary(y):
        out["auc"] = float(roc_auc_score(gold, s))
        out["ap"] = float(average_precision_score(gold, s))
    if not is_binary(y):
        out["pearson"] = _pearson(s, y)
        out["spearman"] = _pearson(_rank(s), _rank(y))
    return out


def score_pairs(
    examples: Iterable[Example],
    *,
    pair_scores: Callable[[Iterable[Example]], Any],
    threshold: float = 0.5,
    prefix: str = "sim_",
    **kwargs: Any,
) -> Dict[str, Any]:
    """Score pair examples with `pair_scores(examples) -> (scores, labels)`."""
    scores, labels = pair_scores(examples)
    metrics = pair_metrics(scores, labels, threshold)
    result: Dict[str, Any] = {f"{prefix}{k}": v for k, v in metrics.items()}
    result[f"{prefix}threshold"] = float(threshold)
    return result


@registry.scorers("spacy-siamese.pair_scorer.v1")
def make_pair_scorer() -> Callable[..., Dict[str, Any]]:
    return score_pairs


def _rank(x: numpy.ndarray) -> numpy.ndarray:
    from scipy.stats import rankdata

    return rankdata(x)


def _pearson(a: numpy.ndarray, b: numpy.ndarray) -> Optional[float]:
    if a.std() == 0 or b.std() == 0:
        return None
    return float(numpy.corrcoef(a, b)[0, 1])
