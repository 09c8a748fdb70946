"""Encoding speed of a trained similarity pipeline, as a ratio to spaCy's tokenizer.

Absolute timings on a shared machine are noisy, so the benchmark alternates, for
`--runs` rounds, `list(nlp.pipe(texts))` with (a) `spacy.blank("en")` (tokenizer
only) and (b) the trained pipeline on the same texts, and reports docs/sec per run,
the median per method and median(trained) / median(tokenizer). It also times
`doc_a.similarity(doc_b)` on docs already processed by the trained pipeline
(pairs/sec), which should be cheap: a function of two stored vectors, no model call.

With `--teacher NAME_OR_DIR` (extra spacy-siamese[distill]), every method runs on one thread
(one BLAS thread, `torch.set_num_threads(1)`) and each round also times the teacher's
`encode(texts)`: the result gains median(trained) / median(teacher).

Usage:
    python benchmarks/speed.py training/model-best --data ../shared/data/quora/dev.tsv \
        --n 5000 --runs 5 --output benchmarks/speed.json
"""

import gc
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List

import spacy
import typer
from spacy.language import Language
from spacy.tokens import Doc

from spacy_siamese.component import PIPE_NAME, get_similarity_pipe
from spacy_siamese.corpora import read_pairs
from spacy_siamese.distill import teacher_label
from spacy_siamese.util import given_path

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "quora" / "dev.tsv"


def first_distinct_texts(path: Path, n: int, *, format: str = "auto") -> List[str]:
    """The first `n` distinct texts (both sides, in file order) of a pair file."""
    seen: Dict[str, None] = {}
    for rec in read_pairs(path, format=format):
        for text in (rec.text1, rec.text2):
            if len(seen) < n:
                seen.setdefault(text)
        if len(seen) >= n:
            break
    return list(seen)


def time_pipe(nlp: Language, texts: List[str], batch_size: int) -> float:
    """Seconds for `list(nlp.pipe(texts))`, with the garbage collector off (as timeit does),
    so that collecting the previous run's docs does not land in this run."""
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        docs = list(nlp.pipe(texts, batch_size=batch_size))
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    assert len(docs) == len(texts)
    return elapsed


class TeacherPipe:
    """A sentence-transformers model behind `pipe(texts, batch_size)`, to be timed like a pipeline."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def pipe(self, texts: List[str], batch_size: int) -> List[Any]:
        return list(self.model.encode(texts, batch_size=min(batch_size, 64), convert_to_numpy=True))


def one_thread_teacher(teacher: str) -> TeacherPipe:
    """A sentence-transformers model (name or directory) on one torch thread, to be timed."""
    import torch

    from spacy_siamese.distill import load_teacher

    torch.set_num_threads(1)
    return TeacherPipe(load_teacher(teacher))


def time_rounds(methods: Dict[str, Any], texts: List[str], runs: int, batch_size: int) -> Dict[str, List[float]]:
    """docs/s of each method in each of `runs` rounds, the methods alternating within a round,
    after one warm-up pass of each (allocations, lazy init, and the tokenizer's cache, which
    otherwise makes the first tokenizer run several times slower)."""
    for nlp in methods.values():
        list(nlp.pipe(texts, batch_size=batch_size))
    per_run: Dict[str, List[float]] = {name: [] for name in methods}
    for run in range(runs):
        for name, nlp in methods.items():
            per_run[name].append(len(texts) / time_pipe(nlp, texts, batch_size))
        typer.echo(
            f"run {run + 1}/{runs}: " + ", ".join(f"{name} {rates[-1]:,.0f} docs/s" for name, rates in per_run.items()),
            err=True,
        )
    return per_run


def time_similarity(docs: List[Doc]) -> float:
    pairs = list(zip(docs[0::2], docs[1::2]))
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for a, b in pairs:
            a.similarity(b)
        return time.perf_counter() - start
    finally:
        gc.enable()


def main(
    model: Path = typer.Argument(..., help="Trained pipeline directory", exists=True, file_okay=False),
    data: Path = typer.Option(
        DEFAULT_DATA, "--data", help="Pair file supplying the texts", exists=True, dir_okay=False
    ),
    n: int = typer.Option(5000, "--n", help="Number of distinct texts"),
    runs: int = typer.Option(5, "--runs", help="Timed rounds per method"),
    batch_size: int = typer.Option(1000, "--batch-size", help="nlp.pipe batch size (same for both)"),
    format: str = typer.Option("auto", "--format", help="Pair file format, passed to spacy_siamese.corpora.read_pairs"),
    output: Path = typer.Option(None, "--output", "-o", help="Write the results as JSON"),
    teacher: str = typer.Option(
        "", "--teacher", help="Also time a sentence-transformers model (name or directory), all on one thread"
    ),
) -> None:
    texts = first_distinct_texts(data, n, format=format)
    if not texts:
        typer.echo(f"No texts read from {data}", err=True)
        raise typer.Exit(1)
    n_tokens = sum(len(d) for d in spacy.blank("en").pipe(texts))

    t = time.perf_counter()
    trained = spacy.load(model)
    load_s = time.perf_counter() - t
    try:
        get_similarity_pipe(trained, PIPE_NAME)
    except ValueError as err:
        typer.echo(f"{model}: {err}", err=True)
        raise typer.Exit(1) from err
    methods: Dict[str, Any] = {"tokenizer (spacy.blank('en'))": spacy.blank("en"), "trained pipeline": trained}
    if teacher:
        from threadpoolctl import threadpool_limits

        threadpool_limits(1)
        methods[f"teacher ({teacher_label(teacher)})"] = one_thread_teacher(teacher)

    per_run = time_rounds(methods, texts, runs, batch_size)
    medians = {name: statistics.median(rates) for name, rates in per_run.items()}
    tok_name, trained_name = list(methods)[:2]
    ratio = medians[trained_name] / medians[tok_name]

    docs = list(trained.pipe(texts, batch_size=batch_size))
    n_pairs = len(docs) // 2
    time_similarity(docs[: min(len(docs), 200)])  # warm-up
    sim_rates = [n_pairs / time_similarity(docs) for _ in range(runs)]
    sim_median = statistics.median(sim_rates)

    result: Dict[str, Any] = {
        "model": given_path(model, parts=2),
        "pipeline": trained.pipe_names,
        "data": given_path(data, parts=2),
        "n_texts": len(texts),
        "n_tokens": n_tokens,
        "runs": runs,
        "batch_size": batch_size,
        "model_load_s": round(load_s, 3),
        "docs_per_sec": {name: [round(r, 1) for r in rates] for name, rates in per_run.items()},
        "median_docs_per_sec": {name: round(v, 1) for name, v in medians.items()},
        "ratio_trained_to_tokenizer": round(ratio, 5),
        **(
            {"threads": 1, "ratio_trained_to_teacher": round(medians[trained_name] / medians[list(methods)[2]], 2)}
            if teacher
            else {}
        ),
        "similarity": {
            "n_pairs": n_pairs,
            "pairs_per_sec": [round(r, 1) for r in sim_rates],
            "median_pairs_per_sec": round(sim_median, 1),
        },
        "machine": {"python": platform.python_version(), "spacy": spacy.__version__, "platform": platform.platform()},
    }
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")

    print(f"{len(texts):,} texts ({n_tokens:,} tokens) from {data}, {runs} runs, batch size {batch_size}")
    for name in methods:
        print(
            f"  {name:32s} median {medians[name]:>10,.0f} docs/s   runs: "
            + ", ".join(f"{r:,.0f}" for r in per_run[name])
        )
    print(f"  ratio trained / tokenizer: {ratio:.4f}  (the trained pipeline runs at {ratio:.1%} of tokenizer speed)")
    if teacher:
        print(f"  ratio trained / teacher, one thread each: {result['ratio_trained_to_teacher']:.2f}")
    print(f"  doc.similarity on processed docs: median {sim_median:,.0f} pairs/s over {n_pairs:,} pairs")


if __name__ == "__main__":
    typer.run(main)
