"""Registered callbacks: [nlp] `numpy_blas.v1`, [training] `tune_thresholds.v1`."""

from typing import Callable, List, Optional

from spacy.language import Language
from spacy.training import Example
from spacy.util import registry, resolve_dot_names
from thinc.api import NumpyOps


@registry.callbacks("spacy-siamese.numpy_blas.v1")
def create_numpy_blas() -> Callable[[Language], Language]:
    """An `after_pipeline_creation` callback: models' matrix products by numpy's (multi-threaded) BLAS, not BLIS."""

    def use_numpy_blas(nlp: Language) -> Language:
        ops = NumpyOps(use_blis=False)
        for _, pipe in nlp.pipeline:
            model = getattr(pipe, "model", None)
            if model is not None and hasattr(model, "walk"):
                for node in model.walk():
                    if isinstance(node.ops, NumpyOps):
                        node.ops = ops
        return nlp

    return use_numpy_blas


@registry.callbacks("spacy-siamese.tune_thresholds.v1")
def create_tune_thresholds() -> Callable[[Language], Language]:
    """A `[training] before_to_disk` callback: tune and store the thresholds of each pipe with
    `tune_threshold` on the dev corpus before a checkpoint is saved."""
    dev_corpus: Optional[Callable[[Language], List[Example]]] = None

    def tune_thresholds(nlp: Language) -> Language:
        nonlocal dev_corpus
        from .component import SiameseSimilarity

        pipes = [p for _, p in nlp.pipeline if isinstance(p, SiameseSimilarity) and p.cfg["tune_threshold"]]
        pipes = [pipe for pipe in pipes if pipe._trained]  # a frozen pipe keeps its thresholds
        if pipes:
            if dev_corpus is None:
                config = nlp.config.interpolate()
                dev_corpus = resolve_dot_names(config, [config["training"]["dev_corpus"]])[0]
            examples = list(dev_corpus(nlp))
            for eg, doc in zip(examples, nlp.pipe(eg.predicted for eg in examples)):
                eg.predicted = doc  # processed as `nlp.evaluate` does
            for pipe in pipes:
                pipe.tune_thresholds(examples)
        return nlp

    return tune_thresholds
