"""Unsupervised baselines: TF-IDF cosine, LSA and averaged static word vectors."""

import warnings
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Sequence, Union, cast

import numpy
import spacy
from scipy.sparse import csr_matrix
from sklearn.decomposition import TruncatedSVD
from spacy.language import Language
from spacy.tokens import Doc
from thinc.api import Model

from ..layers.tfidf import tfidf
from ..metrics import unit_rows
from ..util import distinct_pair_texts, unique_rows

TFIDF_SETTINGS = ("attr", "drop_stop", "drop_punct", "min_df", "max_vocab", "sublinear_tf", "normalize")


def fit_tfidf(docs: Iterable[Doc], **settings: Any) -> Model:
    """The package's `tfidf` layer (its defaults, or `settings`) fitted on the distinct texts of `docs`."""
    model = tfidf(**settings)
    model.initialize(X=list(docs))
    return model


def find_tfidf(model: Model, name: str = "tfidf") -> Optional[Model]:
    """The first fitted `tfidf` layer (or layer `name`, e.g. "ngram_tfidf") inside `model`, if any."""
    return next(
        (node for node in model.walk() if node.name == name and node.has_dim("nO") and node.get_dim("nO")), None
    )


def tfidf_settings(model: Model) -> Dict[str, Any]:
    """The settings and vocabulary size of a fitted `tfidf` layer, for reports."""
    return {**{key: model.attrs[key] for key in TFIDF_SETTINGS}, "n_terms": int(model.get_dim("nO"))}


def tfidf_vectors(model: Model, docs: Sequence[Doc]) -> csr_matrix:
    """TF-IDF rows of docs under a fitted `tfidf` layer (l2-normalised with its defaults)."""
    return model.predict(list(docs))


def tfidf_cosine(model: Model, docs_a: Sequence[Doc], docs_b: Sequence[Doc]) -> numpy.ndarray:
    """Cosine of the TF-IDF vectors of paired docs (0 for a doc without a known term: a zero vector)."""
    if len(docs_a) != len(docs_b):
        raise ValueError(f"Got {len(docs_a)} docs on side A and {len(docs_b)} on side B.")
    if not len(docs_a):
        return numpy.zeros((0,), dtype="f8")
    A, B = (cast(csr_matrix, unit_rows(tfidf_vectors(model, docs))) for docs in (docs_a, docs_b))
    return numpy.clip(numpy.asarray(A.multiply(B).sum(axis=1), dtype="f8").ravel(), 0.0, 1.0)


def lsa(fit_rows: csr_matrix, rows: csr_matrix, *, width: int, seed: int = 0) -> numpy.ndarray:
    """LSA: `rows` projected on the top `width` right singular vectors of `fit_rows`' distinct rows."""
    return numpy.asarray(rows @ svd_basis(fit_rows, width=width, seed=seed), dtype="f8")


def svd_basis(fit_rows: csr_matrix, *, width: int, seed: int = 0, what: str = "LSA") -> numpy.ndarray:
    """The top `width` (at most) right singular vectors of `fit_rows`' distinct rows, (n_terms, width)."""
    fit_rows = unique_rows(csr_matrix(fit_rows))
    width = min(width, fit_rows.shape[1] - 1, fit_rows.shape[0] - 1)
    if width < 1:
        raise ValueError(f"{what} needs at least 2 distinct rows and 2 terms, got a {fit_rows.shape} matrix.")
    return TruncatedSVD(n_components=width, random_state=seed).fit(fit_rows).components_.T


def load_vectors(name_or_path: Union[str, Path]) -> Language:
    """The tokenizer and static word vectors of a pipeline (a directory or an installed package)."""
    nlp = load_bare(name_or_path)
    if not has_vectors(nlp):
        raise ValueError(f"{name_or_path} has no static word vectors.")
    return nlp


def load_bare(name_or_path: Union[str, Path]) -> Language:
    """A pipeline (a directory or an installed package) with all of its components excluded."""
    if Path(name_or_path).exists():
        name_or_path = Path(name_or_path)
        meta = spacy.util.get_model_meta(name_or_path)
    elif spacy.util.is_package(str(name_or_path)):
        meta = spacy.util.get_model_meta(spacy.util.get_package_path(str(name_or_path)))
    else:
        raise FileNotFoundError(f"{name_or_path}: no such pipeline directory or installed pipeline package.")
    return spacy.load(name_or_path, exclude=list(meta.get("components") or meta.get("pipeline") or []))


def has_vectors(nlp: Language) -> bool:
    return bool(nlp.vocab.vectors.shape[0] and nlp.vocab.vectors.shape[1])


def averaged_vectors(nlp: Language, texts_a: Sequence[str], texts_b: Sequence[str]) -> numpy.ndarray:
    """spaCy's default `Doc.similarity` of paired texts: the cosine of their tokens' mean static vectors."""
    if not has_vectors(nlp):
        raise ValueError("The pipeline has no static word vectors.")
    docs = {text: nlp.make_doc(text) for text in distinct_pair_texts(zip(texts_a, texts_b))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # W008: similarity of an empty vector
        return numpy.asarray([docs[a].similarity(docs[b]) for a, b in zip(texts_a, texts_b)], dtype="f8")
