"""Corpus-scale search with a trained similarity pipeline: encoding speed, index build time and
memory, queries/s of the exact and faiss-HNSW backends, HNSW recall@10 against exact, and the
wall time of duplicate mining on one process and on Ray (2 workers).

The collection is the first `--n` distinct questions of the Quora training file (all of them
with `--n 0`). Encoding speed is a ratio to spaCy's tokenizer on the same texts in the same run
(median of `--runs`), since absolute timings on a shared machine are noisy. Optionally
(`--quality`) duplicate retrieval on the BiMPM dev questions (spacy_siamese.evaluation.duplicates).

Usage:
    python benchmarks/search.py training/quora_cauchy/model-best --data ../shared/data/quora/train.tsv \
        --n 0 --n-dedupe 100000 --output benchmarks/results/search.json
"""

import gc
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy
import spacy
import typer

from spacy_siamese import SimilarityIndex, find_duplicates
from spacy_siamese.corpora import read_pairs
from spacy_siamese.search import encode

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "quora" / "train.tsv"
DEFAULT_DEV = ROOT.parent / "shared" / "data" / "quora" / "dev.tsv"


def distinct_questions(path: Path, n: int) -> List[str]:
    seen: Dict[str, None] = {}
    for rec in read_pairs(path):
        seen.setdefault(rec.text1)
        seen.setdefault(rec.text2)
        if n and len(seen) >= n:
            break
    return list(seen)[: n or None]


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def timed(fn: Any) -> Any:
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def encoding_speed(nlp: Any, texts: List[str], runs: int, batch_size: int) -> Dict[str, Any]:
    blank = spacy.blank("en")
    tok, model = [], []
    for _ in range(runs):
        _, t = timed(lambda: list(blank.pipe(texts, batch_size=batch_size)))
        tok.append(len(texts) / t)
        _, t = timed(lambda: list(nlp.pipe(texts, batch_size=batch_size)))
        model.append(len(texts) / t)
    return {
        "n_texts": len(texts),
        "runs": runs,
        "tokenizer_docs_per_s": [round(x, 1) for x in tok],
        "model_docs_per_s": [round(x, 1) for x in model],
        "median_tokenizer_docs_per_s": round(statistics.median(tok), 1),
        "median_model_docs_per_s": round(statistics.median(model), 1),
        "model_over_tokenizer": round(statistics.median(model) / statistics.median(tok), 4),
    }


def search_speed(index: SimilarityIndex, queries: numpy.ndarray, k: int) -> Any:
    (ids, scores), t = timed(lambda: index.search_vectors(queries, k))
    return ids, scores, {"n_queries": len(queries), "seconds": round(t, 3), "queries_per_s": round(len(queries) / t, 1)}


def ray_dedupe(model: str, texts: List[str], threshold: Optional[float], k: int, workers: int) -> Any:
    import ray

    from spacy_siamese import distributed

    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        start = time.perf_counter()
        dataset = ray.data.from_items([{"id": i, "text": t} for i, t in enumerate(texts)])
        encoded = distributed.encode_dataset(dataset, model, workers=workers).materialize()
        encoded_s = time.perf_counter() - start
        pairs = distributed.find_duplicates_dataset(encoded, model, threshold=threshold, k=k, workers=workers)
        return pairs, {"seconds": round(time.perf_counter() - start, 2), "encode_seconds": round(encoded_s, 2)}
    finally:
        ray.shutdown()


def save(report: Dict[str, Any], output: Optional[Path]) -> None:
    """Write the report so far (after every stage, so a later failure keeps the earlier ones)."""
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf8")


def index_timings(
    nlp: Any,
    texts: List[str],
    report: Dict[str, Any],
    *,
    n_speed: int,
    runs: int,
    n_queries: int,
    k: int,
    batch_size: int,
) -> None:
    """Encoding speed, then build time, memory and queries/s of the exact and HNSW indexes."""
    report["encoding"] = encoding_speed(nlp, texts[:n_speed], runs, batch_size)
    print(report["encoding"], flush=True)

    (vectors, _), t = timed(lambda: encode(nlp, texts, batch_size=batch_size, progress=False))
    report["encoding"]["collection_seconds"] = round(t, 1)
    report["encoding"]["collection_docs_per_s"] = round(len(texts) / t, 1)
    rng = numpy.random.default_rng(0)
    queries = vectors[rng.choice(len(vectors), min(n_queries, len(vectors)), replace=False)]

    before = rss_mb()
    exact, t = timed(lambda: SimilarityIndex(nlp, vectors))
    report["exact"] = {"build_seconds": round(t, 3), "memory_mb": round(exact.vectors.nbytes / 2**20, 1)}
    ids_exact, _, report["exact"]["search"] = search_speed(exact, queries, k)
    print("exact", report["exact"], flush=True)
    try:
        import faiss  # noqa: F401

        before = rss_mb()
        hnsw, t = timed(lambda: SimilarityIndex(nlp, vectors, backend="faiss"))
        report["hnsw"] = {
            "build_seconds": round(t, 1),
            "memory_mb": round(rss_mb() - before, 1),
            "settings": hnsw.settings,
        }
        ids_hnsw, _, report["hnsw"]["search"] = search_speed(hnsw, queries, k)
        recall = numpy.mean([len(set(a[a >= 0]) & set(b[b >= 0])) / k for a, b in zip(ids_exact, ids_hnsw)])
        report["hnsw"]["recall_at_k_vs_exact"] = round(float(recall), 4)
        print("hnsw", report["hnsw"], flush=True)
        del hnsw
    except ImportError:
        report["hnsw"] = "faiss not installed"
    del exact


def main(
    model: str = typer.Argument(..., help="Trained pipeline"),
    data: Path = typer.Option(DEFAULT_DATA, "--data", help="Quora pair file whose distinct questions are indexed"),
    n: int = typer.Option(0, "--n", help="Index the first N distinct questions (0 = all)"),
    n_speed: int = typer.Option(5000, "--n-speed", help="Texts for the encoding-speed runs"),
    runs: int = typer.Option(3, "--runs", help="Encoding-speed runs (median)"),
    n_queries: int = typer.Option(1000, "--n-queries", help="Queries for the search timings"),
    n_dedupe: int = typer.Option(100000, "--n-dedupe", help="Questions for the dedupe timings (0 = skip)"),
    k: int = typer.Option(10, "-k"),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Dedupe threshold (default: the pipe's)"),
    ray_workers: int = typer.Option(2, "--ray-workers", help="Ray workers for dedupe (0 = skip Ray)"),
    index: bool = typer.Option(True, "--index/--no-index", help="Encoding speed, index build and search timings"),
    single: bool = typer.Option(True, "--single/--no-single", help="Dedupe on one process (and compare Ray with it)"),
    quality: bool = typer.Option(False, "--quality", help="Also duplicate retrieval on the BiMPM dev questions"),
    dev: Path = typer.Option(DEFAULT_DEV, "--dev", help="Pair file for --quality"),
    batch_size: int = typer.Option(256, "--batch-size"),
    output: Optional[Path] = typer.Option(None, "--output", help="Write the results as JSON"),
) -> None:
    nlp = spacy.load(model)
    texts = distinct_questions(data, n)
    report: Dict[str, Any] = {
        "benchmark": "corpus-scale search",
        "model": model if not Path(model).is_absolute() else Path(model).name,
        "data": "/".join(Path(data).parts[-2:]),
        "n_texts": len(texts),
        "k": k,
        "versions": {"python": platform.python_version(), "spacy": spacy.__version__, "numpy": numpy.__version__},
        "cpus": os.cpu_count(),
    }
    print(f"{len(texts):,} distinct questions", flush=True)
    if index:
        index_timings(nlp, texts, report, n_speed=n_speed, runs=runs, n_queries=n_queries, k=k, batch_size=batch_size)
        save(report, output)

    if n_dedupe:
        sample = texts[:n_dedupe]
        report["dedupe"] = {"n_texts": len(sample), "threshold": threshold}
        pairs = None
        if single:
            pairs, t = timed(lambda: find_duplicates(nlp, sample, threshold=threshold, k=k, progress=False))
            report["dedupe"].update({"single_process_seconds": round(t, 1), "n_pairs": len(pairs)})
            print("dedupe", report["dedupe"], flush=True)
            save(report, output)
        if ray_workers:
            ray_pairs, info = ray_dedupe(model, sample, threshold, k, ray_workers)
            report["dedupe"]["ray"] = {"workers": ray_workers, **info, "n_pairs": len(ray_pairs)}
            if pairs is not None:
                same = {(i, j) for i, j, _ in pairs} == {(i, j) for i, j, _ in ray_pairs}
                report["dedupe"]["ray"]["same_pairs_as_single_process"] = same
                report["dedupe"]["ray"]["identical_scores"] = ray_pairs == pairs
                single_scores = {(i, j): s for i, j, s in pairs}
                diffs = [abs(s - single_scores[(i, j)]) for i, j, s in ray_pairs if (i, j) in single_scores]
                report["dedupe"]["ray"]["max_abs_score_diff"] = float(max(diffs, default=0.0))
            print("ray", report["dedupe"]["ray"], flush=True)
            save(report, output)

    if quality:
        from spacy_siamese.evaluation.duplicates import evaluate_duplicates, pair_texts

        result, t = timed(
            lambda: evaluate_duplicates(nlp, list(read_pairs(dev)), fit_texts=pair_texts(data), n_pairs=1000, seed=0)
        )
        report["quality"] = {"data": "/".join(Path(dev).parts[-2:]), **result}
        print("quality", result["results"], flush=True)

    save(report, output)


if __name__ == "__main__":
    typer.run(main)
