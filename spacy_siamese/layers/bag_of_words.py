from typing import Callable, List, Optional, Tuple

import numpy
from scipy.sparse import csr_matrix
from spacy.tokens import Doc
from thinc.api import Model, registry

from .tfidf import TermTable, check_term_settings, fit_vocabulary, term_counts


@registry.layers("spacy-siamese.bag_of_words.v1")
def bag_of_words(
    *, attr: str = "lower", drop_stop: bool = True, drop_punct: bool = True, min_df: int = 2, max_vocab: int = 10000
) -> Model[List[Doc], csr_matrix]:
    """Binary bag-of-words vectors (CSR, n_docs x n_terms), terms and vocabulary as `tfidf.v2`'s."""
    check_term_settings("bag_of_words", attr=attr, min_df=min_df, max_vocab=max_vocab)
    return Model("bag_of_words", forward, init=init, dims={"nO": None}, attrs={"table": TermTable(), **locals()})


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    if X is None:
        if not len(model.attrs["table"]):
            raise ValueError("bag_of_words: initialize with training docs to fit the vocabulary")
        return
    terms, _, _ = fit_vocabulary(model, X)
    model.attrs["table"] = TermTable(terms, numpy.ones(len(terms), dtype="float32"))
    model.set_dim("nO", len(terms), force=True)


def forward(model: Model, X: List[Doc], is_train: bool) -> Tuple[csr_matrix, Callable]:
    B = term_counts(model, X)
    B.data[:] = 1.0  # presence, not counts
    return B, lambda dY: X  # no parameters
