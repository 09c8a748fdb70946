from typing import Callable, List, Optional, Sequence, Tuple

from scipy.sparse import csr_matrix
from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model
from thinc.types import Floats2d

from ..layers.ngram_tfidf import ngram_tfidf
from ..layers.projection import projection

INITS = ("cl_lsi", "lsa", "random")


@registry.architectures("spacy-siamese.CrossLingualS2NetEncoder.v1")
def build_crosslingual_s2net_encoder(
    *,
    width: int = 300,
    ngram_sizes: Sequence[int] = (3, 4, 5),
    word_weight: float = 0.5,
    strip_accents: bool = True,
    min_df: int = 2,
    max_vocab: int = 100000,
    sublinear_tf: bool = True,
    init: str = "cl_lsi",
    seed: int = 0,
) -> Model[List[Doc], Floats2d]:
    """Cross-lingual S2Net (Yih et al. 2011, section 4.1): one n-gram TF-IDF vocabulary f of both languages
    (ngram_tfidf.v1) -> A^T f, `width` dims. A starts as CL-LSI ("cl_lsi": the truncated SVD of the training
    pairs' f_a + f_b), LSA ("lsa": of the texts one by one) or at random ("random")."""
    if init not in INITS:
        raise ValueError(f"CrossLingualS2NetEncoder: init must be one of {', '.join(INITS)}, got {init!r}")
    terms = ngram_tfidf(
        ngram_sizes=ngram_sizes,
        word_weight=word_weight,
        strip_accents=strip_accents,
        min_df=min_df,
        max_vocab=max_vocab,
        sublinear_tf=sublinear_tf,
    )
    project = projection(nO=width, init="random" if init == "random" else "lsa", seed=seed)
    return Model(
        "crosslingual_s2net",
        forward,
        init=_init,
        layers=[terms, project],
        dims={"nO": width},
        attrs={"fit_on_corpus": True, "init": init},
    )


def _init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    terms, project = model.layers
    terms.initialize(X=X)
    F = None if X is None else terms.predict(X)
    if F is not None and model.attrs["init"] == "cl_lsi":
        F = pair_rows(F)
    project.initialize(X=F)


def pair_rows(F: csr_matrix) -> csr_matrix:
    """CL-LSI's rows: f_a + f_b of each pair, from the rows of every side A and then every side B."""
    n, odd = divmod(F.shape[0], 2)
    if odd:
        raise ValueError(
            f"CrossLingualS2NetEncoder: init='cl_lsi' reads the initialization docs as pairs (every side A, "
            f"then every side B), got an odd number of docs ({F.shape[0]}). Initialize the pipe on pairs."
        )
    return csr_matrix(F[:n] + F[n:])


def forward(model: Model, X: List[Doc], is_train: bool) -> Tuple[Floats2d, Callable]:
    terms, project = model.layers
    Y, backprop_project = project(terms.predict(X), is_train)  # the terms have no parameters

    def backprop(dY: Floats2d) -> List[Doc]:
        backprop_project(dY)
        return X

    return Y, backprop
