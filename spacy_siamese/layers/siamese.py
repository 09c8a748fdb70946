from typing import Callable, List, Optional, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from .hybrid import is_hybrid_similarity
from .no_tokens import encode_docs

InT = Tuple[List[Doc], List[Doc]]
# Pairs the comparison is initialized on (the encoder sees every doc it is given).
INIT_PAIRS = 1000


@registry.architectures("spacy-siamese.Siamese.v1")
def siamese(
    *, encoder: Model[List[Doc], Floats2d], comparison: Model[Tuple[Floats2d, Floats2d], Floats2d]
) -> Model[InT, Floats2d]:
    """Encode both sides of each pair with one shared encoder, in one batch, then compare."""
    check_hybrid(encoder, comparison)
    return Model(
        "siamese",
        forward,
        init=init,
        layers=[encoder, comparison],
        refs={"encoder": encoder, "comparison": comparison},
        dims={"nO": 1},
    )


def check_hybrid(encoder: Model, comparison: Model) -> None:
    """Refuse, for a `HybridSimilarity.v1`, an encoder that is not a `HybridEncoder.v1` of the same `lexical_width`."""
    similarity = next((node for node in comparison.walk() if is_hybrid_similarity(node)), None)
    if similarity is None:
        return
    wanted = similarity.attrs["lexical_width"]
    hybrid = next((node for node in encoder.walk() if node.name == "hybrid_encoder"), None)
    if hybrid is None or hybrid.attrs["lexical_width"] != wanted:
        got = (
            f"a HybridEncoder.v1 with lexical_width = {hybrid.attrs['lexical_width']}" if hybrid else "another encoder"
        )
        raise ValueError(
            f"HybridSimilarity.v1 has lexical_width = {wanted} but the encoder is {got}: use it with "
            "spacy-siamese.HybridEncoder.v1 of the same lexical_width."
        )


def init(model: Model, X: Optional[InT] = None, Y=None) -> None:
    encoder, comparison = model.get_ref("encoder"), model.get_ref("comparison")
    if X is None:
        encoder.initialize()
        if comparison.has_dim("nI") is None:
            comparison.set_dim("nI", encoder.get_dim("nO"))
        comparison.initialize()
        return
    docs_a, docs_b = X
    encoder.initialize(X=docs_a + docs_b)
    n = min(len(docs_a), INIT_PAIRS)
    V, _ = encode_docs(encoder, docs_a[:n] + docs_b[:n], False)
    comparison.initialize(X=(V[:n], V[n:]), Y=None if Y is None else Y[:n])


def forward(model: Model, X: InT, is_train: bool) -> Tuple[Floats2d, Callable]:
    encoder, comparison = model.get_ref("encoder"), model.get_ref("comparison")
    docs_a, docs_b = X
    n = len(docs_a)
    if len(docs_b) != n:
        raise ValueError(f"siamese: got {n} docs on side A but {len(docs_b)} on side B")
    V, backprop_encoder = encode_docs(encoder, docs_a + docs_b, is_train)
    Y, backprop_comparison = comparison((V[:n], V[n:]), is_train)

    def backprop(dY: Floats2d) -> InT:
        dA, dB = backprop_comparison(dY)
        backprop_encoder(model.ops.xp.vstack([dA, dB]))
        return docs_a, docs_b

    return Y, backprop
