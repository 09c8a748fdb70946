"""Corpus-scale dedupe: `python -m spacy_siamese dedupe` on prefixes of a collection of up to
1,000,000 texts, with its default settings.

    python benchmarks/dedupe.py MODEL --data-dir ../shared/data --output-json benchmarks/results/dedupe.json

The collection is built by `benchmarks/dedupe_collection.py` (cached in --collection-dir): all
Quora questions first, then the other sources, with seeded perturbed copies of known texts
planted at every scale. For each size the command runs in a subprocess on the prefix of that
size; the benchmark reports its stage timings (from `--stats-json`), the peak memory of the
command and its workers (the sum of their resident sets, sampled every 0.1 s), encoding speed
against spaCy's tokenizer alone on the same texts in the same run, the recall of the planted
duplicates and of the Quora labelled duplicate pairs (train and dev, and dev alone) that lie in
the prefix, and, where `--exact-sizes` asks for it, the share of the exact result (every item a
candidate) that the default run finds.
"""

import argparse
import importlib.util
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Set, Tuple

import spacy

import spacy_siamese
from spacy_siamese.util import given_path

HERE = Path(__file__).parent


def load_collection_module() -> Any:
    spec = importlib.util.spec_from_file_location("dedupe_collection", HERE / "dedupe_collection.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def tree_rss(pid: int, *, proportional: bool = False) -> int:
    """Resident bytes of a process and all its descendants (from /proc); with `proportional`, their
    proportional set size: pages that processes share (Ray's object store) count once in all, not
    once in each (slower to read)."""
    total, todo = 0, [pid]
    key = "Pss:" if proportional else "VmRSS:"
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/smaps_rollup" if proportional else f"/proc/{p}/status") as f:
                total += sum(int(line.split()[1]) * 1024 for line in f if line.startswith(key))
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
    return total


def run_dedupe(args: List[str]) -> Tuple[float, int]:
    """Wall seconds and peak resident bytes (process tree) of a command."""
    start = time.perf_counter()
    proc = subprocess.Popen(args)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, tree_rss(proc.pid))
        time.sleep(0.1)
    if proc.returncode:
        raise SystemExit(f"{' '.join(args)} failed with exit code {proc.returncode}")
    return time.perf_counter() - start, peak


def prefix_file(collection: Path, size: int, out_dir: Path) -> Path:
    path = out_dir / f"prefix-{size}.jsonl"
    if not path.exists():
        with collection.open(encoding="utf8") as src, path.open("w", encoding="utf8") as dst:
            for i, line in enumerate(src):
                if i == size:
                    break
                dst.write(line)
    return path


def read_pairs(path: Path) -> Set[Tuple[str, str]]:
    pairs = set()
    with path.open(encoding="utf8") as f:
        for line in f:
            row = json.loads(line)
            pairs.add(tuple(sorted((str(row["id1"]), str(row["id2"])))))
    return pairs  # type: ignore[return-value]


def recall(found: Set[Tuple[str, str]], wanted: List[Tuple[str, str]]) -> Dict[str, Any]:
    wanted_set = {tuple(sorted(p)) for p in wanted}
    hits = sum(1 for p in wanted_set if p in found)
    return {"n": len(wanted_set), "found": hits, "recall": hits / len(wanted_set) if wanted_set else None}


def first_texts(prefix: Path, n: int) -> List[str]:
    texts: List[str] = []
    with prefix.open(encoding="utf8") as f:
        for line in f:
            texts.append(json.loads(line)["text"])
            if len(texts) == n:
                break
    return texts


def tokenizer_speed(model: str, prefix: Path, n: int, runs: int) -> float:
    """Docs per second of the pipeline's tokenizer alone on the first n texts (median of runs)."""
    nlp = spacy.load(model)
    texts = first_texts(prefix, n)
    speeds = []
    for _ in range(runs):
        start = time.perf_counter()
        for _doc in nlp.tokenizer.pipe(texts, batch_size=1000):
            pass
        speeds.append(len(texts) / (time.perf_counter() - start))
    return statistics.median(speeds)


def encoding_breakdown(model: str, prefix: Path, n: int) -> Dict[str, float]:
    """Seconds per 1,000 docs, one process, on the first n texts: the tokenizer, the whole
    pipeline (`nlp.pipe`), and each part of the pipe's encoder run alone on the same docs (for a
    hybrid: the learned encoder and the lexical TF-IDF), to say where encoding time goes."""
    from threadpoolctl import threadpool_limits

    nlp = spacy.load(model)
    pipe = nlp.get_pipe("siamese_similarity")
    texts = first_texts(prefix, n)
    out: Dict[str, float] = {}
    with threadpool_limits(1):
        start = time.perf_counter()
        docs = [nlp.make_doc(t) for t in texts]
        out["tokenizer"] = time.perf_counter() - start
        start = time.perf_counter()
        for _doc in nlp.pipe(texts, batch_size=256):
            pass
        out["pipeline"] = time.perf_counter() - start
        hybrid = pipe.encoder.name == "hybrid_encoder"
        parts = (
            zip(("learned encoder", "lexical TF-IDF"), pipe.encoder.layers) if hybrid else [("encoder", pipe.encoder)]
        )
        for name, part in parts:
            start = time.perf_counter()
            for i in range(0, len(docs), 256):
                part.predict(docs[i : i + 256])
            out[name] = time.perf_counter() - start
    return {name: round(1000 * seconds / len(texts), 3) for name, seconds in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--collection-dir", type=Path, default=Path("benchmarks/.dedupe"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--exact-sizes", type=int, nargs="*", default=[20_000, 100_000])
    parser.add_argument("--tokenizer-texts", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3, help="tokenizer timing runs (median)")
    parser.add_argument("--output-json", type=Path, default=None)
    args = parser.parse_args()
    out = args.collection_dir
    out.mkdir(parents=True, exist_ok=True)
    collection, truth_path = out / "collection.jsonl", out / "truth.json"
    largest = max([*args.sizes, *args.exact_sizes])
    if not collection.exists() or json.loads(truth_path.read_text())["size"] < largest:
        start = time.perf_counter()
        load_collection_module().main(["--data-dir", str(args.data_dir), "--size", str(largest), "--output", str(out)])
        print(f"collection built in {time.perf_counter() - start:.0f} s", file=sys.stderr)
    truth = json.loads(truth_path.read_text())
    planted = [(p["id"], p["original_id"], max(p["position"], p["original_position"])) for p in truth["planted"]]
    quora = [(p["id1"], p["id2"], max(p["position1"], p["position2"]), p["split"]) for p in truth["quora_pairs"]]
    results: Dict[str, Any] = {}
    for size in sorted({*args.sizes, *args.exact_sizes}):
        prefix = prefix_file(collection, size, out)
        row: Dict[str, Any] = {}
        modes = ["default"] + (["exact"] if size in args.exact_sizes else [])
        if size not in args.sizes:
            modes = ["default", "exact"]
        for mode in modes:
            pairs_path, stats_path = out / f"pairs-{size}-{mode}.jsonl", out / "stats.json"
            work = Path(tempfile.mkdtemp(prefix=f"work-{size}-{mode}-", dir=out))  # ours alone: removed after
            command = [
                sys.executable,
                "-m",
                "spacy_siamese",
                "dedupe",
                args.model,
                str(prefix),
                "--output",
                str(pairs_path),
            ]
            command += ["--work-dir", str(work), "--stats-json", str(stats_path), "--groups", str(out / "groups.jsonl")]
            command += ["--no-progress"] + (["--candidates", "flat"] if mode == "exact" else [])
            wall, peak = run_dedupe(command)
            stats = json.loads(stats_path.read_text())
            found = read_pairs(pairs_path)
            row[mode] = {
                "wall_s": round(wall, 1),
                "peak_rss_gb": round(peak / 2**30, 2),
                "stages_s": stats["stages_s"],
                "settings": stats["settings"],
                "n_pairs": len(found),
                "n_scored": stats.get("n_scored"),
                "n_groups": stats.get("n_groups"),
                "largest_group": stats.get("largest_group"),
                "docs_per_s_encoding": round(size / stats["stages_s"]["encode"], 1),
                "planted_recall": recall(found, [(a, b) for a, b, last in planted if last < size]),
                "quora_labelled_recall": recall(found, [(a, b) for a, b, last, _ in quora if last < size]),
                "quora_dev_labelled_recall": recall(
                    found, [(a, b) for a, b, last, s in quora if last < size and s == "dev"]
                ),
            }
            row[mode]["_pairs"] = found
            shutil.rmtree(work, ignore_errors=True)
        tok = tokenizer_speed(args.model, prefix, min(size, args.tokenizer_texts), args.runs)
        row["tokenizer_docs_per_s"] = round(tok, 1)
        row["encoding_breakdown_s_per_1000_docs_one_process"] = encoding_breakdown(
            args.model, prefix, min(size, args.tokenizer_texts)
        )
        row["encoding_share_of_tokenizer_speed"] = round(row["default"]["docs_per_s_encoding"] / tok, 4)
        if "exact" in row:
            exact, default = row["exact"].pop("_pairs"), row["default"]["_pairs"]
            row["share_of_exact_pairs_found"] = len(exact & default) / len(exact) if exact else None
            labelled = {tuple(sorted((a, b))) for a, b, last, _ in quora if last < size}
            exact_labelled = exact & labelled
            row["share_of_exact_labelled_pairs_found"] = (
                len(exact_labelled & default) / len(exact_labelled) if exact_labelled else None
            )
        row["default"].pop("_pairs")
        results[str(size)] = row
        print(json.dumps({size: row}, indent=1), file=sys.stderr)
    report = {
        "benchmark": "dedupe",
        "command": "python -m spacy_siamese dedupe MODEL PREFIX.jsonl --output PAIRS.jsonl (defaults)",
        "model": given_path(args.model, parts=4),
        "collection": {k: v for k, v in truth.items() if k not in ("planted", "quora_pairs")},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": {"spacy": spacy.__version__, "spacy_siamese": spacy_siamese.__version__},
        "results": results,
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.output_json:
        args.output_json.write_text(text + "\n", encoding="utf8")


if __name__ == "__main__":
    main()
