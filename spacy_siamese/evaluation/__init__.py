"""Evaluation of similarity pipelines: metrics, baselines, pair and retrieval evaluation, reports."""

from .baselines import averaged_vectors, fit_tfidf, load_vectors, lsa, tfidf_cosine, tfidf_vectors
from .duplicates import DuplicateQueries, duplicate_queries, evaluate_duplicates, partner_ranks, rank_metrics
from .metrics import (
    best_threshold,
    correlation,
    is_binary,
    pair_auc,
    pair_metrics,
    regression_metrics,
    retrieval_metrics,
)
from .pairs import PairEvaluation, evaluate_pairs
from .report import examples_markdown, pairs_markdown, plot_curves, retrieval_markdown, summary_markdown, write_json
from .retrieval import evaluate_retrieval, heldout_documents

__all__ = [
    "averaged_vectors",
    "best_threshold",
    "correlation",
    "duplicate_queries",
    "evaluate_duplicates",
    "evaluate_pairs",
    "evaluate_retrieval",
    "examples_markdown",
    "fit_tfidf",
    "heldout_documents",
    "is_binary",
    "load_vectors",
    "lsa",
    "pair_auc",
    "pair_metrics",
    "pairs_markdown",
    "partner_ranks",
    "plot_curves",
    "rank_metrics",
    "regression_metrics",
    "retrieval_markdown",
    "retrieval_metrics",
    "summary_markdown",
    "tfidf_cosine",
    "tfidf_vectors",
    "write_json",
    "DuplicateQueries",
    "PairEvaluation",
]
