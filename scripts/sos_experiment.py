#!/usr/bin/env python3
"""SOS's results set (docs/results/sos.md): a wrapper of `flashlane reproduce sos --results`.

The experiment (workloads and stand-ins, schedulers, the main set with and without a write
buffer, the load, write-buffer and chip-count sweeps, the run arguments and the tables) is
defined once, in python/flashlane/reproduce/sos.py; this script keeps its old flags. Output:
OUT/sos.md (the tables of docs/results/sos.md), runs.csv and the summaries. The runs go
through the package in-process: `--flashlane` is ignored.

    python3 scripts/sos_experiment.py [--quick] [--jobs 2] [--out out/sos[-quick]]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def shown(out: Path) -> str:
    """`out` as the command line shows it: relative to the repository when inside it."""
    return os.path.relpath(out) if out.is_relative_to(REPO) else str(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 3000 requests, fewer points")
    parser.add_argument("--jobs", type=int, help="runs at once (default 2)")
    parser.add_argument("--out", type=Path, help="default out/sos[-quick]")
    parser.add_argument("--flashlane", help="ignored (the package runs the simulator)")
    args = parser.parse_args()
    try:
        from flashlane.reproduce.__main__ import main as reproduce
    except ImportError as e:
        sys.exit(f"sos_experiment.py needs the flashlane package (pip install .): {e}")
    out = (args.out or REPO / ("out/sos-quick" if args.quick else "out/sos")).resolve()
    os.chdir(REPO)
    argv = ["sos", "--results", *(["--quick"] if args.quick else [])]
    argv += ["--out", shown(out), *(["--jobs", str(args.jobs)] if args.jobs else [])]
    return reproduce(argv)


if __name__ == "__main__":
    sys.exit(main())
