"""`python -m spacy_siamese dedupe-ray` against `dedupe` on prefixes of one collection: wall time
and stage times with 1 and 2 Ray workers, whether the pairs are the single-machine ones, and (at
the first size, unless `--no-kill-run`) a run in which one worker is killed (`kill -9`) while it
searches.

    python benchmarks/dedupe_ray.py MODEL --collection-dir benchmarks/.dedupe --sizes 100000 300000 \\
        --output-json benchmarks/results/dedupe_ray.json

The collection prefixes are the ones `benchmarks/dedupe.py` writes (ids in file order, so Ray's
order by id is the file's). Ray runs in local mode on this machine, started by the command.
Fewer workers than cores are run twice: on every core, where the driver, Ray's own processes
and the BLAS threads of the driver's stages use the cores the actors leave free, and pinned to
as many cores as workers (the whole process tree, by CPU affinity), as when each worker brings
its own machine; the speed-ups are given for both. Each run reports its peak memory, that of
the command and every process below it, Ray's included: the sum of their resident sets (every
0.1 s, as `benchmarks/dedupe.py` samples it) and of their proportional set sizes (every 1 s: the
object store's shared pages count once, not once in each process that maps them), and
the disk its outputs take (the work dir or the Parquet vectors, and the pairs).
"""

import argparse
import importlib.util
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import spacy

import spacy_siamese
from spacy_siamese.util import given_path

HERE = Path(__file__).parent


def load_dedupe_module() -> Any:
    spec = importlib.util.spec_from_file_location("dedupe_benchmark", HERE / "dedupe.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


TREE_RSS = load_dedupe_module().tree_rss  # the memory of a process tree, as benchmarks/dedupe.py reads it


def disk_bytes(*paths: Path) -> int:
    """Bytes of the files at and under `paths`."""
    files = [f for p in paths for f in ([p] if p.is_file() else p.rglob("*"))]
    return sum(f.stat().st_size for f in files if f.is_file())


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


def run(
    command: List[str], kill: bool = False, delay: float = 3.0, cores: int = 0
) -> Tuple[float, Tuple[int, int], List[int]]:
    """Wall seconds of a command (on its first `cores` CPUs only, if given), the peak memory of its
    process tree (`memory_fields`) and the pids it had killed."""
    stop, killed = threading.Event(), []  # type: ignore[var-annotated]
    thread: Optional[threading.Thread] = None
    if kill:
        thread = threading.Thread(target=kill_one_when_searching, args=(stop, killed, delay), daemon=True)
        thread.start()
    pin = (lambda: os.sched_setaffinity(0, range(cores))) if cores else None
    start = time.perf_counter()
    proc = subprocess.Popen(command, preexec_fn=pin)
    peak_rss = peak_pss = samples = 0
    while proc.poll() is None:
        peak_rss = max(peak_rss, TREE_RSS(proc.pid))
        if samples % 10 == 0:
            peak_pss = max(peak_pss, TREE_RSS(proc.pid, proportional=True))
        samples += 1
        time.sleep(0.1)
    wall = time.perf_counter() - start
    stop.set()
    if proc.returncode:
        raise SystemExit(f"{' '.join(command)} failed with exit code {proc.returncode}")
    return wall, (peak_rss, peak_pss), killed


def memory_fields(peak: Tuple[int, int]) -> Dict[str, float]:
    """A run's peak resident-set sum and proportional set size (`run`), in GB."""
    return {"peak_rss_gb": round(peak[0] / 2**30, 2), "peak_pss_gb": round(peak[1] / 2**30, 2)}


def speedup(low: Dict[str, Any], high: Dict[str, Any]) -> Dict[str, float]:
    """How many times faster `high` ran than `low`: the wall time and the stages on the actors."""
    stages = {s: round(low["stages_s"][s] / high["stages_s"][s], 2) for s in ("encode", "search")}
    return {"wall": round(low["wall_s"] / high["wall_s"], 2), **stages}


def size_results(args: argparse.Namespace, size: int, kill_run: bool) -> Dict[str, Any]:
    prefix = args.collection_dir / f"prefix-{size}.jsonl"
    if not prefix.exists():
        raise SystemExit(f"{prefix} is missing: run benchmarks/dedupe.py with --sizes {size} first")
    with tempfile.TemporaryDirectory(prefix="ray-", dir=args.collection_dir) as tmp:  # ours alone: removed after
        return runs_on(args, size, prefix, Path(tmp), kill_run)


def runs_on(args: argparse.Namespace, size: int, prefix: Path, out: Path, kill_run: bool) -> Dict[str, Any]:
    """`dedupe` and the `dedupe-ray` runs on the prefix of `size` texts, their files written in `out`."""
    base = [sys.executable, "-m", "spacy_siamese"]
    single = out / "single.jsonl"
    stats = out / "single.json"
    command = [*base, "dedupe", args.model, str(prefix), "-o", str(single), "--work-dir", str(out / "work")]
    wall, peak, _ = run([*command, "--stats-json", str(stats), "--no-progress"])
    expected = read_pairs(single)
    results: Dict[str, Any] = {
        "single_machine": {
            "wall_s": round(wall, 1),
            "stages_s": json.loads(stats.read_text())["stages_s"],
            **memory_fields(peak),
            "disk_gb": round(disk_bytes(out / "work", single) / 2**30, 2),
            "n_pairs": len(expected),
        }
    }
    print(json.dumps({size: results}), file=sys.stderr)
    cpus = os.cpu_count() or 1
    runs = [(w, False, 0) for w in args.workers] + [(w, False, w) for w in args.workers if w < cpus]
    runs += [(max(args.workers), True, 0)] if kill_run else []
    for workers, kill, cores in runs:
        key = f"workers_{workers}" + (f"_on_{cores}_cores" if cores else "") + ("_one_killed" if kill else "")
        pairs, stats = out / f"{key}.jsonl", out / f"{key}.json"
        command = [*base, "dedupe-ray", args.model, str(prefix), "--vectors-output", str(out / f"vectors-{key}")]
        command += ["-o", str(pairs), "--workers", str(workers), "--stats-json", str(stats), "--no-progress"]
        wall, peak, killed = run(command, kill=kill, cores=cores)
        got = read_pairs(pairs)
        results[key] = {
            "wall_s": round(wall, 1),
            "stages_s": json.loads(stats.read_text())["stages_s"],
            **memory_fields(peak),
            "disk_gb": round(disk_bytes(out / f"vectors-{key}", pairs) / 2**30, 2),
            "n_pairs": len(got),
            "same_pairs_as_single_machine": got == expected,
            "workers_killed": len(killed),
        }
        print(json.dumps({size: {key: results[key]}}), file=sys.stderr)
    low, high = min(args.workers), max(args.workers)
    if low != high:
        results["speedup"] = speedup(results[f"workers_{low}"], results[f"workers_{high}"])
        if low < cpus:
            pinned = results[f"workers_{low}_on_{low}_cores"]
            results[f"speedup_from_{low}_worker_on_{low}_cores"] = speedup(pinned, results[f"workers_{high}"])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("--collection-dir", type=Path, default=Path("benchmarks/.dedupe"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--no-kill-run", dest="kill_run", action="store_false", help="no run with a killed worker")
    parser.add_argument("--output-json", type=Path, default=None)
    args = parser.parse_args()
    results = {
        str(size): size_results(args, size, kill_run=args.kill_run and i == 0) for i, size in enumerate(args.sizes)
    }
    report = {
        "benchmark": "dedupe-ray",
        "sizes": args.sizes,
        "model": given_path(args.model, parts=4),
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
