"""A script that runs flashlane.sweep on the process pool without `if __name__ == "__main__":`
ends with one line saying what to do, not BrokenProcessPool and a spawn.py traceback per worker;
the same script with the guard runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SWEEP = """\
import flashlane

frame = flashlane.sweep(
    "mqsim-ssd", {"seed": [1, 2]}, [TRACE], trace_format="mqsim", jobs=2
)
print("rows", frame.height)
"""


def run_script(directory: Path, body: str) -> subprocess.CompletedProcess[str]:
    trace = directory / "tiny.mqsim"
    trace.write_text("".join(f"{i * 10_000} 0 {i * 8} 8 {i % 2}\n" for i in range(20)))
    script = directory / "sweep_script.py"
    script.write_text(body.replace("TRACE", repr(str(trace))))
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_an_unguarded_script_gets_one_line_saying_what_to_do(tmp_path):
    done = run_script(tmp_path, SWEEP)
    assert done.returncode != 0, done.stdout
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: flashlane.sweep: the worker processes could not start"), (
        done.stderr
    )
    assert str(tmp_path / "sweep_script.py") in last, last
    assert 'put that code under `if __name__ == "__main__":`' in last, last
    # The workers end quietly: no spawn traceback, no BrokenProcessPool.
    assert "spawn.py" not in done.stderr, done.stderr
    assert "BrokenProcessPool" not in done.stderr, done.stderr
    assert done.stderr.count("Traceback") == 1, done.stderr
    assert "rows" not in done.stdout


def test_the_guarded_script_runs(tmp_path):
    guarded = "import flashlane\n\nif __name__ == '__main__':\n" + textwrap.indent(
        SWEEP.removeprefix("import flashlane\n\n"), "    "
    )
    done = run_script(tmp_path, guarded)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "rows 2"
