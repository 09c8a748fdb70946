from typing import Callable, Optional, Tuple

from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

InT = Tuple[Floats2d, Floats2d]
LAYER_NAME = "hybrid_similarity"


@registry.architectures("spacy-siamese.HybridSimilarity.v1")
def hybrid_similarity(
    *, comparison: Model[InT, Floats2d], lexical_width: int, weight: float = 0.15
) -> Model[InT, Floats2d]:
    """A `HybridEncoder.v1` pipe's similarity, the last `lexical_width` columns being lexical:
    (1 - weight) * comparison(a_learned, b_learned) + weight * clip(a_lex . b_lex, 0, 1).
    In training, the output is the comparison's on the learned part alone."""
    if lexical_width < 1:
        raise ValueError(f"HybridSimilarity: lexical_width must be positive, got {lexical_width}")
    model: Model[InT, Floats2d] = Model(
        LAYER_NAME,
        forward,
        init=init,
        layers=[comparison],
        refs={"comparison": comparison},
        dims={"nI": None, "nO": 1},
        attrs={"lexical_width": lexical_width},
    )
    set_hybrid_weight(model, weight)
    return model


def is_hybrid_similarity(model: Model) -> bool:
    """Whether `model` is a `HybridSimilarity.v1` layer."""
    return model.name == LAYER_NAME


def set_hybrid_weight(model: Model, weight: float) -> None:
    """Mix a `HybridSimilarity.v1` layer's lexical part at `weight`, in [0, 1], from now on."""
    if not 0.0 <= weight <= 1.0:
        raise ValueError(f"HybridSimilarity: weight must be in [0, 1], got {weight}")
    model.attrs["weight"] = float(weight)


def init(model: Model, X: Optional[InT] = None, Y=None) -> None:
    comparison = model.get_ref("comparison")
    n_lex = model.attrs["lexical_width"]
    if X is not None:
        model.set_dim("nI", X[0].shape[1], force=True)
    if model.has_dim("nI") and model.get_dim("nI"):
        if model.get_dim("nI") <= n_lex:
            raise ValueError(
                f"HybridSimilarity: vectors of width {model.get_dim('nI')} have no learned part before the "
                f"{n_lex} lexical columns; use it with spacy-siamese.HybridEncoder.v1 of the same lexical_width"
            )
        if comparison.has_dim("nI") is None:
            comparison.set_dim("nI", model.get_dim("nI") - n_lex)
    learned = None if X is None else (X[0][:, :-n_lex], X[1][:, :-n_lex])
    comparison.initialize(X=learned, Y=Y)


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    xp = model.ops.xp
    A, B = X
    n_lex = model.attrs["lexical_width"]
    width = A.shape[1] - n_lex
    learned = (xp.ascontiguousarray(A[:, :width]), xp.ascontiguousarray(B[:, :width]))
    Y, backprop_learned = model.get_ref("comparison")(learned, is_train)
    if not is_train:
        weight = model.attrs["weight"]
        lexical = xp.clip((A[:, width:] * B[:, width:]).sum(axis=1, keepdims=True), 0.0, 1.0)
        Y = ((1.0 - weight) * Y[:, :1] + weight * lexical).astype(A.dtype)

    def backprop(dY: Floats2d) -> InT:
        dA, dB = backprop_learned(dY)
        zeros = model.ops.alloc2f(len(A), n_lex, dtype=A.dtype)
        return xp.hstack([dA, zeros]), xp.hstack([dB, zeros])

    return Y, backprop
