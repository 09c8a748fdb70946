"""Duplicate retrieval on a pair file (`evaluate-duplicates`): one text of each sampled duplicate
pair queries every other distinct text of the file, and its partner's rank is pessimistic (a tie
with the partner counts as ranked above it)."""

import random
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union, cast

import numpy
import spacy
from scipy.sparse import csr_matrix
from spacy.language import Language

from ..component import PIPE_NAME, get_similarity_pipe
from ..metrics import check_ks, is_binary, partner_rank_values, unit_rows
from ..pairwise import vector_similarity_matrix
from ..search import SimilarityIndex, vector_space
from ..util import distinct_pair_texts, pair_rows, timed
from .baselines import fit_tfidf, tfidf_settings, tfidf_vectors
from .pair_evaluation import COMPARED, MODEL, TFIDF, PairLike, describe_pipe, tokenize
from .uncertainty import check_bootstrap, rank_intervals

# Score rows: given query indices, a (n_queries, n_texts) array of scores against the collection.
ScoreRows = Callable[[numpy.ndarray], numpy.ndarray]
TASK = "duplicate retrieval"  # the task of the report


@dataclass
class DuplicateQueries:
    """The collection (distinct texts) and the sampled queries: `queries[i]` has the one
    relevant text `partners[i]` (indices into `texts`)."""

    texts: List[str]
    queries: numpy.ndarray
    partners: numpy.ndarray


def duplicate_queries(records: Iterable[PairLike], *, n_pairs: int = 1000, seed: int = 0) -> DuplicateQueries:
    """The distinct texts of `records` (first-seen order) and a seeded sample of at most `n_pairs`
    duplicate pairs (label >= 0.5, two different texts, each (text1, text2) once)."""
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be at least 1, got {n_pairs}.")
    records = list(records)
    pairs = [(r.text1, r.text2) for r in records]
    texts = distinct_pair_texts(pairs)
    a, b = pair_rows(texts, pairs)
    duplicate = numpy.asarray([r.label >= 0.5 for r in records], dtype=bool) & (a != b)
    candidates = list(dict.fromkeys(zip(a[duplicate].tolist(), b[duplicate].tolist())))
    if not candidates:
        raise ValueError("No labelled duplicate pair with two different texts.")
    chosen = random.Random(seed).sample(candidates, min(n_pairs, len(candidates)))
    return DuplicateQueries(texts, numpy.asarray([i for i, _ in chosen]), numpy.asarray([j for _, j in chosen]))


def partner_ranks(score_rows: ScoreRows, dq: DuplicateQueries, *, block: int = 64) -> numpy.ndarray:
    """The 1-based rank of each query's partner among all other texts, by `score_rows`."""
    if block < 1:
        raise ValueError(f"block must be at least 1, got {block}.")
    ranks = numpy.zeros(len(dq.queries), dtype="int64")
    for start in range(0, len(dq.queries), block):
        rows = slice(start, start + block)
        q, p = dq.queries[rows], dq.partners[rows]
        S = numpy.asarray(score_rows(q), dtype="f8")
        if S.shape != (len(q), len(dq.texts)):
            raise ValueError(f"score_rows returned shape {S.shape}, expected {(len(q), len(dq.texts))}")
        n = numpy.arange(len(q))
        target = S[n, p].copy()
        S[n, q] = S[n, p] = -numpy.inf  # neither the query itself nor its partner is a candidate
        ranks[rows] = 1 + (S >= target[:, None]).sum(axis=1)
    return ranks


def rank_metrics(ranks: Union[Sequence[int], numpy.ndarray], ks: Sequence[int] = (1, 10)) -> Dict[str, float]:
    """mrr, and for each k mrr@k and recall@k (share of partners in the top k), of 1-based ranks."""
    r = numpy.asarray(ranks, dtype="f8")
    at_k = {name: float(values.mean()) for name, values in partner_rank_values(r, ks).items()}
    return {"mrr": float((1.0 / r).mean()), **at_k, "median_rank": float(numpy.median(r)), "n_queries": len(r)}


def pipe_score_rows(
    nlp: Language, texts: Sequence[str], *, pipe_name: str = PIPE_NAME, vectors: Optional[numpy.ndarray] = None
) -> ScoreRows:
    """Score rows by the pipe's similarity of the learned vectors (`vectors`, else encoded): the
    score `doc.similarity` gives, or a hybrid's by matrix products (equal up to rounding)."""
    pipe = get_similarity_pipe(nlp, pipe_name)
    V = pipe_vectors(nlp, texts, pipe_name=pipe_name) if vectors is None else vectors
    space = vector_space(pipe.comparison)
    if space.scores_exactly:
        return lambda queries: space.scores(V[queries], V)
    return lambda queries: vector_similarity_matrix(pipe.compare, V[queries], V)


def pipe_vectors(
    nlp: Language, texts: Sequence[str], *, pipe_name: str = PIPE_NAME, progress: bool = False
) -> numpy.ndarray:
    """The pipe's learned vectors of texts (tokenized by `nlp`)."""
    return get_similarity_pipe(nlp, pipe_name).vectors(tokenize(nlp, texts, progress))


def index_metrics(
    nlp: Language, dq: DuplicateQueries, vectors: numpy.ndarray, *, k: int = 10, pipe_name: str = PIPE_NAME
) -> Dict[str, float]:
    """mrr@k and recall@k as a user of the index gets them: a `SimilarityIndex` (flat candidates)
    of the collection's `vectors` searched with each query for its k best other texts (ties by id)."""
    check_ks((k,), name="k")
    index = SimilarityIndex(nlp, vectors, pipe_name=pipe_name)
    ids, _ = index.search_vectors(vectors[dq.queries], k, exclude=dq.queries)
    found = ids == dq.partners[:, None]
    ranks = numpy.where(found.any(axis=1), found.argmax(axis=1) + 1, k + 1)  # k + 1: not in the top k
    return {name: float(values.mean()) for name, values in partner_rank_values(ranks, (k,)).items()}


def tfidf_score_rows(nlp: Language, texts: Sequence[str], fit_texts: Sequence[str]) -> ScoreRows:
    """Score rows by the cosine of TF-IDF vectors (`fit_tfidf`'s defaults) fitted on `fit_texts`, tokenized by `nlp`."""
    model = fit_tfidf(nlp.make_doc(t) for t in dict.fromkeys(fit_texts))
    X = cast(csr_matrix, unit_rows(tfidf_vectors(model, [nlp.make_doc(t) for t in texts])))
    XT = X.T.tocsc()

    def score_rows(queries: numpy.ndarray) -> numpy.ndarray:
        return numpy.asarray((X[queries] @ XT).toarray())

    score_rows.settings = tfidf_settings(model)  # type: ignore[attr-defined]
    return score_rows


def duplicate_records(records: List[Any], label_threshold: Optional[float], source: Any) -> List[Any]:
    """The pair records labelled 1 (a duplicate) or 0, graded labels split at `label_threshold`,
    which they need: no cut of a graded scale is silently taken for "duplicate". Else ValueError."""
    if label_threshold is None:
        if not is_binary([r.label for r in records]):
            graded = next(r for r in records if r.label not in (0.0, 1.0))
            raise ValueError(
                f"{source}:{graded.line}: label {graded.label:g} is graded, not 0 or 1: give --label-threshold "
                "(the pairs labelled at least it are the duplicates)"
            )
        return records
    if not 0.0 < label_threshold <= 1.0:
        raise ValueError(f"--label-threshold must be in (0, 1], got {label_threshold:g}")
    return [r._replace(label=float(r.label >= label_threshold)) for r in records]


def evaluate_duplicates(
    nlp: Optional[Language],
    records: Iterable[PairLike],
    *,
    fit_texts: Optional[Sequence[str]] = None,
    fit_note: Optional[str] = None,
    compare: Optional[Mapping[str, Language]] = None,
    n_pairs: int = 1000,
    seed: int = 0,
    ks: Sequence[int] = (1, 10),
    bootstrap: int = 0,
    confidence: float = 0.95,
    pipe_name: str = PIPE_NAME,
    progress: bool = False,
) -> Dict[str, Any]:
    """A JSON-ready report of mrr, mrr@k and recall@k on the same queries for `nlp`'s pipe, the
    pipelines of `compare` and, given `fit_texts`, TF-IDF; `bootstrap` > 0 adds intervals."""
    check_bootstrap(bootstrap, confidence)
    check_ks(ks)
    if nlp is None and fit_texts is None and not compare:
        raise ValueError(
            "Without a pipeline (nlp=None, '-' on the command line) duplicate retrieval ranks with the TF-IDF "
            "baseline only: give fit_texts (--fit-texts) to fit it on, or pipelines to compare (--compare)."
        )
    dq = duplicate_queries(records, n_pairs=n_pairs, seed=seed)
    report: Dict[str, Any] = {
        "task": TASK,
        "n_texts": len(dq.texts),
        "n_queries": len(dq.queries),
        "seed": seed,
        "ranks": "pessimistic (ties count against the partner)",
        "results": {},
        "timing": {},
    }
    ranks: Dict[str, numpy.ndarray] = {}
    if nlp is not None:
        with timed(report["timing"], "model_s"):
            report["model"] = describe_pipe(nlp, get_similarity_pipe(nlp, pipe_name))
            ranks[MODEL], report["results"][MODEL] = _pipe_results(nlp, dq, ks, pipe_name, progress)
    if compare:
        report["compared"] = {}
        with timed(report["timing"], "compared_s"):
            for label, other in compare.items():
                method = COMPARED.format(label)
                report["compared"][method] = describe_pipe(other, get_similarity_pipe(other, pipe_name))
                ranks[method], report["results"][method] = _pipe_results(other, dq, ks, pipe_name, progress)
    if fit_texts is not None:
        with timed(report["timing"], "tfidf_s"):
            fit = list(dict.fromkeys(fit_texts))
            rows = tfidf_score_rows(nlp if nlp is not None else spacy.blank("en"), dq.texts, fit)
            ranks[TFIDF] = partner_ranks(rows, dq, block=256)
            report["results"][TFIDF] = rank_metrics(ranks[TFIDF], ks)
        report["tfidf"] = {"fitted_on": fit_note or f"{len(fit):,} distinct texts", **rows.settings}  # type: ignore[attr-defined]
    report["timing"] = {k: round(v, 3) for k, v in report["timing"].items()}
    if bootstrap > 0 and ranks:
        report["bootstrap"] = rank_intervals(
            ranks, ks=ks, reference=MODEL, n_resamples=bootstrap, confidence=confidence, seed=seed
        )
    return report


def _pipe_results(
    nlp: Language, dq: DuplicateQueries, ks: Sequence[int], pipe_name: str, progress: bool
) -> Tuple[numpy.ndarray, Dict[str, Any]]:
    """The partner ranks by the pipe of `nlp`, their `rank_metrics` and the `index_metrics`."""
    V = pipe_vectors(nlp, dq.texts, pipe_name=pipe_name, progress=progress)
    ranks = partner_ranks(pipe_score_rows(nlp, dq.texts, pipe_name=pipe_name, vectors=V), dq)
    return ranks, {**rank_metrics(ranks, ks), "index": index_metrics(nlp, dq, V, pipe_name=pipe_name)}
