"""The accuracy/speed front of the MWE CNN: dev score against encoding speed, one plot.

Each variant is the same config (default: the project's Quora hybrid) with a few encoder settings
changed (width, depth, window, static vectors, subword or character features, projection), trained by `spacy
train` for the same number of steps on the same data. All model-best pipelines are then timed in
one run, one thread each (one BLAS thread), alternating rounds with spaCy's tokenizer alone
(`spacy.blank("en")`), and the median docs/s of each (and its ratio to the tokenizer's, what the
plot shows) is reported beside the dev scores `spacy train` recorded in its meta.json. With
`--teacher` (extra `spacy-siamese[teacher]`) a sentence-transformers model is timed in the same
rounds, on one torch thread, and the plot marks 10x its speed, the budget of the package's
encoders. A variant whose output directory already holds a model trained with the same settings is
not trained again, so an interrupted run resumes.

Usage (from the repository root):
    python benchmarks/encoder_front.py --train project/corpus/quora/train.jsonl \
        --dev project/corpus/quora/dev.jsonl --vectors project/assets/vectors \
        --output-dir project/training/encoder_front --max-steps 2000 --teacher TEACHER \
        --output-json benchmarks/results/encoder_front.json --plot benchmarks/results/encoder_front.png
"""

import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import spacy
import typer

from spacy_siamese.teacher.models import teacher_label
from spacy_siamese.util import given_path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "quora_hybrid.cfg"
MWE = "components.siamese_similarity.model.encoder.encoder"


def character_encoder(config: Path = CONFIG) -> Dict[str, Any]:
    """The config's MWE encoder with spaCy's CharacterEmbed (NORM hash embedding + the first and
    last nC characters of each word, nM wide each; spaCy's usual sizes) instead of its hash
    embeddings, through spacy-siamese.PooledTok2Vec.v1; every other setting is the config's."""
    model = spacy.util.load_config(config, interpolate=True)["components"]["siamese_similarity"]["model"]
    mwe = model["encoder"]["encoder"]
    return {
        "@architectures": "spacy-siamese.PooledTok2Vec.v1",
        **{key: mwe[key] for key in ("post_depth", "proj_width", "maxout_pieces", "squash")},
        "tok2vec": {
            "@architectures": "spacy.Tok2Vec.v2",
            "embed": {
                "@architectures": "spacy.CharacterEmbed.v2",
                "width": mwe["width"],
                "rows": mwe["rows"][0],
                "nM": 64,
                "nC": 8,
                "include_static_vectors": mwe["include_static_vectors"],
            },
            "encode": {
                "@architectures": "spacy.MaxoutWindowEncoder.v2",
                **{key: mwe[key] for key in ("width", "window_size", "maxout_pieces", "depth")},
            },
        },
    }


# name -> config overrides (spacy train's --section.key value); the first is the config as it is.
VARIANTS: Dict[str, Dict[str, str]] = {
    "width 128, depth 2 (the config)": {},
    "width 64": {f"{MWE}.width": "64"},
    "width 192": {f"{MWE}.width": "192"},
    "width 256": {f"{MWE}.width": "256"},
    "depth 4": {f"{MWE}.depth": "4"},
    "window 2": {f"{MWE}.window_size": "2"},
    "no static vectors": {f"{MWE}.include_static_vectors": "false"},
    "NORM only (no subword features)": {f"{MWE}.attrs": '["NORM"]', f"{MWE}.rows": "[10000]"},
    "projection 256": {f"{MWE}.proj_width": "256"},
    "character embeddings": {MWE: json.dumps(character_encoder())},
}
SCORES = ("sim_acc", "sim_auc", "sim_spearman")
TEACHER = "teacher"


def _speed_module() -> Any:
    spec = importlib.util.spec_from_file_location("speed_benchmark", ROOT / "benchmarks" / "speed.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-").replace("--", "-")


def train_variant(
    name: str, overrides: Dict[str, str], *, config: Path, output: Path, settings: Dict[str, str]
) -> Path:
    """Train one variant (unless its directory holds one trained with the same settings); its model-best."""
    wanted = {"config": config.name, "overrides": overrides, "settings": settings}
    stamp = output / "front.json"
    best = output / "model-best"
    if stamp.exists() and json.loads(stamp.read_text()) == wanted and (best / "meta.json").exists():
        typer.echo(f"{name}: trained already ({best})", err=True)
        return best
    args = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(output)]
    for key, value in {**settings, **overrides}.items():
        args += [f"--{key}", value]
    typer.echo(f"{name}: training ({' '.join(args[3:])})", err=True)
    subprocess.run(args, check=True)
    stamp.write_text(json.dumps(wanted, indent=2) + "\n")
    return best


def main(
    train: Path = typer.Option(..., "--train", exists=True, dir_okay=False, help="Training pair file"),
    dev: Path = typer.Option(..., "--dev", exists=True, dir_okay=False, help="Dev pair file (scores, speed texts)"),
    vectors: Path = typer.Option(..., "--vectors", exists=True, file_okay=False, help="Static vectors (pipeline dir)"),
    config: Path = typer.Option(CONFIG, "--config", exists=True, dir_okay=False, help="The base config"),
    output_dir: Path = typer.Option(..., "--output-dir", help="One trained pipeline per variant here"),
    max_steps: int = typer.Option(2000, "--max-steps", help="Training steps of every variant"),
    eval_frequency: int = typer.Option(500, "--eval-frequency", help="Dev evaluation every N steps"),
    variants: List[str] = typer.Option([], "--variant", help="Only these variants (default: all)"),
    n: int = typer.Option(2000, "--n", help="Distinct dev texts timed"),
    runs: int = typer.Option(5, "--runs", help="Timed rounds (median)"),
    batch_size: int = typer.Option(256, "--batch-size", help="nlp.pipe batch size"),
    teacher: str = typer.Option(
        "", "--teacher", help="Also time a sentence-transformers model (name or directory): the 10x budget line"
    ),
    output_json: Path = typer.Option(..., "--output-json", help="Results JSON"),
    plot: Path = typer.Option(None, "--plot", help="The front as PNG"),
) -> None:
    unknown = sorted(set(variants) - set(VARIANTS))
    if unknown:
        raise typer.BadParameter(f"unknown variant(s) {unknown}; known: {list(VARIANTS)}", param_hint="--variant")
    chosen = {name: VARIANTS[name] for name in (variants or VARIANTS)}
    settings = {
        "paths.train": str(train),
        "paths.dev": str(dev),
        "paths.vectors": str(vectors),
        "training.max_steps": str(max_steps),
        "training.eval_frequency": str(eval_frequency),
    }
    models = {
        name: train_variant(name, overrides, config=config, output=output_dir / slug(name), settings=settings)
        for name, overrides in chosen.items()
    }

    speed = _speed_module()
    texts = speed.first_distinct_texts(dev, n)
    pipes: Dict[str, Any] = {"tokenizer (spacy.blank('en'))": spacy.blank("en")}
    pipes.update({name: spacy.load(path) for name, path in models.items()})
    if teacher:
        pipes[TEACHER] = speed.teacher_pipe(teacher)
    with speed.one_thread(True):
        rates = speed.time_rounds(pipes, texts, runs, batch_size)
    tokenizer = statistics.median(rates[next(iter(pipes))])
    teacher_rate = statistics.median(rates[TEACHER]) if teacher else None

    results = []
    for name, path in models.items():
        meta = json.loads((path / "meta.json").read_text())
        docs_per_sec = statistics.median(rates[name])
        results.append(
            {
                "variant": name,
                "overrides": chosen[name],
                "dev": {key: meta["performance"].get(key) for key in SCORES if key in meta["performance"]},
                "median_docs_per_sec": round(docs_per_sec, 1),
                "docs_per_sec": [round(r, 1) for r in rates[name]],
                "share_of_tokenizer": round(docs_per_sec / tokenizer, 5),
                **({"times_teacher": round(docs_per_sec / teacher_rate, 2)} if teacher_rate else {}),
            }
        )
    report = {
        "config": config.name,
        "train": given_path(train, parts=2),
        "dev": given_path(dev, parts=2),
        "max_steps": max_steps,
        "timed": {"n_texts": len(texts), "runs": runs, "batch_size": batch_size, "threads": 1},
        "tokenizer_median_docs_per_sec": round(tokenizer, 1),
        "variants": results,
        "versions": {"python": platform.python_version(), "spacy": spacy.__version__},
    }
    if teacher_rate:
        report["teacher"] = {
            "model": teacher_label(teacher),
            "median_docs_per_sec": round(teacher_rate, 1),
            "docs_per_sec": [round(r, 1) for r in rates[TEACHER]],
        }
    output_json.parent.mkdir(parents=True, exist_ok=True)
    output_json.write_text(json.dumps(report, indent=2) + "\n")
    for r in results:
        scores = ", ".join(f"{k} {v:.3f}" for k, v in r["dev"].items() if v is not None)
        typer.echo(f"{r['variant']:34s} {r['median_docs_per_sec']:>8,.0f} docs/s  {scores}")
    if plot:
        budget = 10 * teacher_rate / tokenizer if teacher_rate else None
        draw(results, plot, title=f"{config.name}, {max_steps:,} steps; one thread", budget=budget)


def draw(results: List[Dict[str, Any]], path: Path, *, title: str, budget: Optional[float] = None) -> None:
    """Dev ROC AUC (or Spearman) against speed as a share of the tokenizer's (a ratio measured in
    one run, steadier than docs/s on a shared machine), one labelled point per variant; `budget`:
    a vertical line at that share (10x the teacher's speed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    key = "sim_auc" if all(r["dev"].get("sim_auc") is not None for r in results) else "sim_spearman"
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for r in results:
        x, y = r["share_of_tokenizer"], r["dev"][key]
        ax.scatter([x], [y], color="tab:blue")
        ax.annotate(r["variant"], (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8)
    if budget is not None:
        ax.axvline(budget, color="tab:red", linestyle="--", linewidth=1, label="10x the teacher's speed")
        ax.legend(fontsize=8, loc="lower left")
    ax.margins(x=0.15, y=0.15)
    ax.set_xlabel("encoding speed / spaCy tokenizer's, one thread (median docs/s)")
    ax.set_ylabel(f"dev {key.replace('sim_', '')} (model-best)")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # the trainings too: run beside other work
    typer.run(main)
