"""Registered [nlp] callbacks."""

from typing import Callable

from spacy.language import Language
from spacy.util import registry
from thinc.api import NumpyOps


@registry.callbacks("spacy-siamese.numpy_blas.v1")
def create_numpy_blas() -> Callable[[Language], Language]:
    """An `after_pipeline_creation` callback: run the matrix products of this pipeline's models
    through numpy's BLAS (OpenBLAS, on every core unless OPENBLAS_NUM_THREADS says otherwise)
    instead of Thinc's default BLIS (one thread). The results are the same up to float rounding."""

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
