"""Checks of labels, settings, model sizes and score ranges, with messages that say where."""

import math
import numbers
import re
from typing import Any, Dict, Tuple

import numpy
from thinc.api import Model

ON_UNKNOWN = ("encode", "error")
DEDUPE_PRECISION = 0.9
# How far a comparison may round past its range before it counts as broken rather than rounded.
RANGE_TOLERANCE = 1e-3
# A dataset name of a multi-dataset corpus: it becomes part of metric names (sim_<name>_auc).
DATASET_NAME = re.compile(r"[a-z0-9][a-z0-9_]*")


def check_label(label: Any) -> float:
    """A pair label as a float: a finite number in [0, 1] (bools count as 0 and 1)."""
    if isinstance(label, numbers.Real):
        value = float(label)
        if math.isfinite(value) and 0.0 <= value <= 1.0:
            return value
    raise ValueError(f"A pair label must be a finite number in [0, 1], got {label!r}.")


def check_dataset_name(name: Any) -> str:
    """A dataset name: lower-case letters, digits and underscores, starting with a letter or digit."""
    if isinstance(name, str) and DATASET_NAME.fullmatch(name):
        return name
    raise ValueError(
        f"A dataset name is made of lower-case letters, digits and underscores (it becomes part of "
        f"metric names such as sim_<name>_auc), got {name!r}."
    )


def check_scores(scores: numpy.ndarray, scores_range: Tuple[float, float], name: str) -> numpy.ndarray:
    """Scores clipped to `scores_range`; one not finite, or beyond the range by more than rounding, raises."""
    low, high = scores_range
    if not numpy.isfinite(scores).all():
        raise ValueError(f"The '{name}' comparison gave a similarity that is not finite.")
    if scores.min() < low - RANGE_TOLERANCE or scores.max() > high + RANGE_TOLERANCE:
        raise ValueError(
            f"The '{name}' comparison gave scores in [{scores.min():g}, {scores.max():g}], outside its "
            f"range [{low:g}, {high:g}]; a custom comparison declares its range in attrs['score_range']."
        )
    return numpy.clip(scores, low, high)


def check_settings(cfg: Dict[str, Any], *, where: str, scores: Tuple[float, float], saved: bool) -> None:
    """Raise a ValueError naming `where` and the field for a setting that is not valid.
    `saved` settings must also carry the model id that an initialized pipe writes."""
    low, high = scores
    threshold: Any = cfg.get("threshold")
    if not _is_number(threshold) or not low <= threshold <= high:
        _fail(where, "threshold", f"a number in [{low:g}, {high:g}] (the comparison's score range)", threshold)
    if cfg.get("on_unknown") not in ON_UNKNOWN:
        _fail(where, "on_unknown", f"one of {', '.join(map(repr, ON_UNKNOWN))}", cfg.get("on_unknown"))
    dedupe = cfg.get("dedupe_threshold")
    if dedupe is not None and (not _is_number(dedupe) or not low <= dedupe <= high + 1e-6):
        _fail(where, "dedupe_threshold", f"null or a number in [{low:g}, {high:g}]", dedupe)
    precision = cfg.get("dedupe_precision", DEDUPE_PRECISION)
    if not _is_number(precision) or not 0.0 < precision <= 1.0:
        _fail(where, "dedupe_precision", "a number in (0, 1]", precision)
    if not isinstance(cfg.get("tune_threshold"), bool):
        _fail(where, "tune_threshold", "true or false", cfg.get("tune_threshold"))
    model_id = cfg.get("model_id")
    if saved and model_id is None:  # no field, or null: what an untrained pipe writes
        raise ValueError(
            f"{where}: no 'model_id': the pipe was saved before it was initialized. Train it (spacy train) "
            "or call nlp.initialize(get_examples) before saving it."
        )
    if (saved or model_id is not None) and not (isinstance(model_id, str) and model_id):
        _fail(where, "model_id", "a non-empty string", model_id)


def check_sizes(model: Model, name: str) -> None:
    """Refuse a model with a layer of size 0 (e.g. `width = 0`), which would otherwise fail deep inside Thinc."""
    for node in model.walk():
        for dim in node.dim_names:
            if node.has_dim(dim) is True and node.get_dim(dim) <= 0:
                raise ValueError(
                    f"The '{name}' model's layer '{node.name}' has {dim} = {node.get_dim(dim)}: check the sizes in its "
                    "config (width, rows, proj_width, hidden_width, ...), which must be positive."
                )


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _fail(where: str, field: str, expected: str, value: Any) -> None:
    raise ValueError(f"{where}: field '{field}' must be {expected}, got {value!r}.")
