"""Post-hoc edits of a trained `siamese_similarity` pipe, no training needed: its decision and
dedupe thresholds tuned on labelled pairs, and a hybrid's lexical weight."""

from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, Protocol, Tuple

import numpy
from spacy.training import Example
from thinc.api import Model

from .layers.heads import predicting_head
from .layers.hybrid import is_hybrid_similarity, set_hybrid_weight
from .metrics import best_threshold, is_binary, precision_threshold
from .validation import DEDUPE_PRECISION, check_settings

HYBRID_ARCHITECTURE = "spacy-siamese.HybridSimilarity.v1"
# A function giving labelled pair examples' (scores, labels), as the pipe's `pair_scores` does.
PairScores = Callable[[List[Example]], Tuple[numpy.ndarray, numpy.ndarray]]


class TunablePipe(Protocol):
    """What the edits need of a pipe: its settings, its model and its score range."""

    name: str
    cfg: Dict[str, Any]
    model: Model

    @property
    def score_range(self) -> Tuple[float, float]: ...

    def mark_changed(self) -> None: ...


def hybrid_head(pipe: TunablePipe) -> Model:
    """The pipe's `HybridSimilarity.v1` layer, or a ValueError naming its similarity."""
    head = predicting_head(pipe.model.get_ref("comparison"))
    if not is_hybrid_similarity(head):
        raise ValueError(
            f"The '{pipe.name}' pipe's similarity is {head.name}, not {HYBRID_ARCHITECTURE}: it has no lexical weight."
        )
    return head


def lexical_weight(pipe: TunablePipe) -> Optional[float]:
    """The weight of a `HybridSimilarity.v1` pipe's lexical part in its scores (else None)."""
    head = predicting_head(pipe.model.get_ref("comparison"))
    return float(head.attrs["weight"]) if is_hybrid_similarity(head) else None


@contextmanager
def keeping_lexical_weight(pipe: TunablePipe) -> Iterator[None]:
    """Keep a hybrid's lexical weight, a setting of the pipe's config, while the block loads weights
    saved at another weight (Thinc restores the saved one with them)."""
    weight = lexical_weight(pipe)
    yield
    if weight is not None and weight != lexical_weight(pipe):
        mix_lexical_part(pipe, weight)


def mix_lexical_part(pipe: TunablePipe, weight: float) -> None:
    """Mix the hybrid's lexical part at `weight`; the thresholds are clipped to the new score range,
    and the pipe gets a new model id (it now scores otherwise)."""
    set_hybrid_weight(hybrid_head(pipe), weight)
    for key in ("threshold", "dedupe_threshold"):
        if pipe.cfg.get(key) is not None:
            pipe.cfg[key] = _clip(pipe, float(pipe.cfg[key]))
    pipe.mark_changed()


def hybrid_config_block(config: Dict[str, Any], *, name: str) -> Dict[str, Any]:
    """The one `HybridSimilarity.v1` block of a pipe's config, where its weight is written."""
    blocks = [block for block in _config_blocks(config) if block.get("@architectures") == HYBRID_ARCHITECTURE]
    if len(blocks) != 1:
        raise ValueError(
            f"The '{name}' pipe's config has {len(blocks)} {HYBRID_ARCHITECTURE} blocks, not one: it cannot be set."
        )
    return blocks[0]


def tuned_thresholds(pipe: TunablePipe, scores: numpy.ndarray, labels: numpy.ndarray) -> Tuple[float, Optional[float]]:
    """The accuracy-maximising decision threshold and the dedupe threshold (the lowest whose precision
    on the pairs is `dedupe_precision`, None if none is) of 0/1 pairs' scores; nothing is set."""
    dedupe = precision_threshold(scores, labels, float(pipe.cfg.get("dedupe_precision", DEDUPE_PRECISION)))
    threshold = _clip(pipe, round(best_threshold(scores, labels), 6))
    return threshold, None if dedupe is None else _clip(pipe, round(dedupe, 6))


def calibrate_dedupe_threshold(
    pipe: TunablePipe, pair_scores: PairScores, examples: List[Example], *, precision: Optional[float] = None
) -> None:
    """Set `dedupe_threshold` from labelled pairs scored by `pair_scores` (see the pipe's method)."""
    cfg = pipe.cfg if precision is None else {**pipe.cfg, "dedupe_precision": float(precision)}
    check_settings(cfg, where=f"The '{pipe.name}' pipe's settings", scores=pipe.score_range, saved=False)
    scores, labels = pair_scores(examples)
    if not is_binary(labels):
        raise ValueError("The dedupe threshold is calibrated on pairs labelled 0 or 1 (duplicates or not).")
    if len(set(numpy.asarray(labels).tolist())) < 2:  # any threshold up to the lowest score is "right"
        raise ValueError(
            f"Thresholds are tuned on duplicates and non-duplicates: all {len(labels):,} pairs are one kind"
        )
    pipe.cfg["dedupe_precision"] = cfg["dedupe_precision"]
    pipe.cfg["dedupe_threshold"] = tuned_thresholds(pipe, scores, labels)[1]


def _clip(pipe: TunablePipe, value: float) -> float:
    low, high = pipe.score_range
    return min(max(value, low), high)


def _config_blocks(block: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    """`block` and every block nested in it."""
    yield block
    for value in block.values():
        if isinstance(value, dict):
            yield from _config_blocks(value)
