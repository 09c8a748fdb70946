from math import inf
from typing import Callable, Optional, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .cosine import init

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.DotSimilarity.v1")
def dot_similarity(*, nI: Optional[int] = None) -> Model[InT, Floats2d]:
    """Inner product of paired vectors, (n_pairs, 1), unbounded: the DAE + triplet model's similarity."""
    return Model("dot_similarity", forward, init=init, dims={"nI": nI, "nO": 1}, attrs={"score_range": (-inf, inf)})


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    A, B = X

    def backprop(dY: Floats2d) -> InT:
        return dY * B, dY * A

    return (A * B).sum(axis=1, keepdims=True), backprop
