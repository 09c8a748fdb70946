"""Evaluate a trained `siamese_similarity` pipe on labelled pairs, with baselines."""

import random
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, Union

import numpy
from spacy.language import Language
from spacy.tokens import Doc
from tqdm import tqdm

from ..component import PIPE_NAME, get_similarity_pipe
from ..metrics import best_threshold, is_binary, main_metric, pair_metrics
from ..pair_examples import make_pair_example
from ..teacher.models import check_cache_dir, is_cross_encoder, teacher_label, teacher_pair_scores
from ..util import distinct_pair_texts, show_progress, timed
from .baselines import averaged_vectors, fit_tfidf, has_vectors, tfidf_cosine, tfidf_settings
from .uncertainty import check_bootstrap, group_results, pair_intervals

MODEL = "siamese_similarity (trained)"
TFIDF = "TF-IDF cosine"
VECTORS = "averaged word vectors"
TEACHER = "teacher"  # a teacher is scored as "teacher: <its label>" (`teacher_method`)
COMPARED = "compared: {}"  # another trained pipeline, by the label it was given
STORED = "stored (pipe.threshold)"
TUNED = "best on this file"
# Pairs scored per call of pipe.pair_scores: a multiple of the pipe's batch size, so the
# encoder sees the same batches as in one call over all pairs.
CHUNK = 2048
Scorer = Callable[[List[Tuple[str, str]]], numpy.ndarray]  # of (text1, text2) pairs


class PairLike(Protocol):
    """Anything with the fields of `spacy_siamese.corpora.PairRecord`."""

    @property
    def text1(self) -> str: ...

    @property
    def text2(self) -> str: ...

    @property
    def label(self) -> float: ...


@dataclass
class PairEvaluation:
    """The report (JSON-ready) and the per-pair scores of every method."""

    report: Dict[str, Any]
    scores: Dict[str, numpy.ndarray]
    labels: numpy.ndarray
    notes: List[str] = field(default_factory=list)


def teacher_scorers(
    teachers: Sequence[str], *, cache_dir: Optional[Union[str, Path]] = None, progress: bool = False
) -> Tuple[Dict[str, Scorer], Dict[str, Dict[str, str]]]:
    """The scorers of the named teachers ("" is none) for `evaluate_pairs(teachers=...)`, and the
    report's entry of each, by method. ValueError for a teacher named twice or an unusable cache."""
    check_cache_dir(cache_dir)
    teachers = [t for t in teachers if t]
    labels = [teacher_label(t) for t in teachers]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"--teacher names a teacher twice: {', '.join(repeated)}")
    scorers: Dict[str, Scorer] = {
        label: partial(teacher_pair_scores, t, cache_dir=cache_dir, progress=progress)
        for t, label in zip(teachers, labels)
    }
    kinds = {t: "cross-encoder" if is_cross_encoder(t) else "bi-encoder" for t in teachers}
    return scorers, {teacher_method(label): {"name": label, "kind": kinds[t]} for t, label in zip(teachers, labels)}


def only_groups(records: List[Any], groups: Sequence[str], source: Any) -> List[Any]:
    """The records of `groups` (all if none are given); a ValueError for a group `source` lacks names those it has."""
    if not groups:
        return records
    present = {r.group for r in records}
    missing = sorted(set(groups) - present)
    if missing:
        have = ", ".join(sorted(g for g in present if g)) or "none"
        raise ValueError(f"No pairs of group {', '.join(map(repr, missing))} in {source} (its groups: {have})")
    return [r for r in records if r.group in groups]


def evaluate_pairs(
    nlp: Language,
    records: Sequence[PairLike],
    *,
    baselines: bool = False,
    fit_texts: Optional[Sequence[str]] = None,
    fit_note: Optional[str] = None,
    vectors: Optional[Language] = None,
    teachers: Optional[Mapping[str, Scorer]] = None,
    compare: Optional[Mapping[str, Language]] = None,
    pipe_name: str = PIPE_NAME,
    n_examples: int = 8,
    n_check: int = 20,
    bootstrap: int = 0,
    confidence: float = 0.95,
    seed: int = 0,
    progress: bool = False,
) -> PairEvaluation:
    """Score `records` with the trained pipe at its stored threshold, beside the `baselines`
    (TF-IDF fitted on `fit_texts`, averaged word vectors), `teachers` (label -> pair scorer) and
    the pipelines of `compare` (at their stored thresholds); baselines and teachers at the
    accuracy-optimal threshold on these pairs. Also per group, with `bootstrap` > 0 intervals,
    and `doc.similarity` checked against the batch scores on `n_check` pairs."""
    if not len(records):
        raise ValueError("Cannot evaluate an empty set of pairs.")
    check_bootstrap(bootstrap, confidence)
    pipe = get_similarity_pipe(nlp, pipe_name)
    labels = numpy.asarray([r.label for r in records], dtype="f8")
    timing: Dict[str, float] = {}
    scores: Dict[str, numpy.ndarray] = {}
    notes: List[str] = []
    report: Dict[str, Any] = {
        "task": "pairs",
        "n_pairs": len(records),
        "n_positive": int((labels >= 0.5).sum()),
        "binary": is_binary(labels),
        "main_metric": main_metric(labels),
        "model": describe_pipe(nlp, pipe),
    }
    with timed(timing, "model_s"):
        scores[MODEL] = pipe_scores(nlp, pipe, records, progress=progress)
    stored: Dict[str, float] = {MODEL: pipe.threshold}
    if compare:
        report["compared"] = {}
        with timed(timing, "compared_s"):
            for label, other in compare.items():
                other_pipe = get_similarity_pipe(other, pipe_name)
                method = COMPARED.format(label)
                scores[method] = pipe_scores(other, other_pipe, records, progress=progress)
                stored[method] = other_pipe.threshold
                report["compared"][method] = describe_pipe(other, other_pipe)
    check = pick_examples(labels, n_check, seed)
    diff = check_similarity(nlp, [records[i] for i in check], scores[MODEL][check])
    report["similarity_check"] = {"n_pairs": len(check), "max_abs_diff": diff}
    if diff > 1e-4:
        notes.append("doc.similarity differs from the pipe's batch scores: " + str(report["similarity_check"]))
    if baselines:
        with timed(timing, "tfidf_s"):
            scores[TFIDF], report["tfidf"] = _tfidf_baseline(nlp, records, fit_texts, fit_note, progress)
        vectors_nlp = vectors if vectors is not None else nlp
        if has_vectors(vectors_nlp):
            with timed(timing, "vectors_s"):
                scores[VECTORS] = averaged_vectors(vectors_nlp, [r.text1 for r in records], [r.text2 for r in records])
            report["vectors"] = {
                "source": "the evaluated pipeline" if vectors is None else "the --vectors pipeline",
                "name": vectors_nlp.meta.get("vectors", {}).get("name"),
                "shape": list(vectors_nlp.vocab.vectors.shape),
            }
        else:
            notes.append(
                "Skipped the averaged word vectors baseline: the pipeline has no static word vectors "
                "(pass the vectors of a pipeline that has them, e.g. --vectors PATH)."
            )
    pairs = [(r.text1, r.text2) for r in records]
    for label, scorer in (teachers or {}).items():
        with timed(timing, f"{teacher_method(label)}_s"):
            teacher_scores = numpy.asarray(scorer(pairs), dtype="f8")
        if teacher_scores.shape != (len(pairs),):
            raise ValueError(f"The teacher {label} gave {teacher_scores.shape} scores for {len(pairs)} pairs.")
        scores[teacher_method(label)] = teacher_scores
    report["results"] = {m: score_method(s, labels, stored.get(m)) for m, s in scores.items()}
    tuned = score_method(scores[MODEL], labels, None)
    report["results"][MODEL]["at_best_threshold_on_this_file"] = {k: tuned[k] for k in ("acc", "f", "threshold")}
    report["thresholds"] = {m: r["threshold"] for m, r in report["results"].items()}
    settings: Dict[str, Any] = {"n_resamples": bootstrap, "confidence": confidence, "seed": seed}
    with timed(timing if bootstrap > 0 else {}, "bootstrap_s"):  # the whole file's intervals and each group's
        if bootstrap > 0:
            report["bootstrap"] = pair_intervals(scores, labels, report["thresholds"], reference=MODEL, **settings)
        groups = [getattr(r, "group", "") for r in records]  # PairLike records need not have one
        if len(set(groups)) > 1:
            report["groups"] = group_results(scores, labels, report["thresholds"], groups, **settings)
    report["examples"] = [
        {
            "index": i,
            "text1": records[i].text1,
            "text2": records[i].text2,
            "label": float(records[i].label),
            "scores": {m: float(s[i]) for m, s in scores.items()},
        }
        for i in pick_examples(labels, n_examples, seed)
    ]
    report["timing"] = {k: round(v, 3) for k, v in timing.items()}
    report["notes"] = notes
    return PairEvaluation(report, scores, labels, notes)


def teacher_method(label: str) -> str:
    """The method name of the teacher with this label in a report's results."""
    return f"{TEACHER}: {label}"


def score_method(scores: numpy.ndarray, labels: numpy.ndarray, threshold: Optional[float]) -> Dict[str, Any]:
    """Metrics at `threshold`, or at the accuracy-optimal threshold on these pairs if None."""
    thr = best_threshold(scores, labels) if threshold is None else float(threshold)
    source = TUNED if threshold is None else STORED
    return {**pair_metrics(scores, labels, thr), "threshold": float(thr), "threshold_source": source}


def pipe_scores(nlp: Language, pipe: Any, records: Sequence[PairLike], *, progress: bool = False) -> numpy.ndarray:
    """The pipe's batch scores (`pipe.pair_scores`) of the records, in order."""
    out: List[numpy.ndarray] = []
    with tqdm(total=len(records), desc="scoring pairs", unit="pair", disable=not show_progress(progress)) as bar:
        for start in range(0, len(records), CHUNK):
            chunk = records[start : start + CHUNK]
            examples = [make_pair_example(nlp, r.text1, r.text2, r.label) for r in chunk]
            chunk_scores, chunk_labels = pipe.pair_scores(examples)
            if not numpy.allclose(chunk_labels, [r.label for r in chunk]):
                raise ValueError("pipe.pair_scores returned labels not aligned with the input pairs.")
            out.append(numpy.asarray(chunk_scores, dtype="f8").ravel())
            bar.update(len(chunk))
    return numpy.concatenate(out)


def check_similarity(nlp: Language, records: Sequence[PairLike], scores: numpy.ndarray) -> float:
    """Max |doc1.similarity(doc2) - batch score| over `records`, docs made by `nlp`."""
    if not len(records):
        return 0.0
    texts = distinct_pair_texts((r.text1, r.text2) for r in records)
    docs = dict(zip(texts, nlp.pipe(texts)))
    sims = numpy.asarray([docs[r.text1].similarity(docs[r.text2]) for r in records], dtype="f8")
    return float(numpy.max(numpy.abs(sims - scores)))


def describe_pipe(nlp: Language, pipe: Any) -> Dict[str, Any]:
    """The pipe's threshold, encoder and comparison architectures and, for a hybrid, lexical weight."""
    config = nlp.config["components"].get(pipe.name, {}).get("model", {})
    arch = {part: config.get(part, {}).get("@architectures") for part in ("encoder", "comparison")}
    out = {"pipe": pipe.name, "threshold": pipe.threshold, **arch, "pipeline": list(nlp.pipe_names)}
    if pipe.lexical_weight is not None:
        out["lexical_weight"] = pipe.lexical_weight
    return out


def pick_examples(labels: numpy.ndarray, n: int, seed: int = 0) -> List[int]:
    """`n` pair indices, half from each class (labels >= 0.5) as far as available, seeded."""
    if n <= 0:
        return []
    rng = random.Random(seed)
    pos = [i for i, y in enumerate(labels) if y >= 0.5]
    neg = [i for i, y in enumerate(labels) if y < 0.5]
    n_pos = min(len(pos), (n + 1) // 2)
    n_neg = min(len(neg), n - n_pos)
    n_pos = min(len(pos), n - n_neg)
    chosen = rng.sample(pos, n_pos) + rng.sample(neg, n_neg)
    rng.shuffle(chosen)
    return chosen


def _tfidf_baseline(
    nlp: Language,
    records: Sequence[PairLike],
    fit_texts: Optional[Sequence[str]],
    fit_note: Optional[str],
    progress: bool,
) -> Any:
    own = fit_texts is None
    texts = distinct_pair_texts((r.text1, r.text2) for r in records)
    fit = texts if own else list(dict.fromkeys(fit_texts or ()))
    if not fit:
        raise ValueError("No texts to fit the TF-IDF baseline on.")
    unique = list(dict.fromkeys([*fit, *texts]))
    docs = dict(zip(unique, tokenize(nlp, unique, progress)))
    model = fit_tfidf(docs[t] for t in fit)
    scores = tfidf_cosine(model, [docs[r.text1] for r in records], [docs[r.text2] for r in records])
    if fit_note is None:
        fit_note = f"{len(fit):,} distinct texts ({'the evaluated texts' if own else 'the given fit texts'})"
    return scores, {"fitted_on": fit_note, **tfidf_settings(model)}


def tokenize(
    nlp: Language, texts: Sequence[str], progress: bool, desc: str = "tokenizing", unit: str = "text"
) -> List[Doc]:
    """`nlp`'s tokenizer only on each text, with a progress bar."""
    return [nlp.make_doc(text) for text in tqdm(texts, desc=desc, unit=unit, disable=not show_progress(progress))]
