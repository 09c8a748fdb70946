from typing import Callable, Optional, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .cosine import init

InT = Tuple[Floats2d, Floats2d]


@registry.architectures("spacy-siamese.DotSimilarity.v1")
def dot_similarity(*, nI: Optional[int] = None) -> Model[InT, Floats2d]:
    """Inner product of paired vectors, shape (n_pairs, 1): the similarity of the DAE + triplet
    model (Tajima et al. 2016). Unbounded: its score range is (-inf, inf), and a zero vector
    scores 0 against everything."""
    return Model(
        "dot_similarity",
        forward,
        init=init,
        dims={"nI": nI, "nO": 1},
        attrs={"score_range": (float("-inf"), float("inf"))},
    )


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    A, B = X

    def backprop(dY: Floats2d) -> InT:
        return dY * B, dY * A

    return (A * B).sum(axis=1, keepdims=True), backprop
