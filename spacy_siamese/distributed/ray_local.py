"""A local Ray that the driver starts and that ends with it, however it ends: a driver killed with SIGKILL
leaves some of Ray's processes waiting forever, so a small reaper process, given their pids, kills those
still running when the driver's end closes its stdin.
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

# The reaper: reads "pid start-time" lines until the driver's end closes its stdin, then kills
# each listed process that still runs (the same start time: not a later process of that pid).
REAPER = """
import os, signal, sys, time
def started(pid):
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[19]
    except OSError:
        return None
pids = [line.split() for line in sys.stdin if line.strip()]
time.sleep(1.0)  # a driver that ended normally has shut Ray down by now
for sig in (signal.SIGTERM, signal.SIGKILL):
    left = [(int(pid), start) for pid, start in pids if started(pid) == start]
    for pid, _ in left:
        try:
            os.kill(pid, sig)
        except OSError:
            pass
    if not left:
        break
    time.sleep(2.0)
"""

_reaper: Optional["subprocess.Popen[bytes]"] = None


def init_local_ray(ray: Any, **kwargs: Any) -> None:
    """`ray.init(**kwargs)` with a reaper of the Ray processes it starts (on Linux, where they
    can be listed; a driver connecting to a running cluster, RAY_ADDRESS, starts none)."""
    global _reaper
    before = set(descendants(os.getpid()))
    ray.init(**kwargs)
    started = {pid: start for pid, start in descendants(os.getpid()).items() if pid not in before}
    if not started or _reaper is not None:
        return
    # A session of its own: a Ctrl+C at the terminal stops the driver, which shuts Ray down, not the reaper
    _reaper = subprocess.Popen(
        [sys.executable, "-c", REAPER], stdin=subprocess.PIPE, start_new_session=True, close_fds=True
    )
    assert _reaper.stdin is not None
    _reaper.stdin.write("".join(f"{pid} {start}\n" for pid, start in started.items()).encode())
    _reaper.stdin.flush()  # left open: it closes when this process ends


def descendants(root: int) -> Dict[int, str]:
    """{pid: start time} of every process descended from `root` ({} where /proc cannot tell)."""
    parents: List[Tuple[int, int, str]] = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.append((int(entry.name), int(fields[1]), fields[19]))
    found: Dict[int, str] = {}
    frontier = {root}
    while frontier:
        children = {pid: start for pid, ppid, start in parents if ppid in frontier and pid not in found}
        found.update(children)
        frontier = set(children)
    return found
