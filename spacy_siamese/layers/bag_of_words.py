from typing import Callable, List, Optional, Tuple

import numpy
from scipy.sparse import csr_matrix
from spacy.tokens import Doc
from thinc.api import Model, registry

from .tfidf import TERM_ATTRS, TermTable, _term_keys, document_frequencies


@registry.layers("spacy-siamese.bag_of_words.v1")
def bag_of_words(
    *,
    attr: str = "lower",
    drop_stop: bool = True,
    drop_punct: bool = True,
    min_df: int = 2,
    max_vocab: int = 10000,
) -> Model[List[Doc], csr_matrix]:
    """Binary bag-of-words vectors of docs as a scipy CSR matrix (n_docs, n_terms): 1 where a
    term of the vocabulary occurs in the doc, else 0.

    Terms are taken as in `spacy-siamese.tfidf.v2` (the tokens' `attr`, optionally without
    stop words and punctuation). The vocabulary, the `max_vocab` most frequent terms (by
    document frequency, 0 = all) that occur in at least `min_df` distinct training docs, is
    fitted in `initialize` and saved with the model. Unknown terms are ignored; a doc without
    a known term is a zero row.
    """
    if attr not in TERM_ATTRS:
        raise ValueError(f"bag_of_words: attr must be one of {', '.join(TERM_ATTRS)}, got {attr!r}")
    if min_df < 1 or max_vocab < 0:
        raise ValueError(f"bag_of_words: need min_df >= 1 and max_vocab >= 0, got {min_df} and {max_vocab}")
    return Model(
        "bag_of_words",
        forward,
        init=init,
        dims={"nO": None},
        attrs={
            "table": TermTable(),
            "attr": attr,
            "drop_stop": drop_stop,
            "drop_punct": drop_punct,
            "min_df": min_df,
            "max_vocab": max_vocab,
        },
    )


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    if X is None:
        if not len(model.attrs["table"]):
            raise ValueError("bag_of_words: initialize with training docs to fit the vocabulary")
        return
    terms, df, n = document_frequencies(X, lambda doc: _term_keys(model, doc), min_df=model.attrs["min_df"])
    order = sorted(range(len(terms)), key=lambda i: (-df[i], terms[i]))
    if model.attrs["max_vocab"]:
        order = order[: model.attrs["max_vocab"]]
    if not order:
        raise ValueError(f"bag_of_words: no term occurs in at least min_df={model.attrs['min_df']} of the {n} docs")
    model.attrs["table"] = TermTable([terms[i] for i in order], numpy.ones(len(order), dtype="float32"))
    model.set_dim("nO", len(order), force=True)


def forward(model: Model, X: List[Doc], is_train: bool) -> Tuple[csr_matrix, Callable]:
    table = model.attrs["table"]
    if not len(table):
        raise ValueError("bag_of_words: the vocabulary is empty; initialize the model on training docs first")
    keys = [_term_keys(model, doc) for doc in X]
    rows = numpy.repeat(numpy.arange(len(X)), [len(k) for k in keys])
    cols = table.lookup(numpy.concatenate(keys) if keys else numpy.zeros((0,), "uint64"))
    known = cols >= 0
    B = csr_matrix(
        (numpy.ones(int(known.sum()), dtype="float32"), (rows[known], cols[known])), shape=(len(X), len(table))
    )
    B.sum_duplicates()
    B.data[:] = 1.0  # presence, not counts

    def backprop(dY) -> List[Doc]:
        return X  # no parameters

    return B, backprop
