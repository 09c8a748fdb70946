"""The registered pair scorer used by the pipe's `score` (`spacy train`, `spacy evaluate`)."""

from typing import Any, Callable, Dict, Iterable

from spacy.training import Example
from spacy.util import registry

from .metrics import is_binary, pair_metrics, regression_metrics

__all__ = ["make_pair_scorer", "score_pairs"]


def score_pairs(
    examples: Iterable[Example],
    *,
    pair_scores: Callable[[Iterable[Example]], Any],
    threshold: float = 0.5,
    prefix: str = "sim_",
    **kwargs: Any,
) -> Dict[str, Any]:
    """Score pair examples with `pair_scores(examples) -> (scores, labels)`: acc, p, r, f at
    `threshold`, auc and ap (or pearson, spearman, mse and mae for graded labels), and the
    threshold."""
    scores, labels = pair_scores(examples)
    metrics = pair_metrics(scores, labels, threshold)
    if not is_binary(labels):
        metrics.update(regression_metrics(scores, labels))
    result: Dict[str, Any] = {f"{prefix}{k}": v for k, v in metrics.items()}
    result[f"{prefix}threshold"] = float(threshold)
    return result


@registry.scorers("spacy-siamese.pair_scorer.v1")
def make_pair_scorer() -> Callable[..., Dict[str, Any]]:
    return score_pairs
