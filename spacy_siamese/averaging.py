"""Steps on a trained pipeline and dev pairs: average the weights of pipelines of one architecture
(a "model soup", Wortsman et al. 2022), and calibrate a pipeline's thresholds and lexical weight."""

import math
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy
import srsly
from spacy.language import Language
from spacy.training import Example
from thinc.api import Model

from .component import SiameseSimilarity, get_similarity_pipe, set_lexical_weight
from .identity import reads_static_vectors
from .layers.hybrid import LAYER_NAME as HYBRID_LAYER
from .metrics import is_binary
from .pair_examples import make_pair_example

if TYPE_CHECKING:
    from .corpora import PairRecord


def average_pipelines(nlps: Sequence[Language], *, weights: Optional[Sequence[float]] = None) -> Language:
    """The first pipeline, each pipe's weights set to the weighted mean over all of them (same
    layers, sizes, fitted state and static vectors, else ValueError); the rest stays the first's."""
    mix = normalized_weights(weights, len(nlps))
    names = [nlp.pipe_names for nlp in nlps]
    for i, other in enumerate(names[1:], start=2):
        if other != names[0]:
            raise ValueError(
                f"Pipeline {i} has the pipes {other}, pipeline 1 {names[0]}: average one kind of pipeline."
            )
    averaged = []  # every pipe is checked before any is changed: an error leaves the pipelines as they were
    for name in names[0]:
        pipes = [nlp.get_pipe(name) for nlp in nlps]
        models: List[Model] = [m for m in (getattr(pipe, "model", None) for pipe in pipes) if isinstance(m, Model)]
        if len(models) < len(pipes):
            continue  # a pipe without weights, e.g. a rule-based one
        for i, (nlp, pipe) in enumerate(zip(nlps, pipes), start=1):
            if isinstance(pipe, SiameseSimilarity):
                try:
                    get_similarity_pipe(nlp, name, initialized=True)
                except ValueError as err:
                    raise ValueError(f"Pipeline {i}: {err}") from None
        if reads_static_vectors(models[0]):
            _check_same_vectors(nlps, name)
        averaged.append((pipes[0], models[0], _average_dicts([model.to_dict() for model in models], mix, name)))
    for pipe, model, msg in averaged:
        model.from_dict(msg)
        if isinstance(pipe, SiameseSimilarity):
            pipe.mark_changed()  # a new model_id: vectors of the first pipeline's weights are not these
    return nlps[0]


def average_on_dev(
    nlps: Sequence[Language], dev: Sequence["PairRecord"], *, weights: Optional[Sequence[float]] = None
) -> Tuple[Language, List[Dict[str, Any]]]:
    """Average the pipelines, tuning the average's thresholds on `dev`; the dev figures of each and of the average."""
    examples = [[make_pair_example(nlp, r.text1, r.text2, r.label) for r in dev] for nlp in nlps]
    rows = [get_similarity_pipe(nlp, initialized=True).tune_thresholds(egs) for nlp, egs in zip(nlps, examples)]
    averaged = average_pipelines(nlps, weights=weights)  # the first pipeline, whose examples serve again
    rows.append(get_similarity_pipe(averaged, initialized=True).tune_thresholds(examples[0]))
    set_performance(averaged, rows[-1])
    return averaged, rows


def normalized_weights(weights: Optional[Sequence[float]], n: int) -> List[float]:
    """The weights of `n` pipelines to average, summing to 1 (default: equal), or a ValueError."""
    if n < 2:
        raise ValueError(f"Averaging needs at least two pipelines, got {n}.")
    if weights is None:
        return [1.0 / n] * n
    values = [float(w) for w in weights]
    if len(values) != n:
        raise ValueError(f"{len(values)} weights for {n} pipelines: give one weight a pipeline.")
    if not all(math.isfinite(w) and w >= 0 for w in values) or sum(values) <= 0:
        raise ValueError(f"The weights must be finite, at least 0 and not all 0, got {values}.")
    total = sum(values)
    return [w / total for w in values]


def _check_same_vectors(nlps: Sequence[Language], name: str) -> None:
    first = nlps[0].vocab.vectors
    for i, nlp in enumerate(nlps[1:], start=2):
        vectors = nlp.vocab.vectors
        if vectors.shape != first.shape or not numpy.array_equal(vectors.data, first.data):
            raise ValueError(
                f"The '{name}' pipe reads static vectors, and pipeline {i}'s (shape {vectors.shape}) are not "
                f"pipeline 1's (shape {first.shape}): its weights were trained on other inputs."
            )


def _average_dicts(msgs: List[Dict], mix: List[float], name: str) -> Dict:
    """The first of the models' `Model.to_dict` messages with each parameter the weighted mean."""
    first = msgs[0]
    for i, msg in enumerate(msgs[1:], start=2):
        where = f"The '{name}' pipe of pipeline {i}"
        if msg["nodes"] != first["nodes"]:
            raise ValueError(f"{where} has other layers or sizes than pipeline 1's: average one architecture.")
        if any(msg["shims"]) or any(first["shims"]):
            raise ValueError(f"{where} wraps another framework's model (a Thinc shim), whose weights are not averaged.")
        for node, mine, theirs in zip(first["nodes"], first["attrs"], msg["attrs"]):
            differ = sorted(
                k for k in {*mine, *theirs} if srsly.msgpack_dumps(mine.get(k)) != srsly.msgpack_dumps(theirs.get(k))
            )
            if node["name"] == HYBRID_LAYER and "weight" in differ:
                weights = [srsly.msgpack_loads(attrs["weight"]) for attrs in (theirs, mine)]
                raise ValueError(
                    f"{where} mixes its lexical part at weight {weights[0]:g}, pipeline 1's at {weights[1]:g}: set "
                    "one weight first (spacy_siamese.set_lexical_weight or calibrate --lexical-weight)."
                )
            if differ:
                raise ValueError(
                    f"{where} differs from pipeline 1's in the fitted state of its '{node['name']}' layer "
                    f"({', '.join(differ)}), e.g. a TF-IDF fitted on other texts: average pipelines "
                    "trained further from one pipeline."
                )
        for node, mine, theirs in zip(first["nodes"], first["params"], msg["params"]):
            if _shapes(mine) != _shapes(theirs):
                raise ValueError(f"{where} has other parameters in its '{node['name']}' layer than pipeline 1's.")
    params = [
        {key: None if v is None else _mean([p[key] for p in layer], mix, v.dtype) for key, v in layer[0].items()}
        for layer in zip(*(msg["params"] for msg in msgs))
    ]
    return {**first, "params": params}


def _shapes(params: Dict) -> Dict:
    return {key: None if value is None else tuple(value.shape) for key, value in params.items()}


def _mean(arrays: List, mix: List[float], dtype: Any) -> numpy.ndarray:
    """The weighted mean, summed in float64, as `dtype`."""
    return sum(w * numpy.asarray(a, dtype="f8") for w, a in zip(mix, arrays)).astype(dtype)  # type: ignore[union-attr]


def set_performance(nlp: Any, scores: Dict[str, Any]) -> None:
    """Write the pipe's figures to the meta's `performance`, as `spacy train` does for its dev scores."""
    nlp.meta["performance"] = {key: value for key, value in scores.items() if key.startswith("sim_")}


def calibrate_pipeline(
    nlp: Any, examples: List[Example], *, precision: Optional[float] = None, lexical_weight: Optional[float] = None
) -> Dict[str, Any]:
    """Tune a trained pipeline's thresholds on labelled pair examples, as tune_thresholds.v1
    does; with `lexical_weight`, first set a hybrid pipe's weight (graded pairs: the weight only).
    Returns "dedupe_threshold" and, with a weight, the figures "before" and "after"."""
    pipe = get_similarity_pipe(nlp, initialized=True)
    vectors_a, vectors_b, labels = pipe.pair_vectors(examples)  # encoded once: the weight only mixes them

    def pair_scores(_: List[Example]) -> Tuple[numpy.ndarray, numpy.ndarray]:
        return pipe.compare(vectors_a, vectors_b), labels  # at the pipe's lexical weight of the moment

    out: Dict[str, Any] = {}
    if lexical_weight is not None:
        out["before"] = pipe.tune_thresholds(examples, pair_scores=pair_scores)
        set_lexical_weight(nlp, lexical_weight)
        out["after"] = pipe.tune_thresholds(examples, pair_scores=pair_scores)
        set_performance(nlp, out["after"])
    if is_binary(labels):
        out["dedupe_threshold"] = pipe.calibrate_dedupe_threshold(
            examples, precision=precision, pair_scores=pair_scores
        )
        if out["dedupe_threshold"] is not None:
            pipe.tune_thresholds(examples, pair_scores=pair_scores)  # the decision threshold too
    return out
