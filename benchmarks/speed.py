"""Encoding speed of trained similarity pipelines, as a ratio to spaCy's tokenizer.

Absolute timings on a shared machine are noisy, so the benchmark alternates, for
`--runs` rounds, `list(nlp.pipe(texts))` with (a) `spacy.blank("en")` (tokenizer
only) and (b) each trained pipeline on the same texts, and reports docs/sec per run,
the median per method and median(trained) / median(tokenizer). It also times
`doc_a.similarity(doc_b)` on docs already processed by each pipeline
(pairs/sec), which should be cheap: a function of two stored vectors, no model call.

With `--teacher NAME_OR_DIR` (repeatable; extra spacy-siamese[teacher]), every method runs on
one thread (one BLAS thread, `torch.set_num_threads(1)`) and each round also times the teacher:
a bi-encoder's `encode(texts)`, or a cross-encoder's `predict` on the texts taken as pairs (it
has no vectors; its docs/s counts the texts read). The result gains median(trained) /
median(teacher) for each pipeline and teacher.

Usage:
    python benchmarks/speed.py training/model-best [OTHER_MODEL ...] --data ../shared/data/quora/dev.tsv \
        --n 5000 --runs 5 --output benchmarks/speed.json
"""

import gc
import json
import platform
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List

import spacy
import typer
from spacy.language import Language
from spacy.tokens import Doc

from spacy_siamese.component import PIPE_NAME, get_similarity_pipe
from spacy_siamese.corpora import read_pairs
from spacy_siamese.teacher.models import teacher_label
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
        list(nlp.pipe(texts, batch_size=batch_size))
        elapsed = time.perf_counter() - start
    finally:
        gc.enable()
    return elapsed


class TeacherPipe:
    """A sentence-transformers model behind `pipe(texts, batch_size)`, to be timed like a pipeline:
    a bi-encoder encodes the texts; a cross-encoder, which has no vectors, scores them as pairs
    (text 1 with text 2, 3 with 4, ..., an odd last one with itself), a score a pair."""

    def __init__(self, model: Any, cross_encoder: bool) -> None:
        self.model = model
        self.cross_encoder = cross_encoder

    def pipe(self, texts: List[str], batch_size: int) -> List[Any]:
        if self.cross_encoder:
            pairs = list(zip(texts[0::2], texts[1::2])) + [(texts[-1], texts[-1])] * (len(texts) % 2)
            return list(self.model.predict(pairs, batch_size=min(batch_size, 64), convert_to_numpy=True))
        return list(self.model.encode(texts, batch_size=min(batch_size, 64), convert_to_numpy=True))


def teacher_pipe(teacher: str) -> TeacherPipe:
    """A sentence-transformers model (name or directory; a bi- or a cross-encoder), to be timed."""
    from spacy_siamese.teacher.models import is_cross_encoder, load_scorer, load_teacher

    if is_cross_encoder(teacher):
        return TeacherPipe(load_scorer(teacher), cross_encoder=True)
    return TeacherPipe(load_teacher(teacher), cross_encoder=False)


@contextmanager
def one_thread(on: bool) -> Iterator[None]:
    """One BLAS thread (and one torch thread, if a teacher brought torch in) inside the block when
    `on`; the counts as they were after it, so that a caller in the same process is not left on
    one thread."""
    if not on:
        yield
        return
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch else 0
    try:
        if torch:
            torch.set_num_threads(1)
        with threadpool_limits(1):
            yield
    finally:
        if torch:
            torch.set_num_threads(torch_threads)


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
    models: List[Path] = typer.Argument(..., help="Trained pipeline directories, timed in the same rounds"),
    data: Path = typer.Option(
        DEFAULT_DATA, "--data", help="Pair file supplying the texts", exists=True, dir_okay=False
    ),
    n: int = typer.Option(5000, "--n", help="Number of distinct texts"),
    runs: int = typer.Option(5, "--runs", help="Timed rounds per method"),
    batch_size: int = typer.Option(1000, "--batch-size", help="nlp.pipe batch size (same for both)"),
    format: str = typer.Option("auto", "--format", help="Pair file format, passed to spacy_siamese.corpora.read_pairs"),
    output: Path = typer.Option(None, "--output", "-o", help="Write the results as JSON"),
    teachers: List[str] = typer.Option(
        [],
        "--teacher",
        help="Also time a sentence-transformers model (name or directory; repeatable), all on one thread",
    ),
) -> None:
    for model in models:
        if not model.is_dir():
            typer.echo(f"{model}: not a pipeline directory", err=True)
            raise typer.Exit(1)
    texts = first_distinct_texts(data, n, format=format)
    if not texts:
        typer.echo(f"No texts read from {data}", err=True)
        raise typer.Exit(1)
    n_tokens = sum(len(d) for d in spacy.blank("en").pipe(texts))

    tokenizer = "tokenizer (spacy.blank('en'))"
    methods: Dict[str, Any] = {tokenizer: spacy.blank("en")}
    load_s: Dict[str, float] = {}
    for model in models:
        name = given_path(model, parts=3)
        t = time.perf_counter()
        methods[name] = spacy.load(model)
        load_s[name] = round(time.perf_counter() - t, 3)
        try:
            get_similarity_pipe(methods[name], PIPE_NAME)
        except ValueError as err:
            typer.echo(f"{model}: {err}", err=True)
            raise typer.Exit(1) from err
    pipelines = list(methods)[1:]
    teacher_names = [f"teacher ({teacher_label(teacher)})" for teacher in teachers]
    with one_thread(bool(teachers)):
        for name, teacher in zip(teacher_names, teachers):
            methods[name] = teacher_pipe(teacher)
        per_run = time_rounds(methods, texts, runs, batch_size)
        similarity = {}
        for name in pipelines:
            docs = list(methods[name].pipe(texts, batch_size=batch_size))
            time_similarity(docs[: min(len(docs), 200)])  # warm-up
            rates = [len(docs) // 2 / time_similarity(docs) for _ in range(runs)]
            median = round(statistics.median(rates), 1)
            similarity[name] = {"pairs_per_sec": [round(r, 1) for r in rates], "median": median}
    medians = {name: statistics.median(rates) for name, rates in per_run.items()}
    to_tokenizer = {name: round(medians[name] / medians[tokenizer], 5) for name in pipelines}
    to_teachers = {
        name: {teacher: round(medians[name] / medians[teacher], 2) for teacher in teacher_names} for name in pipelines
    }
    result: Dict[str, Any] = {
        "models": pipelines,
        "data": given_path(data, parts=2),
        "n_texts": len(texts),
        "n_tokens": n_tokens,
        "runs": runs,
        "batch_size": batch_size,
        "threads": 1 if teachers else None,
        "model_load_s": load_s,
        "docs_per_sec": {name: [round(r, 1) for r in rates] for name, rates in per_run.items()},
        "median_docs_per_sec": {name: round(v, 1) for name, v in medians.items()},
        "ratio_to_tokenizer": to_tokenizer,
        "ratio_to_teacher": to_teachers,
        "similarity_on_processed_docs": similarity,
        "machine": {"python": platform.python_version(), "spacy": spacy.__version__, "platform": platform.platform()},
    }
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf8")

    print(f"{len(texts):,} texts ({n_tokens:,} tokens) from {data}, {runs} runs, batch size {batch_size}")
    for name in methods:
        rates = ", ".join(f"{r:,.0f}" for r in per_run[name])
        print(f"  {name:40s} median {medians[name]:>10,.0f} docs/s   runs: {rates}")
    for name in pipelines:
        against = "".join(f", {ratio:.2f}x {teacher}" for teacher, ratio in to_teachers[name].items())
        print(f"  {name}: {to_tokenizer[name]:.4f} of the tokenizer's speed{against}")
        print(f"    doc.similarity on processed docs: median {similarity[name]['median']:,.0f} pairs/s")


if __name__ == "__main__":
    typer.run(main)
