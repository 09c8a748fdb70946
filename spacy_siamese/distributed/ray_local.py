"""A local Ray that ends with the driver that started it, even a killed one: a reaper (this file,
run as a script) kills the session's processes once the driver, whose end closes its stdin, is gone."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, List, Optional, Set, Tuple, Union

_reaper: Optional["subprocess.Popen[bytes]"] = None


def init_local_ray(ray: Any, **kwargs: Any) -> Any:
    """`ray.init(**kwargs)` with a reaper of the Ray session it starts (on Linux, where processes can be
    listed; a driver connecting to a running cluster, RAY_ADDRESS, starts none); its return value."""
    global _reaper
    before = descendants(os.getpid())
    context = ray.init(**kwargs)
    started = descendants(os.getpid()) - before
    session = getattr(context, "address_info", {}).get("session_dir")
    if not started or not session or _reaper is not None:
        return context
    # Isolated (-I: only the standard library is imported) and in a session of its own: a Ctrl+C at the
    # terminal stops the driver, which shuts Ray down, not the reaper.
    _reaper = subprocess.Popen(
        [sys.executable, "-I", str(Path(__file__).resolve())], stdin=subprocess.PIPE, start_new_session=True
    )
    assert _reaper.stdin is not None
    _reaper.stdin.write(f"{session}\n{os.getpid()} {start_time(os.getpid())}\n".encode())
    _reaper.stdin.flush()  # left open: it closes when this process ends
    return context


def session_processes(session: str) -> List[int]:
    """The pids of other processes naming the directory `session` on their command line or holding a file in it."""
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            args = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            files = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
        except OSError:
            continue
        named = any(arg.endswith(session) or session + "/" in arg for arg in args)
        if named or any(file == session or file.startswith(session + "/") for file in files):
            found.append(int(entry.name))
    return [pid for pid in found if pid != os.getpid()]


def reap(session: str, *, wait: float = 1.0) -> None:
    """Stop the processes of a Ray session: SIGTERM, then SIGKILL to those left after `wait` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = session_processes(session)
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, sig)
        if not left:
            return
        time.sleep(wait)


def stat_fields(pid: Union[int, str]) -> List[str]:
    """The fields of /proc/PID/stat after the command name (the state first); OSError if there is none."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    if not fields:
        raise OSError(f"/proc/{pid}/stat has no fields")
    return fields


def start_time(pid: int) -> Optional[int]:
    """When process `pid` started (clock ticks after boot), None if it has ended (or is a zombie)."""
    try:
        fields = stat_fields(pid)
    except (OSError, IndexError):
        return None
    return None if fields[0] in ("Z", "X") else int(fields[19])


def wait_for_exit(pid: int, started: int, *, poll: float = 0.1) -> None:
    """Return once process `pid` (started at `started`, not a later process given its pid) has ended."""
    while start_time(pid) == started:
        time.sleep(poll)


def descendants(root: int) -> Set[int]:
    """The pids of every process descended from `root` (none where /proc cannot tell)."""
    parents: List[Tuple[int, int]] = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            parents.append((int(entry.name), int(stat_fields(entry.name)[1])))
        except (OSError, IndexError, ValueError):
            continue
    found: Set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, ppid in parents if ppid in frontier and pid not in found}
        found |= frontier
    return found


if __name__ == "__main__":  # the reaper: the session directory, the driver, then the end of its pipe
    session = sys.stdin.readline().strip()
    pid, started = sys.stdin.readline().split()
    sys.stdin.read()
    # The pipe closes when the driver ends, or earlier, as its interpreter finalizes: a driver
    # writing its last output or shutting a large Ray down is not stopped.
    wait_for_exit(int(pid), int(started))
    time.sleep(0.5)  # a driver that ended normally has shut its Ray down by now
    reap(session)
