#!/usr/bin/env python3
"""PIQ's results set (docs/results/piq.md): a wrapper of `flashlane reproduce piq --results`.

The experiment (platforms, schemes, traces and Table I stand-ins, the Figure 11 sweep, the run
arguments and the tables) is defined once, in python/flashlane/reproduce/piq.py; this script
keeps its old flags and prints the tables (also written to OUT/piq.md, beside runs.csv and
the summaries). The runs go through the package in-process: `--flashlane` is ignored.

    python3 scripts/piq_experiment.py [--quick] [--platforms ssdsim,host_queue,shared_queue]
        [--jobs 2] [--out out/piq[-quick]]
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
    parser.add_argument("--quick", action="store_true", help="two traces, two stand-ins")
    parser.add_argument("--platforms", help="comma-separated (default: all)")
    parser.add_argument("--jobs", type=int, help="runs at once (default 2)")
    parser.add_argument("--out", type=Path, help="default out/piq[-quick]")
    parser.add_argument("--flashlane", help="ignored (the package runs the simulator)")
    args = parser.parse_args()
    try:
        from flashlane.reproduce.__main__ import main as reproduce
    except ImportError as e:
        sys.exit(f"piq_experiment.py needs the flashlane package (pip install .): {e}")
    out = (args.out or REPO / ("out/piq-quick" if args.quick else "out/piq")).resolve()
    os.chdir(REPO)
    argv = ["piq", "--results", *(["--quick"] if args.quick else [])]
    argv += ["--platforms", args.platforms] if args.platforms else []
    argv += ["--out", shown(out), *(["--jobs", str(args.jobs)] if args.jobs else [])]
    status = reproduce(argv)
    if status == 0:
        print((out / "piq.md").read_text(), end="")
    return status


if __name__ == "__main__":
    sys.exit(main())
