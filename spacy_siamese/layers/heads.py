from typing import Tuple

from thinc.api import Model

from .hybrid import is_hybrid_similarity


def predicting_head(comparison: Model, *, training: bool = False) -> Model:
    """The comparison inside `comparison` whose score is the prediction, looking through WithInBatchScores.v1,
    WithAuxiliary.v1, MatryoshkaScores.v1 and TrainCalibrated.v1 (kept with `training=True`: the losses see its
    calibrated score)."""
    while True:
        if comparison.name == "with_in_batch_scores":
            comparison = comparison.get_ref("comparison")
        elif comparison.name == "with_auxiliary":
            comparison = comparison.get_ref("main")
        elif comparison.name == "matryoshka_scores":
            comparison = comparison.get_ref("comparison")
        elif comparison.name == "train_calibrated" and not training:
            comparison = comparison.layers[0]
        else:
            return comparison


def score_range(comparison: Model) -> Tuple[float, float]:
    """The range of the scores a comparison predicts, computed from the model as it is now: that
    of its predicting head for a combinator; for `HybridSimilarity.v1` at weight w over a
    comparison of range [low, high], [(1 - w) low, (1 - w) high + w]; else the layer's declared
    `attrs["score_range"]`: (-1, 1) for a cosine without rescaling, (0, 1) otherwise.
    Combinators and hybrids are never read from their attrs (older saved models carry copies)."""
    head = predicting_head(comparison)
    if head is not comparison:
        return score_range(head)
    if is_hybrid_similarity(comparison):
        low, high = score_range(comparison.get_ref("comparison"))
        weight = float(comparison.attrs["weight"])
        return (1.0 - weight) * low, (1.0 - weight) * high + weight
    declared = comparison.attrs.get("score_range")
    if declared is not None:
        return float(declared[0]), float(declared[1])
    if comparison.name == "cosine_similarity" and not comparison.attrs.get("rescale", False):
        return (-1.0, 1.0)
    return (0.0, 1.0)
