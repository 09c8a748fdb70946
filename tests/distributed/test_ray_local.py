"""A local Ray started by the driver ends with it, even when the driver is killed."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spacy_siamese.distributed.ray_local import descendants, session_processes

ROOT = Path(__file__).resolve().parents[2]
# A driver whose "Ray" starts one process in `ray.init` and, after it returns, an agent that is not its
# descendant (started in a session of its own, as an orphan would be) holding a log of the session, and
# a worker that names the session on its command line.
FAKE_DRIVER = """
import subprocess, sys, time, types
from spacy_siamese.distributed.ray_local import init_local_ray
session = sys.argv[1]
def init(**kwargs):
    subprocess.Popen(["sh", "-c", f"exec sleep 600 >> {session}/logs/gcs.out"])
    return types.SimpleNamespace(address_info={"session_dir": session})
init_local_ray(types.SimpleNamespace(init=init))
subprocess.Popen(["sh", "-c", f"exec sleep 600 >> {session}/logs/agent.out"], start_new_session=True)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", f"--session-dir={session}"])
print("ready", flush=True)
time.sleep(600)
"""
# A driver whose reaper's pipe closes while it still runs (as when its interpreter finalizes), holding a
# log of the session for a while after.
SLOW_END_DRIVER = """
import subprocess, sys, time, types
from spacy_siamese.distributed import ray_local
session = sys.argv[1]
def init(**kwargs):
    subprocess.Popen(["sh", "-c", f"exec sleep 600 >> {session}/logs/gcs.out"])
    return types.SimpleNamespace(address_info={"session_dir": session})
ray_local.init_local_ray(types.SimpleNamespace(init=init))
log = open(f"{session}/logs/driver.out", "w")
ray_local._reaper.stdin.close()
time.sleep(2.0)
log.write("done")
"""
DRIVER = """
import time, ray
from spacy_siamese.distributed.ray_local import init_local_ray
context = init_local_ray(ray, num_cpus=1, include_dashboard=False, log_to_driver=False)
ray.get(ray.remote(lambda: 1).remote())  # a worker started after ray.init returned
print(context.address_info["session_dir"], flush=True)
time.sleep(600)
"""


def kill_driver_and_wait(script, *args, deadline=10.0):
    """Run a driver, SIGKILL it once it prints a line, and wait up to `deadline` s for its session's
    processes to end: (that line, the processes left)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen([sys.executable, "-c", script, *args], env=env, stdout=subprocess.PIPE, text=True)
    session, left = None, []
    try:
        line = driver.stdout.readline().strip()
        session = args[0] if args else line
        assert session and session_processes(session), line
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        end = time.monotonic() + deadline
        while session_processes(session) and time.monotonic() < end:
            time.sleep(0.2)
        left = session_processes(session)
        return line, left
    finally:
        if driver.poll() is None:
            driver.kill()
        for pid in session_processes(session) if session else []:  # whatever the outcome, nothing keeps running
            os.kill(pid, signal.SIGKILL)
        driver.stdout.close()


def test_a_killed_driver_leaves_no_process_of_its_session_behind(tmp_path):
    """Before: only the processes started within `ray.init` were stopped; an agent started later (or
    orphaned) kept running (two Ray agents outlived a killed `dedupe-ray` for 60-120 s)."""
    session = tmp_path / "session_1"
    (session / "logs").mkdir(parents=True)
    bystander = subprocess.Popen(["sleep", "600"])  # not of the session: left alone
    try:
        line, left = kill_driver_and_wait(FAKE_DRIVER, str(session), deadline=5.0)
        assert line == "ready" and left == []
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_a_driver_still_ending_when_its_pipe_closes_is_not_stopped(tmp_path):
    """Before: the reaper stopped its session 0.5 s after the pipe closed, the driver too: a 3M-text
    `dedupe-ray` wrote all its pairs, then ended with SIGTERM (exit code -15) while finalizing."""
    session = tmp_path / "session_1"
    (session / "logs").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.run([sys.executable, "-c", SLOW_END_DRIVER, str(session)], env=env, timeout=60)
    assert driver.returncode == 0
    assert (session / "logs" / "driver.out").read_text() == "done"
    deadline = time.monotonic() + 10
    while session_processes(str(session)):  # the rest of the session is still stopped
        assert time.monotonic() < deadline, session_processes(str(session))
        time.sleep(0.2)


def test_session_processes_are_those_naming_or_holding_the_directory(tmp_path):
    session = tmp_path / "session_1"
    session.mkdir()
    holder = subprocess.Popen(["sh", "-c", f"exec sleep 60 > {session}/log"])
    other = subprocess.Popen(["sh", "-c", f"exec sleep 60 > {tmp_path}/session_10"])  # a longer name
    try:
        deadline = time.monotonic() + 10
        while holder.pid not in session_processes(str(session)):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert other.pid not in session_processes(str(session)) and os.getpid() not in session_processes(str(session))
    finally:
        for process in (holder, other):
            process.kill()
            process.wait()


def test_descendants_lists_a_child_and_its_child():
    child = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; subprocess.run(['sleep', '30'])"])
    try:
        deadline = time.monotonic() + 20
        while len(descendants(os.getpid())) < 2:
            assert time.monotonic() < deadline, descendants(os.getpid())
            time.sleep(0.1)
        assert child.pid in descendants(os.getpid())
    finally:
        for pid in descendants(child.pid):
            os.kill(pid, signal.SIGKILL)
        child.kill()
        child.wait()


@pytest.mark.slow
def test_a_killed_driver_leaves_no_ray_process_behind():
    """Ray's agents outlived a driver killed with SIGKILL (for 60-120 s, or waiting for the dead GCS
    forever): every process of its session ends within seconds."""
    pytest.importorskip("ray")
    session, left = kill_driver_and_wait(DRIVER, deadline=10.0)
    assert left == [], [Path(f"/proc/{pid}/cmdline").read_bytes()[:100] for pid in left]
