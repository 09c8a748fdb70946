from typing import Callable, List, Optional, Tuple

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..layers.hashed_tfidf import hashed_tfidf
from ..layers.tfidf import tfidf

# Docs the learned encoder is initialized on (it only infers its sizes from them).
INIT_SAMPLE = 32


@registry.architectures("spacy-siamese.HybridEncoder.v1")
def build_hybrid_encoder(
    *,
    encoder: Model[List[Doc], Floats2d],
    lexical_width: int = 2048,
    attr: str = "lower",
    drop_stop: bool = False,
    drop_punct: bool = True,
    min_df: int = 2,
    sublinear_tf: bool = True,
) -> Model[List[Doc], Floats2d]:
    """The learned `encoder`'s vector, then the doc's `lexical_width` hashed TF-IDF vector
    (fitted at initialization, no parameters). Pair it with HybridSimilarity.v1."""
    lexical = hashed_tfidf(
        tfidf=tfidf(attr=attr, drop_stop=drop_stop, drop_punct=drop_punct, min_df=min_df, sublinear_tf=sublinear_tf),
        width=lexical_width,
    )
    return Model(
        "hybrid_encoder",
        forward,
        init=init,
        layers=[encoder, lexical],
        refs={"encoder": encoder, "lexical": lexical},
        dims={"nO": None},
        attrs={"fit_on_corpus": True, "lexical_width": lexical_width},
    )


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    encoder, lexical = model.get_ref("encoder"), model.get_ref("lexical")
    encoder.initialize(X=None if X is None else X[:INIT_SAMPLE])
    lexical.initialize(X=X)
    model.set_dim("nO", encoder.get_dim("nO") + lexical.get_dim("nO"), force=True)


def forward(model: Model, X: List[Doc], is_train: bool) -> Tuple[Floats2d, Callable]:
    encoder, lexical = model.get_ref("encoder"), model.get_ref("lexical")
    V, backprop_encoder = encoder(X, is_train)
    width = V.shape[1]

    def backprop(dY: Floats2d) -> List[Doc]:
        return backprop_encoder(model.ops.xp.ascontiguousarray(dY[:, :width]))

    return model.ops.xp.hstack([V, lexical.predict(X).astype(V.dtype)]), backprop
