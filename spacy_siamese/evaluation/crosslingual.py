"""Cross-lingual retrieval (Yih et al. 2011, 4.1): each text queries the other language, its
translation the one answer; acc@1 and MRR for the pipe, TF-IDF, CL-LSI and OPCA."""

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, cast

import numpy
import scipy.linalg
from scipy.sparse import csr_matrix
from spacy.language import Language
from thinc.api import Model

from ..component import PIPE_NAME, get_similarity_pipe
from ..corpora.parallel import ParallelPair, by_group
from ..metrics import unit_rows
from ..util import timed
from .baselines import find_tfidf, fit_tfidf, svd_basis
from .pair_evaluation import MODEL, describe_pipe
from .report import markdown_table

WORD_TFIDF = "TF-IDF cosine (words)"
JOINT_TFIDF = "TF-IDF cosine (words + n-grams)"
CL_LSI = "CL-LSI"
OPCA = "OPCA"
OPCA_RIDGE = 1e-3  # added to the pair differences' covariance, relative to its mean eigenvalue
Ranker = Callable[[List[str], List[str]], numpy.ndarray]  # texts_a, texts_b -> their score matrix


def translation_metrics(
    scores: numpy.ndarray, texts_a: Optional[Sequence[str]] = None, texts_b: Optional[Sequence[str]] = None
) -> Dict[str, float]:
    """acc@1 and MRR of a square score matrix whose row i's answer is column i, by rows ("a_b"),
    columns ("b_a") and both. Ties count against the answer; given the texts, a copy of the
    query's or the answer's text is one more right answer."""
    scores = numpy.asarray(scores, dtype="f8")
    if scores.ndim != 2 or scores.shape[0] != scores.shape[1] or not len(scores):
        raise ValueError(f"translation_metrics takes a non-empty square score matrix, got shape {scores.shape}.")
    right = numpy.eye(len(scores), dtype=bool)
    for texts in (texts_a, texts_b):
        if texts is not None:
            codes = numpy.unique(numpy.asarray(texts, dtype=object), return_inverse=True)[1]
            right |= codes[:, None] == codes[None, :]
    out: Dict[str, float] = {}
    for name, S in (("a_b", scores), ("b_a", scores.T)):
        answer = numpy.where(right, S, -numpy.inf).max(axis=1)
        ranks = 1 + ((S >= answer[:, None]) & ~right).sum(axis=1)  # rank 1: no wrong text scores as high
        out[f"acc@1_{name}"] = float((ranks == 1).mean())
        out[f"mrr_{name}"] = float((1.0 / ranks).mean())
    out["acc@1"] = (out["acc@1_a_b"] + out["acc@1_b_a"]) / 2
    out["mrr"] = (out["mrr_a_b"] + out["mrr_b_a"]) / 2
    return out


def cosine_matrix(A: Any, B: Any) -> numpy.ndarray:
    """Cosines of every row of A against every row of B (dense or sparse; a zero row scores 0)."""
    if isinstance(A, csr_matrix) or hasattr(A, "tocsr"):
        return numpy.asarray(cast(csr_matrix, unit_rows(A) @ unit_rows(B).T).toarray(), dtype="f8")
    A, B = (numpy.asarray(M, dtype="f8") for M in (A, B))
    A, B = (M / numpy.maximum(numpy.linalg.norm(M, axis=1, keepdims=True), 1e-12) for M in (A, B))
    return A @ B.T


def cl_lsi_and_opca(
    F_a: csr_matrix, F_b: csr_matrix, *, width: int, opca: bool = True, seed: int = 0
) -> Dict[str, numpy.ndarray]:
    """Projections (n_terms, width) fitted on training pairs' term rows F_a, F_b: CL-LSI, the top
    `width` right singular vectors of the distinct rows f_a + f_b; with `opca`, OPCA (Platt et al.
    2010) within their span: the w maximising w^T C w / w^T (D + ridge) w, C the covariance of the
    texts' projections and D the mean squared difference of a pair's two projections."""
    basis = svd_basis(F_a + F_b, width=width, seed=seed, what="CL-LSI")
    out = {CL_LSI: basis}
    if opca:
        Xa, Xb = numpy.asarray(F_a @ basis), numpy.asarray(F_b @ basis)
        C = numpy.cov(numpy.vstack([Xa, Xb]), rowvar=False)
        diff = Xa - Xb
        D = diff.T @ diff / len(diff)
        D += OPCA_RIDGE * numpy.trace(D) / len(D) * numpy.eye(len(D))
        _, vecs = scipy.linalg.eigh(C, D)  # ascending eigenvalues
        out[OPCA] = basis @ vecs[:, ::-1]
    return out


def evaluate_crosslingual(
    nlp: Language,
    train: Sequence[ParallelPair],
    dev: Sequence[ParallelPair],
    *,
    baselines: bool = True,
    opca: bool = True,
    seed: int = 0,
    pipe_name: str = PIPE_NAME,
) -> Dict[str, Any]:
    """Each dev group ranked by the pipe and, with `baselines`, by TF-IDF, the pipe's TF-IDF,
    CL-LSI and OPCA, fitted on the training translations (`translation_metrics`)."""
    pipe = get_similarity_pipe(nlp, pipe_name, initialized=True)
    wrong = [p.line for p in dev if p.label < 1.0]
    if wrong:
        raise ValueError(f"Dev pairs must be translations (label 1); the pairs of lines {wrong[:5]} are not.")
    train = [p for p in train if p.label >= 1.0]
    groups = by_group(dev)
    if not groups:
        raise ValueError("No dev pairs to evaluate.")
    sizes = {
        name: min(len({p.text_a for p in pairs}), len({p.text_b for p in pairs})) for name, pairs in groups.items()
    }
    if any(size < 2 for size in sizes.values()):
        raise ValueError(f"Every dev group needs at least 2 different texts in each language, got {sizes}.")
    width = int(pipe.encoder.get_dim("nO"))
    timing: Dict[str, float] = {}
    methods: Dict[str, Ranker] = {MODEL: lambda a, b: pipe.similarity_matrix(a, b).astype("f8")}
    if baselines:
        with timed(timing, "fit_baselines_s"):
            methods.update(_baselines(nlp, pipe.encoder, train, width=width, opca=opca, seed=seed))
    results: Dict[str, Dict[str, Any]] = {}
    for group, pairs in groups.items():
        texts_a, texts_b = [p.text_a for p in pairs], [p.text_b for p in pairs]
        results[group] = {"n": len(pairs), "results": {}}
        for method, scores in methods.items():
            with timed(timing, f"{group}/{method}_s"):
                results[group]["results"][method] = translation_metrics(scores(texts_a, texts_b), texts_a, texts_b)
    return {
        "task": "crosslingual",
        "n_train_pairs": len(train),
        "width": width,
        "model": describe_pipe(nlp, pipe),
        "groups": results,
        "timing": {k: round(v, 3) for k, v in timing.items()},
    }


def _baselines(
    nlp: Language, encoder: Model, train: Sequence[ParallelPair], *, width: int, opca: bool, seed: int
) -> Dict[str, Ranker]:
    terms = find_tfidf(encoder, "ngram_tfidf")  # a cross-lingual S2Net's
    docs_a = [nlp.make_doc(p.text_a) for p in train]
    docs_b = [nlp.make_doc(p.text_b) for p in train]
    words = fit_tfidf(docs_a + docs_b)

    def featurised(layer: Model, project: Optional[numpy.ndarray] = None) -> Ranker:
        def scores(texts_a: List[str], texts_b: List[str]) -> numpy.ndarray:
            rows = [layer.predict([nlp.make_doc(t) for t in texts]) for texts in (texts_a, texts_b)]
            return cosine_matrix(*(rows if project is None else [numpy.asarray(r @ project) for r in rows]))

        return scores

    methods = {WORD_TFIDF: featurised(words)}
    if terms is not None:
        methods[JOINT_TFIDF] = featurised(terms)
        fitted = cl_lsi_and_opca(terms.predict(docs_a), terms.predict(docs_b), width=width, opca=opca, seed=seed)
        methods.update({name: featurised(terms, W) for name, W in fitted.items()})
    return methods


def crosslingual_markdown(report: Mapping[str, Any]) -> str:
    """One table per dev group: acc@1 and MRR of each method in both directions and their mean."""
    a, b = report.get("langs", ["a", "b"])
    header = ["method", f"acc@1 {a}->{b}", f"acc@1 {b}->{a}", "acc@1", f"MRR {a}->{b}", f"MRR {b}->{a}", "MRR"]
    keys = ["acc@1_a_b", "acc@1_b_a", "acc@1", "mrr_a_b", "mrr_b_a", "mrr"]
    lines = [f"# Cross-lingual retrieval {report.get('name', '')}".rstrip(), ""]
    for group, block in report["groups"].items():
        rows = [[method] + [f"{metrics[k]:.3f}" for k in keys] for method, metrics in block["results"].items()]
        lines += [f"## {group} ({block['n']:,} pairs)", "", *markdown_table(header, rows), ""]
    return "\n".join(lines)
