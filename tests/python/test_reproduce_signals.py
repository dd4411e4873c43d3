"""`flashlane reproduce` on SIGTERM or SIGINT: the process pool's workers are ended at once
(a pool leaving its ``with`` block by an exception would run every queued run first) and the
exit status is 128 + the signal. The pool here runs naps, not simulations."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, wait

from flashlane.reproduce.__main__ import install_signal_handlers


def nap(_):
    time.sleep(600)


if __name__ == "__main__":
    install_signal_handlers()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        futures = [pool.submit(nap, i) for i in range(6)]
        while len(multiprocessing.active_children()) < 2:
            time.sleep(0.05)
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
        wait(futures)
"""


def _running(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its parent does not count)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return not stat.rsplit(")", 1)[1].strip().startswith("Z")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_the_pool_workers_and_the_run(tmp_path: Path, signum: int) -> None:
    script = tmp_path / "pool.py"
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=tmp_path
    )
    assert process.stdout is not None
    workers = [int(pid) for pid in process.stdout.readline().split()]
    assert len(workers) == 2
    process.send_signal(signum)
    # A bound so that a broken handler fails rather than hangs (the naps last 600 s).
    assert process.wait(timeout=120) == 128 + signum
    for pid in workers:
        for _ in range(1000):
            if not _running(pid):
                break
            time.sleep(0.01)
        assert not _running(pid), f"worker {pid} outlived the run"
