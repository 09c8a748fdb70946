"""Evaluation of similarity pipelines: baselines, pair, retrieval and duplicate-retrieval
evaluation, reports. The metrics themselves are in `spacy_siamese.metrics`."""

from .baselines import averaged_vectors, fit_tfidf, load_vectors, lsa, tfidf_cosine, tfidf_vectors
from .duplicates import DuplicateQueries, duplicate_queries, evaluate_duplicates, partner_ranks, rank_metrics
from .pair_evaluation import PairEvaluation, evaluate_pairs
from .report import examples_markdown, pairs_markdown, plot_curves, retrieval_markdown, summary_markdown, write_json
from .retrieval import evaluate_retrieval, heldout_documents

__all__ = [
    "averaged_vectors",
    "duplicate_queries",
    "evaluate_duplicates",
    "evaluate_pairs",
    "evaluate_retrieval",
    "examples_markdown",
    "fit_tfidf",
    "heldout_documents",
    "load_vectors",
    "lsa",
    "pairs_markdown",
    "partner_ranks",
    "plot_curves",
    "rank_metrics",
    "retrieval_markdown",
    "summary_markdown",
    "tfidf_cosine",
    "tfidf_vectors",
    "write_json",
    "DuplicateQueries",
    "PairEvaluation",
]
