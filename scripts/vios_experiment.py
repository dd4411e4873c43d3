#!/usr/bin/env python3
"""VIOS's results set (docs/results/vios.md): a wrapper of `flashlane reproduce vios --results`.

The experiment (platforms, wear stages, traces and Table 1 stand-ins, schedulers, the run
arguments and the tables) is defined once, in python/flashlane/reproduce/vios.py; this script
keeps its old flags and prints the tables (also written to OUT/vios.md, beside runs.csv and
the summaries). The runs go through the package in-process: `--flashlane` is ignored.

    python3 scripts/vios_experiment.py [--quick] [--platform ssdsim,default] [--stages 12000]
        [--no-stand-ins] [--max-requests N] [--jobs 2] [--out out/vios[-quick]]
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
    parser.add_argument("--quick", action="store_true", help="2 traces, 1 stand-in, 12K P/E")
    parser.add_argument("--platform", help="comma-separated (default: ssdsim,default)")
    parser.add_argument("--stages", help="e.g. 6000,12000")
    parser.add_argument("--no-stand-ins", action="store_true", help="bundled traces only")
    parser.add_argument("--max-requests", type=int)
    parser.add_argument("--jobs", type=int, help="runs at once (default 2)")
    parser.add_argument("--out", type=Path, help="default out/vios[-quick]")
    parser.add_argument("--flashlane", help="ignored (the package runs the simulator)")
    args = parser.parse_args()
    try:
        from flashlane.reproduce.__main__ import main as reproduce
    except ImportError as e:
        sys.exit(f"vios_experiment.py needs the flashlane package (pip install .): {e}")
    out = (args.out or REPO / ("out/vios-quick" if args.quick else "out/vios")).resolve()
    os.chdir(REPO)
    argv = ["vios", "--results", *(["--quick"] if args.quick else [])]
    argv += ["--platforms", args.platform] if args.platform else []
    argv += ["--stages", args.stages] if args.stages else []
    argv += ["--no-stand-ins"] if args.no_stand_ins else []
    argv += ["--max-requests", str(args.max_requests)] if args.max_requests else []
    argv += ["--out", shown(out), *(["--jobs", str(args.jobs)] if args.jobs else [])]
    status = reproduce(argv)
    if status == 0:
        print((out / "vios.md").read_text(), end="")
    return status


if __name__ == "__main__":
    sys.exit(main())
