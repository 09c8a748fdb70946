"""Print the evaluation results of every evaluated pipeline (metrics/*.json written
by scripts/evaluate.py): a summary across datasets, the per-dataset tables with
example pairs, and whether fine-tuning from Quora helped on StackExchange; then the
document-retrieval table (metrics/retrieval.md), if evaluate-retrieval has run.
Also writes the same Markdown to --output.

Usage:
    python scripts/report.py metrics --output metrics/README.md
"""
import json
from pathlib import Path
from typing import Any, Dict, List, Optional

import typer

MODEL = "siamese_similarity (trained)"
TFIDF = "TF-IDF cosine"
VECTORS = "averaged word vectors (en_core_web_md)"
ORDER = ("quora", "stackexchange", "stackexchange_finetune")


def _f(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def model_kind(rep: Dict[str, Any]) -> str:
    """The trained pipe's encoder and comparison, from the evaluated model's config."""
    model = (rep.get("files") or {}).get("model")
    if not model or not (Path(model) / "config.cfg").exists():
        return "n/a"
    from spacy.util import load_config

    cfg = load_config(Path(model) / "config.cfg")["components"]["siamese_similarity"].get("model", {})
    names = [cfg.get(part, {}).get("@architectures", "?") for part in ("encoder", "comparison")]
    return " + ".join(n.replace("spacy-siamese.", "").rsplit(".v", 1)[0] for n in names)


def summary(reports: Dict[str, Dict[str, Any]]) -> List[str]:
    lines = [
        "## Evaluation on the dev splits",
        "",
        "| pipeline | model | dev pairs | acc | F1 | AUC | AP | TF-IDF AUC | vectors AUC | AUC vs TF-IDF |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, rep in reports.items():
        res = rep["results"]
        ours, tfidf, vec = res.get(MODEL, {}), res.get(TFIDF, {}), res.get(VECTORS, {})
        delta = ours.get("auc", 0.0) - tfidf.get("auc", 0.0) if ours and tfidf else None
        lines.append(
            f"| {name} | {model_kind(rep)} | {rep['n_pairs']:,} | {_f(ours.get('acc'))} | {_f(ours.get('f'))} | "
            f"{_f(ours.get('auc'))} | {_f(ours.get('ap'))} | {_f(tfidf.get('auc'))} | {_f(vec.get('auc'))} | "
            + ("n/a" if delta is None else f"{delta:+.3f}")
            + " |"
        )
    lines.append("")
    lines.append(
        "acc and F1 of the trained pipelines use the threshold stored in the pipeline; see the "
        "per-dataset tables for the baselines' (best-on-dev) thresholds."
    )
    scratch, tuned = reports.get("stackexchange"), reports.get("stackexchange_finetune")
    if scratch and tuned:
        a, b = scratch["results"][MODEL], tuned["results"][MODEL]
        better = "better" if b["auc"] > a["auc"] else "worse"
        lines += [
            "",
            f"Fine-tuning the Quora pipeline on StackExchange (stackexchange_finetune, {model_kind(tuned)}) "
            f"does {better} than the stackexchange pipeline trained on StackExchange alone "
            f"({model_kind(scratch)}): AUC {_f(b['auc'])} vs {_f(a['auc'])}, accuracy {_f(b['acc'])} vs "
            f"{_f(a['acc'])}, on the same {scratch['n_pairs']:,} dev pairs.",
        ]
    return lines


def main(
    metrics_dir: Path = typer.Argument(Path("metrics"), help="Directory with <name>.json/.md from evaluate.py"),
    output: Optional[Path] = typer.Option(None, "--output", help="Also write the report as Markdown"),
) -> None:
    found = {p.stem: p for p in sorted(metrics_dir.glob("*.json"))}
    names = [n for n in ORDER if n in found] + [n for n in found if n not in ORDER]
    reports = {}
    for name in names:
        data = json.loads(found[name].read_text(encoding="utf8"))
        if isinstance(data, dict) and "results" in data:
            reports[name] = data
    retrieval = metrics_dir / "retrieval.md"  # from evaluate-retrieval (benchmarks/retrieval.py)
    if not reports and not retrieval.exists():
        typer.echo(f"Error: no evaluation results in {metrics_dir}/. Run an evaluate-* command first.", err=True)
        raise typer.Exit(1)
    lines = summary(reports) if reports else []
    for name in reports:
        md = metrics_dir / f"{name}.md"
        if md.exists():
            lines += ["", md.read_text(encoding="utf8").rstrip()]
        png = metrics_dir / f"{name}.png"
        if png.exists():
            lines += ["", f"![ROC and precision-recall curves: {name}]({png.name})"]
    if retrieval.exists():
        lines += ["", "## Document retrieval: TF-IDF cosine, LSA and S2Net", "", retrieval.read_text(encoding="utf8").rstrip()]
        if (metrics_dir / "retrieval.png").exists():
            lines += ["", "![MRR against k](retrieval.png)"]
    text = "\n".join(lines) + "\n"
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf8")
    typer.echo(text)


if __name__ == "__main__":
    typer.run(main)
