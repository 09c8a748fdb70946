"""`python -m spacy_siamese dedupe-ray` against `dedupe` on one collection: wall time with 1 and 2
Ray workers, whether the pairs are the single-machine ones, and a run in which one worker is
killed (`kill -9`) while it searches.

    python benchmarks/dedupe_ray.py MODEL --collection-dir benchmarks/.dedupe --size 100000 \\
        --output-json benchmarks/results/dedupe_ray.json

The collection prefix is the one `benchmarks/dedupe.py` writes (ids in file order, so Ray's
order by id is the file's). Ray runs in local mode on this machine, started by the command.
"""

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import spacy

import spacy_siamese


def read_pairs(path: Path) -> Set[Tuple[str, str, float]]:
    with path.open(encoding="utf8") as f:
        return {(str(r["id1"]), str(r["id2"]), round(float(r["score"]), 6)) for r in map(json.loads, f)}


def worker_pids(name: str) -> List[int]:
    """Ray worker processes whose command line mentions `name` (their actor class)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if name.encode() in f.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def kill_one_when_searching(stop: threading.Event, killed: List[int], delay: float) -> None:
    """Kill one SearchShard actor `delay` seconds after the first appears."""
    while not stop.is_set():
        pids = worker_pids("SearchShard")
        if pids:
            time.sleep(delay)
            for pid in worker_pids("SearchShard")[:1]:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            return
        time.sleep(0.2)


def run(command: List[str], kill: bool = False, delay: float = 3.0) -> Tuple[float, List[int]]:
    stop, killed = threading.Event(), []  # type: ignore[var-annotated]
    thread: Optional[threading.Thread] = None
    if kill:
        thread = threading.Thread(target=kill_one_when_searching, args=(stop, killed, delay), daemon=True)
        thread.start()
    start = time.perf_counter()
    subprocess.run(command, check=True)
    wall = time.perf_counter() - start
    stop.set()
    return wall, killed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--collection-dir", type=Path, default=Path("benchmarks/.dedupe"))
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--output-json", type=Path, default=None)
    args = parser.parse_args()
    prefix = args.collection_dir / f"prefix-{args.size}.jsonl"
    if not prefix.exists():
        raise SystemExit(f"{prefix} is missing: run benchmarks/dedupe.py with --sizes {args.size} first")
    out = args.collection_dir / "ray"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    base = [sys.executable, "-m", "spacy_siamese"]
    single = out / "single.jsonl"
    wall, _ = run([*base, "dedupe", args.model, str(prefix), "-o", str(single), "--work-dir", str(out / "work")])
    results: Dict[str, Any] = {"single_machine": {"wall_s": round(wall, 1), "n_pairs": len(read_pairs(single))}}
    expected = read_pairs(single)
    runs = [(w, False) for w in args.workers] + [(max(args.workers), True)]
    for workers, kill in runs:
        pairs = out / f"ray-{workers}{'-killed' if kill else ''}.jsonl"
        command = [*base, "dedupe-ray", args.model, str(prefix), "--vectors", str(out / f"vectors-{workers}-{kill}")]
        stats = out / f"stats-{workers}-{kill}.json"
        command += ["-o", str(pairs), "--workers", str(workers), "--stats-json", str(stats)]
        wall, killed = run(command, kill=kill)
        got = read_pairs(pairs)
        key = f"workers_{workers}" + ("_one_killed" if kill else "")
        results[key] = {
            "wall_s": round(wall, 1),
            "stages_s": json.loads(stats.read_text())["stages_s"],
            "n_pairs": len(got),
            "same_pairs_as_single_machine": got == expected,
            "workers_killed": len(killed),
        }
        print(json.dumps({key: results[key]}), file=sys.stderr)
    low, high = f"workers_{min(args.workers)}", f"workers_{max(args.workers)}"
    if low != high:  # speed-up of the whole run and of the stages that run on the actors
        stages = results[low]["stages_s"]
        results["speedup"] = {
            "wall": round(results[low]["wall_s"] / results[high]["wall_s"], 2),
            **{s: round(stages[s] / results[high]["stages_s"][s], 2) for s in ("encode", "search")},
        }
    report = {
        "benchmark": "dedupe-ray",
        "size": args.size,
        "model": Path(args.model).name,
        "ray": "local mode on this machine",
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
