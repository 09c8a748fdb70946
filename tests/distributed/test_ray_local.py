"""A local Ray started by the driver ends with it, even when the driver is killed."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from spacy_siamese.distributed.ray_local import descendants

DRIVER = """
import sys, time, ray
from spacy_siamese.distributed.ray_local import descendants, init_local_ray
import os
init_local_ray(ray, num_cpus=1, include_dashboard=False, log_to_driver=False)
print(" ".join(map(str, descendants(os.getpid()))), flush=True)
time.sleep(600)
"""


def _running(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended


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
    """Ray's agents outlived a driver killed with SIGKILL (they wait for the dead GCS forever)."""
    pytest.importorskip("ray")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    driver = subprocess.Popen([sys.executable, "-c", DRIVER], env=env, stdout=subprocess.PIPE, text=True)
    pids = []
    try:
        line = driver.stdout.readline()
        pids = [int(pid) for pid in line.split()]
        assert len(pids) >= 3, line  # gcs_server, raylet, agents, ... and the reaper
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        deadline = time.monotonic() + 60
        while [pid for pid in pids if _running(pid)]:
            assert time.monotonic() < deadline, [Path(f"/proc/{p}/cmdline").read_bytes() for p in pids if _running(p)]
            time.sleep(0.5)
    finally:
        for pid in pids:  # whatever the test's outcome, nothing of it keeps running
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()
        driver.stdout.close()
