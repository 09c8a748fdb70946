"""Evaluate a trained pipe on document retrieval, with TF-IDF cosine and LSA baselines."""

import random
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple, Union

from spacy.language import Language

from ..component import PIPE_NAME, get_similarity_pipe
from ..corpora import DocRecord, read_documents, sample_pairs, split_documents
from ..corpora.base import MAX_REPORTED
from ..metrics import check_ks, pair_auc, retrieval_metrics
from ..util import timed
from .baselines import find_tfidf, fit_tfidf, lsa, tfidf_settings, tfidf_vectors
from .pair_evaluation import MODEL, TFIDF, describe_pipe, tokenize

LSA = "LSA"
SPLITS = ("dev", "test")
TEST_COLLECTIONS = ("20news", "reuters")


def heldout_documents(
    collection: str,
    path: Union[str, Path],
    *,
    split: str = "dev",
    dev_fraction: float = 0.2,
    seed: int = 0,
    max_docs: int = 0,
    lenient: bool = False,
) -> Tuple[List[DocRecord], List[DocRecord]]:
    """(training documents, held-out documents): "dev" as DocumentPairs.v1 splits, or "test";
    at most `max_docs` held-out documents (0 = all)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    docs = read_documents(collection, path, split="train", lenient=lenient)
    if split == "dev":
        train, held = split_documents(docs, dev_fraction=dev_fraction, seed=seed)
    elif collection not in TEST_COLLECTIONS:
        raise ValueError(f"The {collection} collection has no test part; use split 'dev'.")
    else:
        train, held = docs, read_documents(collection, path, split="test", lenient=lenient)
    if max_docs and len(held) > max_docs:
        held = [held[i] for i in sorted(random.Random(seed).sample(range(len(held)), max_docs))]
    return train, held


def evaluate_retrieval(
    nlp: Language,
    train_docs: Sequence[DocRecord],
    heldout: Sequence[DocRecord],
    *,
    baselines: bool = False,
    ks: Sequence[int] = (1, 10),
    n_eval_pairs: int = 4000,
    seed: int = 0,
    pipe_name: str = PIPE_NAME,
    progress: bool = False,
) -> Dict[str, Any]:
    """Each held-out document as a query against the others (relevant: a shared label), ranked
    by the pipe's cosine, and with `baselines` by TF-IDF and LSA; pair AUC on `n_eval_pairs`."""
    heldout, copies = distinct_documents(heldout)
    if len(heldout) < 2:
        raise ValueError(f"Need at least 2 held-out documents with different texts, got {len(heldout)}.")
    check_ks(ks)  # before the documents are encoded
    pipe = get_similarity_pipe(nlp, pipe_name)
    labels = [doc.labels for doc in heldout]
    pairs = sample_pairs(heldout, n_pairs=n_eval_pairs, seed=seed) if n_eval_pairs else []
    held = tokenize(nlp, [doc.text for doc in heldout], progress, "tokenizing held-out documents", "doc")
    timing: Dict[str, float] = {}
    results: Dict[str, Dict[str, Any]] = {}
    with timed(timing, "model_s"):
        vectors = pipe.vectors(held)
        results[MODEL] = {**_metrics(vectors, labels, pairs, ks), "width": int(vectors.shape[1])}
    report: Dict[str, Any] = {
        "task": "retrieval",
        "n_train_docs": len(train_docs),
        "n_heldout_docs": len(heldout),
        "n_eval_pairs": len(pairs),
        "ks": list(ks),
        "model": describe_pipe(nlp, pipe),
    }
    if copies:
        report["repeated_texts"] = {"n_dropped": len(copies), "ids": copies[:MAX_REPORTED]}
    if baselines:
        with timed(timing, "tfidf_s"):
            train = tokenize(nlp, [doc.text for doc in train_docs], progress, "tokenizing training documents", "doc")
            featuriser = find_tfidf(pipe.model)
            if featuriser is not None:
                source = "the pipe's own featuriser"
            else:
                featuriser = fit_tfidf(train)
                source = f"the `tfidf` layer fitted on the {len(train_docs):,} training documents"
            X = tfidf_vectors(featuriser, held)
            results[TFIDF] = _metrics(X, labels, pairs, ks)
        with timed(timing, "lsa_s"):
            lsa_vectors = lsa(tfidf_vectors(featuriser, train), X, width=int(vectors.shape[1]), seed=seed)
            results[LSA] = {**_metrics(lsa_vectors, labels, pairs, ks), "width": int(lsa_vectors.shape[1])}
        report["tfidf"] = {"source": source, **tfidf_settings(featuriser)}
    report["results"] = results
    report["timing"] = {k: round(v, 3) for k, v in timing.items()}
    return report


def distinct_documents(docs: Sequence[DocRecord]) -> Tuple[List[DocRecord], List[str]]:
    """The documents with distinct texts, in order, and the ids of the dropped copies: a later copy
    of a text adds its labels to the first (a copy would rank first for it, relevant or not)."""
    kept: Dict[str, DocRecord] = {}
    copies = []
    for doc in docs:
        if doc.text in kept:
            first = kept[doc.text]
            kept[doc.text] = first._replace(labels=tuple(dict.fromkeys(first.labels + doc.labels)))
            copies.append(doc.id)
        else:
            kept[doc.text] = doc
    return list(kept.values()), copies


def _metrics(vectors: Any, labels: Sequence[Sequence[str]], pairs: Sequence[Any], ks: Sequence[int]) -> Dict[str, Any]:
    return {**retrieval_metrics(vectors, labels, ks=ks), "auc": pair_auc(vectors, pairs) if pairs else None}
