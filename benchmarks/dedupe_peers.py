"""Our `dedupe` beside SemHash (MinishLab's `semhash`: a model2vec static model and USearch) on the
collection of `benchmarks/dedupe.py`, one system after the other in each round, each in its own
process: wall time, peak memory, pairs, and the recall of the planted copies and of the labelled
Quora duplicates, found directly (the pair itself) and in groups (both in one group).

    python benchmarks/dedupe_peers.py MODEL [MODEL ...] --semhash-model M2V_DIR --sizes 100000 1000000 \\
        --output-json benchmarks/results/dedupe_peers.json

MODEL: our pipelines (`dedupe` with its defaults). M2V_DIR: a model2vec model, e.g. all-MiniLM-L6-v2
distilled by `project/scripts/static_table.py` (what a user of SemHash runs offline). SemHash runs
at its default threshold (0.9) and, where `--match-sizes` asks for it, at the threshold that gives
about as many pairs as the first MODEL (found from one query at MATCH_FROM and SemHash's own
`rethreshold`, untimed; MATCH_FROM if even that gives fewer). A SemHash pair is a filtered record
and the record it duplicates.
"""

import argparse
import copy
import importlib.util
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterable, List, Set, Tuple

from spacy_siamese.util import component_labels

HERE = Path(__file__).parent
MATCH_FROM = 0.8  # the lowest threshold SemHash's pair count is matched at
Pair = Tuple[str, str]


def load_dedupe_module() -> Any:
    spec = importlib.util.spec_from_file_location("dedupe_benchmark", HERE / "dedupe.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def read_records(prefix: Path) -> List[Dict[str, str]]:
    with prefix.open(encoding="utf8") as f:
        return [{"id": str(row["id"]), "text": row["text"]} for row in map(json.loads, f)]


def semhash_run(args: argparse.Namespace) -> None:
    """The SemHash side, in its own process: build from the records (encode + index), deduplicate,
    write the pairs and the stage times; with --match-pairs, the threshold that gives about that
    many pairs instead (untimed)."""
    from model2vec import StaticModel
    from semhash import SemHash

    records = read_records(args.prefix)
    model = StaticModel.from_pretrained(args.semhash_model, force_download=False)
    start = time.perf_counter()
    semhash = SemHash.from_records(records, columns=["text"], model=model)
    built = time.perf_counter()
    result = semhash.self_deduplicate(threshold=args.threshold)
    stages = {"encode_and_index": round(built - start, 2), "search": round(time.perf_counter() - built, 2)}
    if args.match_pairs:  # bisect between this threshold and 1 (fewer pairs at a higher one)
        low, high = args.threshold, 1.0
        for _ in range(20):
            middle = (low + high) / 2
            again = copy.copy(result)  # rethreshold reruns SemHash's selection from the stored neighbours
            again.rethreshold(middle)
            low, high = (middle, high) if len(again.filtered) > args.match_pairs else (low, middle)
        args.out.write_text(json.dumps({"threshold": round(high, 4)}))
        return
    with args.pairs.open("w", encoding="utf8") as f:
        for dup in result.filtered:
            f.write(json.dumps({"id1": dup.record["id"], "id2": dup.duplicate_of["id"], "score": dup.score}) + "\n")
    args.out.write_text(json.dumps({"stages_s": stages, "threshold": args.threshold}))


def groups_of_pairs(pairs: Iterable[Pair]) -> Dict[str, str]:
    """Each paired item's group (its connected component) when the pairs are chained."""
    pairs = list(pairs)
    items = sorted({x for pair in pairs for x in pair})
    position = {x: i for i, x in enumerate(items)}
    rows, cols = ([position[pair[side]] for pair in pairs] for side in (0, 1))
    return {x: str(label) for x, label in zip(items, component_labels(len(items), rows, cols))}


def groups_file(path: Path) -> Dict[str, str]:
    with path.open(encoding="utf8") as f:
        return {m["id"]: str(row["group"]) for row in map(json.loads, f) for m in row["members"]}


def found(pairs: Set[Pair], groups: Dict[str, str], wanted: List[Pair]) -> Dict[str, Any]:
    wanted_set = {tuple(sorted(p)) for p in wanted}
    direct = sum(p in pairs for p in wanted_set)
    grouped = sum(a in groups and groups.get(a) == groups.get(b) for a, b in wanted_set)
    n = len(wanted_set)
    return {"n": n, "direct": round(direct / n, 4) if n else None, "in_groups": round(grouped / n, 4) if n else None}


def score(pairs: Set[Pair], groups: Dict[str, str], wanted: Dict[str, List[Pair]]) -> Dict[str, Any]:
    return {"n_pairs": len(pairs), **{name: found(pairs, groups, w) for name, w in wanted.items()}}


def ours(bench: Any, model: str, prefix: Path, wanted: Dict[str, List[Pair]]) -> Dict[str, Any]:
    """`python -m spacy_siamese dedupe` with its defaults on the prefix, with its groups."""
    pairs, groups, stats_path = (prefix.parent / f"peers-{name}" for name in ("pairs", "groups", "stats"))
    work = Path(tempfile.mkdtemp(prefix="peers-work-", dir=prefix.parent))  # ours alone: removed after
    command = [sys.executable, "-m", "spacy_siamese", "dedupe", model, str(prefix), "--output", str(pairs)]
    command += ["--work-dir", str(work), "--groups", str(groups), "--stats-json", str(stats_path), "--no-progress"]
    wall, peak = bench.run_dedupe(command)
    shutil.rmtree(work, ignore_errors=True)
    stats = json.loads(stats_path.read_text())
    row = {"wall_s": round(wall, 1), "peak_rss_gb": round(peak / 2**30, 2), "stages_s": stats["stages_s"]}
    row["threshold"] = stats["settings"]["threshold"]
    return {**row, **score(bench.read_pairs(pairs), groups_file(groups), wanted)}


def semhash(
    bench: Any, model: str, prefix: Path, wanted: Dict[str, List[Pair]], threshold: float, match_pairs: int = 0
) -> Dict[str, Any]:
    """SemHash on the prefix in a process of its own (this script with --semhash-run)."""
    pairs, stats_path = prefix.parent / "peers-semhash-pairs.jsonl", prefix.parent / "peers-semhash-stats.json"
    command = [sys.executable, __file__, "--semhash-run", "--semhash-model", model, "--prefix", str(prefix)]
    command += ["--threshold", str(threshold), "--pairs", str(pairs), "--out", str(stats_path)]
    wall, peak = bench.run_dedupe(command + ["--match-pairs", str(match_pairs)])
    stats = json.loads(stats_path.read_text())
    if match_pairs:
        return stats
    found_pairs = bench.read_pairs(pairs)
    row = {"wall_s": round(wall, 1), "peak_rss_gb": round(peak / 2**30, 2), **stats}
    return {**row, **score(found_pairs, groups_of_pairs(found_pairs), wanted)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*")
    parser.add_argument("--semhash-model", required=True)
    parser.add_argument("--data-dir", type=Path, default=Path("../shared/data"))
    parser.add_argument("--collection-dir", type=Path, default=Path("benchmarks/.dedupe"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--match-sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--rounds", type=int, default=1, help="rounds of every run, alternating systems")
    parser.add_argument("--output-json", type=Path, default=None)
    # the SemHash process
    parser.add_argument("--semhash-run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--prefix", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--threshold", type=float, default=0.9, help=argparse.SUPPRESS)
    parser.add_argument("--match-pairs", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--pairs", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.semhash_run:
        return semhash_run(args)
    if not args.models:
        parser.error("give at least one MODEL")
    bench = load_dedupe_module()
    out = args.collection_dir
    out.mkdir(parents=True, exist_ok=True)
    collection, truth_path = out / "collection.jsonl", out / "truth.json"
    if not collection.exists() or json.loads(truth_path.read_text())["size"] < max(args.sizes):
        bench.load_collection_module().main(
            ["--data-dir", str(args.data_dir), "--size", str(max(args.sizes)), "--output", str(out)]
        )
    truth = json.loads(truth_path.read_text())
    planted = [(p["id"], p["original_id"], max(p["position"], p["original_position"])) for p in truth["planted"]]
    quora = [(p["id1"], p["id2"], max(p["position1"], p["position2"])) for p in truth["quora_pairs"]]
    results: Dict[str, Any] = {}
    for size in sorted(args.sizes):
        prefix = bench.prefix_file(collection, size, out)
        wanted = {
            "planted": [(a, b) for a, b, last in planted if last < size],
            "quora_labelled": [(a, b) for a, b, last in quora if last < size],
        }

        runs: Dict[str, List[Dict[str, Any]]] = {}
        thresholds = {"semhash 0.9": 0.9}
        for round_ in range(args.rounds):
            for model in args.models:
                runs.setdefault(f"ours {bench.given_path(model, parts=3)}", []).append(
                    ours(bench, model, prefix, wanted)
                )
            if round_ == 0 and size in args.match_sizes:
                target = runs[next(iter(runs))][0]["n_pairs"]
                matched = semhash(bench, args.semhash_model, prefix, wanted, MATCH_FROM, match_pairs=target)[
                    "threshold"
                ]
                thresholds[f"semhash {matched} (pairs matched)"] = matched
            for name, threshold in thresholds.items():
                runs.setdefault(name, []).append(semhash(bench, args.semhash_model, prefix, wanted, threshold))
            print(json.dumps({size: {k: v[-1] for k, v in runs.items()}}, indent=1), file=sys.stderr)
        results[str(size)] = {name: min(rows, key=lambda r: r["wall_s"]) | {"walls_s": [r["wall_s"] for r in rows]}
                              for name, rows in runs.items()}  # fmt: skip
    report = {
        "benchmark": "dedupe_peers",
        "models": [bench.given_path(m, parts=3) for m in args.models],
        "semhash_model": bench.given_path(args.semhash_model, parts=3),
        "collection_size": truth["size"],
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": {name: version(name) for name in ("spacy-siamese", "semhash", "model2vec", "faiss-cpu", "usearch")},
        "results": results,
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.output_json:
        args.output_json.write_text(text + "\n", encoding="utf8")


def version(name: str) -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(name)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    main()
