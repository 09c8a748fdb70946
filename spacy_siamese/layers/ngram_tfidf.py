"""Word and character n-gram TF-IDF over one joint vocabulary, for text in several languages."""

import unicodedata
from collections import Counter
from typing import Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy
from scipy.sparse import csr_matrix
from spacy.tokens import Doc, Token
from thinc.api import Model, registry

from .tfidf import TermTable, check_term_settings, most_frequent

WORD = " "  # prefix of a word term (no token holds a space); an n-gram has none ("<ca", "ats>")


class NgramTable(TermTable):
    """A `TermTable` whose terms are strings looked up in a dict (n-grams are never interned)."""

    def __init__(self, terms: Sequence[str] = (), idf: Union[Sequence[float], numpy.ndarray] = ()) -> None:
        super().__init__(terms, idf)
        self.index: Dict[str, int] = {term: col for col, term in enumerate(self.terms)}


@registry.layers("spacy-siamese.ngram_tfidf.v1")
def ngram_tfidf(
    *,
    ngram_sizes: Sequence[int] = (3, 4, 5),
    word_weight: float = 0.5,
    strip_accents: bool = True,
    min_df: int = 2,
    max_vocab: int = 0,
    sublinear_tf: bool = True,
) -> Model[List[Doc], csr_matrix]:
    """TF-IDF vectors (CSR) over lower-cased words and the character n-grams (`ngram_sizes`) of
    each word framed as "<word>", fitted as `tfidf`'s. The word and n-gram parts are l2-normalised
    apart and weighted sqrt(word_weight) and sqrt(1 - word_weight), so their cosines mix in that ratio."""
    check_term_settings("ngram_tfidf", attr="lower", min_df=min_df, max_vocab=max_vocab)
    sizes = [int(n) for n in ngram_sizes]
    if any(n < 1 for n in sizes) or not 0.0 <= word_weight <= 1.0 or (not sizes and word_weight < 1.0):
        raise ValueError(
            "ngram_tfidf: need n-gram sizes >= 1 and 0 <= word_weight <= 1 (1 when there are no n-grams), "
            f"got ngram_sizes={sizes} and word_weight={word_weight}"
        )
    return Model(
        "ngram_tfidf",
        forward,
        init=init,
        dims={"nO": None},
        attrs={
            "table": NgramTable(),
            "ngram_sizes": sizes,
            "word_weight": float(word_weight),
            "strip_accents": strip_accents,
            "min_df": min_df,
            "max_vocab": max_vocab,
            "sublinear_tf": sublinear_tf,
        },
    )


def init(model: Model, X: Optional[List[Doc]] = None, Y=None) -> None:
    if X is None:
        if not len(model.attrs["table"]):
            raise ValueError("ngram_tfidf: initialize with training docs to fit the vocabulary and idf")
        return
    df: Counter[str] = Counter()
    seen = set()
    for doc in X:
        if doc.text not in seen:  # a text in many training pairs counts once
            seen.add(doc.text)
            df.update(set(doc_terms(model, doc)))
    terms = [term for term, count in df.items() if count >= model.attrs["min_df"]]
    kept, counts = most_frequent(model, terms, numpy.asarray([df[term] for term in terms], dtype="float64"), len(seen))
    idf = numpy.log((1.0 + len(seen)) / (1.0 + counts)) + 1.0
    model.attrs["table"] = NgramTable(kept, idf)
    model.set_dim("nO", len(kept), force=True)


def forward(model: Model, X: List[Doc], is_train: bool) -> Tuple[csr_matrix, Callable]:
    table: NgramTable = model.attrs["table"]
    if not len(table):
        raise ValueError("ngram_tfidf: the vocabulary is empty; initialize the model on training docs first")
    is_word = numpy.asarray([term.startswith(WORD) for term in table.terms])
    rows, cols = [], []
    for i, doc in enumerate(X):
        found = [table.index[term] for term in doc_terms(model, doc) if term in table.index]
        cols.extend(found)
        rows.extend([i] * len(found))
    counts = csr_matrix(  # sums the duplicate (row, col) entries of ones: the term counts
        (numpy.ones(len(cols), dtype="float32"), (numpy.asarray(rows, "int64"), numpy.asarray(cols, "int64"))),
        shape=(len(X), len(table)),
    )
    if model.attrs["sublinear_tf"]:
        counts.data = 1.0 + numpy.log(counts.data)
    counts.data *= table.idf[counts.indices]
    weight = model.attrs["word_weight"]
    words = is_word[counts.indices]
    scale = numpy.zeros(counts.data.shape, dtype="float32")
    row_of = numpy.repeat(numpy.arange(len(X)), numpy.diff(counts.indptr))
    for part, share in ((words, weight), (~words, 1.0 - weight)):
        # l2 norm of each row's word (or n-gram) part, then that part's share of the squared norm
        sq = numpy.bincount(row_of[part], weights=counts.data[part] ** 2, minlength=len(X))
        norms = numpy.sqrt(sq)[row_of[part]]
        scale[part] = numpy.sqrt(share) / numpy.where(norms > 0, norms, 1.0)
    counts.data *= scale
    counts.eliminate_zeros()
    return counts, lambda dY: X  # no parameters


def doc_terms(model: Model, doc: Doc) -> List[str]:
    """The doc's terms in token order: each kept word (" " + word), then its n-grams."""
    return [term for token in doc for term in token_terms(model, token)]


def token_terms(model: Model, token: Token) -> List[str]:
    """One token's terms: none for punctuation and spaces, else its word and n-grams."""
    if token.is_punct or token.is_space:
        return []
    word = _strip_accents(token.lower_) if model.attrs["strip_accents"] else token.lower_
    framed = f"<{word}>"
    return [WORD + word] + [framed[i : i + n] for n in model.attrs["ngram_sizes"] for i in range(len(framed) - n + 1)]


def _strip_accents(text: str) -> str:
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
