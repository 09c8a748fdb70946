"""Evaluation reports: JSON, Markdown tables, example pairs and ROC/PR plots."""

import json
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

import numpy

from ..files import PathLike, atomic_write
from .duplicates import TASK as DUPLICATES
from .pair_evaluation import MODEL, TEACHER, TFIDF, TUNED, VECTORS

PAIR_COLUMNS = (("acc", "acc"), ("p", "P"), ("r", "R"), ("f", "F1"), ("auc", "AUC"), ("ap", "AP"))
GRADED_COLUMNS = (("pearson", "Pearson"), ("spearman", "Spearman"), ("mse", "MSE"), ("mae", "MAE"))
RETRIEVAL_COLUMNS = (("mrr", "MRR"), ("p@1", "P@1"), ("p@10", "P@10"), ("map", "MAP"), ("auc", "pair AUC"))
DUPLICATE_COLUMNS = (("mrr@10", "MRR@10"), ("recall@1", "recall@1"), ("recall@10", "recall@10"))
SHORT = {MODEL: "trained", TFIDF: "TF-IDF", VECTORS: "vectors"}


def write_json(report: Mapping[str, Any], path: PathLike) -> None:
    """A report as indented JSON, written whole or not at all."""
    write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", path)


def write_report(report: Mapping[str, Any], markdown: str, json_path: Optional[Path], md_path: Optional[Path]) -> None:
    """An evaluate command's outputs: the report as JSON and its Markdown, each where a path is given."""
    if json_path:
        write_json(report, json_path)
    if md_path:
        write_text(markdown, md_path)


def write_text(text: str, path: PathLike) -> None:
    """A UTF-8 text file, written whole or not at all."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as file:
        file.write(text.encode("utf8"))


def read_json(path: PathLike) -> Dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf8"))


def fmt(value: Optional[float], digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> List[str]:
    """The lines of a Markdown table; a "|" or a line break in a cell (a method's label, a
    group's name, an example text) is escaped or made a space, so it stays in its cell."""
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    return lines + ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]


def _cell(value: str) -> str:
    return " ".join(str(value).splitlines()).replace("|", "\\|")


def pairs_markdown(report: Mapping[str, Any]) -> str:
    """The table of every method on one pair file, with how thresholds and baselines were set."""
    name = report.get("name") or Path(report.get("files", {}).get("pairs") or "pairs").name
    columns = PAIR_COLUMNS + (() if report.get("binary", True) else GRADED_COLUMNS)
    rows = [
        [
            method,
            *(fmt(m.get(key)) for key, _ in columns),
            fmt(m["threshold"]) + ("*" if m["threshold_source"] == TUNED else ""),
        ]
        for method, m in report["results"].items()
    ]
    lines = [
        f"### Pair similarity on {name} ({report['n_pairs']:,} pairs, {report['n_positive']:,} positive)",
        "",
        *markdown_table(["method", *(title for _, title in columns), "threshold"], rows),
        "",
    ]
    if MODEL in report["results"]:
        lines.append("The trained pipeline uses its stored threshold (`pipe.threshold`, chosen on its dev set).")
    for method, described in (report.get("compared") or {}).items():
        lines.append(f"{method}: {pipe_kind(described)}, at its own stored threshold.")
    if any(m["threshold_source"] == TUNED for m in report["results"].values()):
        lines.append(
            "\\* No trained threshold: the accuracy-optimal threshold on this same file (`best_threshold`), "
            "which favours the baseline. AUC and AP do not depend on a threshold."
        )
    if "tfidf" in report:
        t = report["tfidf"]
        lines.append(
            f"TF-IDF: the package's `tfidf` layer ({t['n_terms']:,} terms, min_df {t['min_df']}, "
            f"sublinear tf {t['sublinear_tf']}), fitted on {t['fitted_on']}."
        )
    for method, teacher in (report.get("teachers") or {}).items():
        what = "probability" if teacher["kind"] == "cross-encoder" else "cosine of the unit-length vectors"
        lines.append(f"{method}: the {teacher['kind']} {teacher['name']}'s {what}.")
    if "vectors" in report:
        v = report["vectors"]
        lines.append(
            f"Averaged vectors: cosine of the mean static token vectors (spaCy's default `doc.similarity`), "
            f"vectors {v.get('name') or ''} {tuple(v['shape'])} from {v['source']}."
        )
    if "bootstrap" in report:
        lines += ["", *intervals_markdown(report)]
    if "groups" in report:
        lines += ["", *groups_markdown(report)]
    return "\n".join(lines) + "\n"


FIGURE_TITLES = dict(PAIR_COLUMNS + GRADED_COLUMNS + DUPLICATE_COLUMNS)
# The pipe's score keys shown for 0/1 and for graded pairs (`average`, `calibrate`), titled as in the tables.
SCORE_COLUMNS = {
    kind: {f"sim_{key}": FIGURE_TITLES[key] for key in keys}
    for kind, keys in (("binary", ("acc", "auc", "ap")), ("graded", ("spearman", "pearson")))
}


def interval_text(value: Optional[float], bounds: Optional[List[float]]) -> str:
    """ "0.812 [0.790, 0.833]", or the value alone without an interval."""
    return fmt(value) + ("" if value is None or bounds is None else f" [{fmt(bounds[0])}, {fmt(bounds[1])}]")


def intervals_markdown(report: Mapping[str, Any]) -> List[str]:
    """The bootstrap intervals of a pair report: every method's figures and the trained pipe's lead."""
    boot = report["bootstrap"]
    names = list(next(iter(boot["intervals"].values())))
    diffs = boot.get("differences") or {}
    lead = [f"trained {FIGURE_TITLES.get(d['metric'], d['metric'])} minus this" for d in list(diffs.values())[:1]]
    titles = [FIGURE_TITLES.get(name, name) for name in names] + lead
    rows = []
    for method, bounds in boot["intervals"].items():
        cells = [interval_text(report["results"][method].get(name), bounds[name]) for name in names]
        if diffs:
            cells.append(interval_text(diffs[method]["value"], diffs[method]["interval"]) if method in diffs else "-")
        rows.append([method, *cells])
    return [
        f"{boot['confidence']:.0%} intervals ({boot['kind']}, {boot['n_resamples']:,} resamples"
        + ("; acc at each method's threshold):" if "acc" in names else "):"),
        "",
        *markdown_table(["method", *titles], rows),
    ]


def groups_markdown(report: Mapping[str, Any]) -> List[str]:
    """Every group's main figure for each method (with intervals where bootstrapped)."""
    methods = list(report["results"])
    figure = report["main_metric"]
    rows = []
    for name, entry in report["groups"].items():
        cells = [
            interval_text(entry["results"][m].get(figure), (entry.get("bootstrap") or {}).get(m, {}).get(figure))
            for m in methods
        ]
        rows.append([name, f"{entry['n_pairs']:,}", *cells])
    header = ["group", "pairs", *(SHORT.get(m, m) for m in methods)]
    return [f"{FIGURE_TITLES[figure]} by group of pairs:", "", *markdown_table(header, rows)]


def examples_markdown(report: Mapping[str, Any], width: int = 48) -> str:
    """The example pairs of a pair report with every method's score."""
    examples = report.get("examples") or []
    if not examples:
        return ""
    methods = list(examples[0]["scores"])
    header = ["text 1", "text 2", "gold"] + [SHORT.get(m, m) for m in methods]
    rows = []
    for ex in examples:
        texts = [textwrap.shorten(ex[k], width=width, placeholder="...") for k in ("text1", "text2")]
        rows.append(texts + [f"{ex['label']:g}"] + [f"{ex['scores'][m]:.2f}" for m in methods])
    return "\n".join(markdown_table(header, rows)) + "\n"


def retrieval_markdown(report: Mapping[str, Any]) -> str:
    """The table of every method on the held-out documents of one collection."""
    name = report.get("name") or report.get("collection", "documents")
    rows = [
        [method, str(m.get("width") or "-"), *(fmt(m.get(key), 4) for key, _ in RETRIEVAL_COLUMNS)]
        for method, m in report["results"].items()
    ]
    lines = [
        f"### Retrieval on {name}: {report['n_heldout_docs']:,} held-out query documents "
        f"({report['split']} split), pair AUC on {report['n_eval_pairs']:,} sampled pairs",
        "",
        *markdown_table(["method", "width", *(title for _, title in RETRIEVAL_COLUMNS)], rows),
    ]
    if "tfidf" in report:
        t = report["tfidf"]
        lines += ["", f"TF-IDF: {t['source']} ({t['n_terms']:,} terms); LSA: its truncated SVD."]
    return "\n".join(lines) + "\n"


def duplicates_markdown(report: Mapping[str, Any]) -> str:
    """The table of every method finding the sampled duplicates' partners among a pair file's texts."""
    name = report.get("name") or report.get("pairs") or "pairs"
    rows = [
        [method, *(fmt(m.get(key)) for key, _ in DUPLICATE_COLUMNS), fmt(m.get("median_rank"), 1)]
        for method, m in report["results"].items()
    ]
    lines = [
        f"### Duplicate retrieval on {name}: {report['n_queries']:,} duplicate pairs, one text querying "
        f"{report['n_texts']:,} distinct texts",
        "",
        *markdown_table(["method", *(title for _, title in DUPLICATE_COLUMNS), "median rank"], rows),
        "",
        f"Ranks are {report['ranks']}, among every other text of the file.",
    ]
    lines += [f"{method}: {pipe_kind(described)}." for method, described in (report.get("compared") or {}).items()]
    if "tfidf" in report:
        t = report["tfidf"]
        lines.append(f"TF-IDF: the package's `tfidf` layer ({t['n_terms']:,} terms), fitted on {t['fitted_on']}.")
    if "bootstrap" in report:
        lines += ["", *intervals_markdown(report)]
    return "\n".join(lines) + "\n"


# The summary table of each kind of report: title, the trained pipe's metrics (key: column), the
# baselines' metric, the baselines (method: column prefix) and the digits shown.
PAIR_BASELINES = {TFIDF: "TF-IDF", VECTORS: "vectors", TEACHER: "teacher"}
GRADED_SUMMARY = {"spearman": "Spearman", "pearson": "Pearson", "mse": "MSE", "mae": "MAE"}
RETRIEVAL_SUMMARY = {"mrr": "MRR", "p@10": "P@10", "map": "MAP"}
SUMMARIES = {
    "pairs": ("Pair similarity", {"acc": "acc", "f": "F1", "auc": "AUC", "ap": "AP"}, "auc", PAIR_BASELINES, 3),
    "graded": ("Graded similarity", GRADED_SUMMARY, "spearman", PAIR_BASELINES, 3),
    "retrieval": ("Document retrieval", RETRIEVAL_SUMMARY, "mrr", {TFIDF: "TF-IDF", "LSA": "LSA"}, 4),
    DUPLICATES: ("Duplicate retrieval", dict(DUPLICATE_COLUMNS), "mrr@10", {TFIDF: "TF-IDF"}, 3),
}


def pair_detail_markdown(report: Mapping[str, Any]) -> str:
    """A pair report's table, then its example pairs."""
    return pairs_markdown(report).rstrip() + "\n\n" + examples_markdown(report)


# Each report's own table in a summary, by its task (the tasks `report` reads).
DETAILS = {"pairs": pair_detail_markdown, "retrieval": retrieval_markdown, DUPLICATES: duplicates_markdown}


def summary_markdown(reports: Mapping[str, Mapping[str, Any]]) -> str:
    """One summary table per kind of report, then each report's own table and example pairs."""
    kinds: Dict[str, Dict[str, Mapping[str, Any]]] = {kind: {} for kind in SUMMARIES}
    for name, rep in reports.items():
        task = rep.get("task", "pairs")
        kinds["graded" if task == "pairs" and not rep.get("binary", True) else task][name] = rep
    lines: List[str] = []
    for kind, of_kind in kinds.items():
        if of_kind:
            lines += _summary_table(kind, of_kind)
        if kind == "pairs" and of_kind:
            lines += ["", "acc and F1 of the trained pipelines are at their stored thresholds."]
    for rep in reports.values():
        lines += ["", DETAILS[rep.get("task", "pairs")](rep).rstrip()]
    return "\n".join(lines).lstrip("\n") + "\n"


def _summary_table(kind: str, reports: Mapping[str, Mapping[str, Any]]) -> List[str]:
    """The SUMMARIES table of `kind`: one row per report."""
    title, metrics, baseline_metric, baselines, digits = SUMMARIES[kind]
    if not any(first_teacher(rep) for rep in reports.values()):  # a column only where scored
        baselines = {method: prefix for method, prefix in baselines.items() if method != TEACHER}
    lead = {"retrieval": ("width", "query docs"), DUPLICATES: ("queries",)}.get(kind, ("pairs",))
    columns = [*lead, *metrics.values(), *(f"{prefix} {metrics[baseline_metric]}" for prefix in baselines.values())]
    rows = []
    for name, rep in reports.items():
        if kind == "retrieval":
            cells = [str(rep["results"].get(MODEL, {}).get("width", "-")), f"{rep['n_heldout_docs']:,}"]
        else:
            cells = [f"{rep['n_queries' if kind == DUPLICATES else 'n_pairs']:,}"]
        cells += [summary_cell(rep, MODEL, key, key == baseline_metric, digits) for key in metrics]
        methods = [(first_teacher(rep) or "") if method == TEACHER else method for method in baselines]
        cells += [summary_cell(rep, method, baseline_metric, True, digits) for method in methods]
        rows.append([name, pipe_kind(rep.get("model") or {}), *cells])
    return ["", f"## {title}", "", *markdown_table(["evaluation", "model", *columns], rows)]


def first_teacher(report: Mapping[str, Any]) -> Optional[str]:
    """The method name of a report's first teacher (a summary's teacher column), or None."""
    return next((m for m in report["results"] if m.startswith(f"{TEACHER}: ")), None)


def summary_cell(report: Mapping[str, Any], method: str, key: str, with_interval: bool, digits: int) -> str:
    """A method's figure, with its bootstrap interval if asked for and the report has one."""
    value = report["results"].get(method, {}).get(key)
    bounds = (report.get("bootstrap") or {}).get("intervals", {}).get(method)
    return interval_text(value, bounds.get(key)) if with_interval and bounds is not None else fmt(value, digits)


def pipe_kind(described: Mapping[str, Any]) -> str:
    """ "Encoder + comparison" of a pipe described by `describe_pipe`, without the registry prefix."""
    names = [described.get(part) for part in ("encoder", "comparison")]
    return " + ".join((n or "?").replace("spacy-siamese.", "") for n in names) if any(names) else "n/a"


def plot_curves(path: PathLike, labels: numpy.ndarray, scores: Mapping[str, numpy.ndarray], title: str = "") -> None:
    """ROC and precision-recall curves of every method as a PNG (needs matplotlib, and labels of both classes)."""
    try:
        import matplotlib
    except ImportError as err:  # pragma: no cover
        raise ImportError("Plots need matplotlib: pip install 'spacy-siamese[project]'") from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from sklearn.metrics import auc, precision_recall_curve, roc_curve

    gold = numpy.asarray(labels) >= 0.5
    if gold.all() or not gold.any():
        raise ValueError("ROC and precision-recall curves need pairs of both classes.")
    fig, (ax_roc, ax_pr) = plt.subplots(1, 2, figsize=(11, 4.8))
    for method, s in scores.items():
        fpr, tpr, _ = roc_curve(gold, s)
        ax_roc.plot(fpr, tpr, label=f"{method} (AUC {auc(fpr, tpr):.3f})")
        prec, rec, _ = precision_recall_curve(gold, s)
        ax_pr.plot(rec, prec, label=method)
    ax_roc.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=1)
    ax_roc.set(xlabel="false positive rate", ylabel="true positive rate", title="ROC", xlim=(0, 1), ylim=(0, 1.01))
    ax_pr.axhline(gold.mean(), color="grey", linestyle=":", linewidth=1)
    ax_pr.set(xlabel="recall", ylabel="precision", title="Precision-recall", xlim=(0, 1), ylim=(0, 1.01))
    ax_roc.legend(loc="lower right", fontsize=8)
    ax_pr.legend(loc="lower left", fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
