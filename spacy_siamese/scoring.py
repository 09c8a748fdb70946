"""The registered pair scorers used by the pipe's `score` (`spacy train`, `spacy evaluate`)."""

from typing import Any, Callable, Dict, Iterable, List, Optional

import numpy
from spacy.training import Example
from spacy.util import registry

from .metrics import is_binary, main_metric, pair_metrics
from .pair_examples import dataset_groups

__all__ = ["binary_pairs", "make_dataset_scorer", "make_pair_scorer", "score_datasets", "score_pairs"]
# What gives a scorer the (scores, labels) of the examples: the pipe's `pair_scores` (typed loosely: any arrays).
ScoresOf = Callable[[Iterable[Example]], Any]


def score_pairs(
    examples: Iterable[Example], *, pair_scores: ScoresOf, threshold: float = 0.5, prefix: str = "sim_", **kwargs: Any
) -> Dict[str, Any]:
    """`pair_metrics` of `pair_scores(examples) -> (scores, labels)` at `threshold`, and the threshold."""
    scores, labels = pair_scores(examples)
    result: Dict[str, Any] = {f"{prefix}{k}": v for k, v in pair_metrics(scores, labels, threshold).items()}
    result[f"{prefix}threshold"] = float(threshold)
    return result


def score_datasets(
    examples: Iterable[Example], *, pair_scores: ScoresOf, threshold: float = 0.5, prefix: str = "sim_", **kwargs: Any
) -> Dict[str, Any]:
    """`{prefix}{dataset}_{metric}` of `score_pairs` per dataset, and `{prefix}avg`, the mean of
    each dataset's `main_metric` (untagged examples are one set)."""
    examples = list(examples)
    scores, labels = (numpy.asarray(values) for values in pair_scores(examples))
    groups = dataset_groups(examples)
    if None in groups and len(groups) > 1:
        raise ValueError(
            f"Some pair examples have a dataset tag ({', '.join(sorted(n for n in groups if n))}) and "
            f"{len(groups[None])} have none: read every dataset with spacy-siamese.MultiPairCorpus.v1."
        )
    result: Dict[str, Any] = {}
    mains: List[Optional[float]] = []
    for name, index in groups.items():
        metrics = pair_metrics(scores[index], labels[index], threshold)
        key = prefix if name is None else f"{prefix}{name}_"
        result.update({f"{key}{k}": v for k, v in metrics.items()})
        mains.append(metrics[main_metric(labels[index])])
    defined = [value for value in mains if value is not None]
    result[f"{prefix}avg"] = float(numpy.mean(defined)) if defined else None
    result[f"{prefix}threshold"] = float(threshold)
    return result


def binary_pairs(examples: Iterable[Example], labels: Any) -> numpy.ndarray:
    """A mask of the pairs whose dataset (untagged: one) has only 0/1 labels, which a decision threshold is tuned on."""
    labels = numpy.asarray(labels)
    mask = numpy.zeros(len(labels), dtype=bool)
    for index in dataset_groups(examples).values():
        mask[index] = is_binary(labels[index])
    return mask


@registry.scorers("spacy-siamese.pair_scorer.v1")
def make_pair_scorer() -> Callable[..., Dict[str, Any]]:
    return score_pairs


@registry.scorers("spacy-siamese.dataset_scorer.v1")
def make_dataset_scorer() -> Callable[..., Dict[str, Any]]:
    """The pair metrics of each dataset of a multi-dataset dev corpus and their mean, `sim_avg` (`score_datasets`)."""
    return score_datasets
