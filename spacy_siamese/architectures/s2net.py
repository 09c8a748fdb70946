from typing import List

from spacy.tokens import Doc
from spacy.util import registry
from thinc.api import Model, chain
from thinc.types import Floats2d

from ..layers import projection, tfidf


@registry.architectures("spacy-siamese.S2NetEncoder.v1")
def build_s2net_encoder(
    *,
    width: int = 300,
    attr: str = "lower",
    drop_stop: bool = False,
    drop_punct: bool = True,
    min_df: int = 2,
    max_vocab: int = 0,
    sublinear_tf: bool = True,
    normalize: bool = True,
    init: str = "lsa",
    seed: int = 0,
) -> Model[List[Doc], Floats2d]:
    """S2Net (Yih et al. 2011): TF-IDF term vector f -> A^T f of `width` dims, A starting as the
    LSA projection of the training docs (`init="lsa"`) or at random."""
    model: Model[List[Doc], Floats2d] = chain(
        tfidf(
            attr=attr,
            drop_stop=drop_stop,
            drop_punct=drop_punct,
            min_df=min_df,
            max_vocab=max_vocab,
            sublinear_tf=sublinear_tf,
            normalize=normalize,
        ),
        projection(nO=width, init=init, seed=seed),
    )
    model.set_dim("nO", width)
    model.attrs["fit_on_corpus"] = True
    return model
