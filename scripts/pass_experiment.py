#!/usr/bin/env python3
"""PASS's results set (docs/results/pass.md): a wrapper of `flashlane reproduce pass --results`.

The experiment (stand-ins, schedulers, queue depths and layouts, the thread sweeps, Sec. 4.5
on the aged drive, the run arguments and the whole page docs/results/pass.md) is defined once,
in python/flashlane/reproduce/pass_.py; this script keeps its old flags and copies the page
(OUT/pass.md) to --doc: docs/results/pass.md for the full set, nowhere else for --quick. The
runs go through the package in-process: `--flashlane` is ignored; `--render-only` rewrites the
page from the summaries of an earlier run in OUT (it replaces `--from-csv`).

    python3 scripts/pass_experiment.py [--quick] [--jobs 2] [--out out/pass[-quick]]
        [--doc PATH] [--render-only]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def shown(out: Path) -> str:
    """`out` as the command line shows it: relative to the repository when inside it."""
    return os.path.relpath(out) if out.is_relative_to(REPO) else str(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="reduced set, a few minutes")
    parser.add_argument("--jobs", type=int, help="runs at once (default 2)")
    parser.add_argument("--out", type=Path, help="default out/pass[-quick]")
    parser.add_argument("--doc", type=Path, help="default: docs/results/pass.md (full set)")
    parser.add_argument("--render-only", action="store_true", help="no runs: rewrite the page")
    parser.add_argument("--flashlane", help="ignored (the package runs the simulator)")
    args = parser.parse_args()
    try:
        from flashlane.reproduce.__main__ import main as reproduce
    except ImportError as e:
        sys.exit(f"pass_experiment.py needs the flashlane package (pip install .): {e}")
    out = (args.out or REPO / ("out/pass-quick" if args.quick else "out/pass")).resolve()
    doc = args.doc.resolve() if args.doc else None
    if doc is None and not args.quick:
        doc = REPO / "docs/results/pass.md"
    os.chdir(REPO)
    argv = ["pass", "--results", *(["--quick"] if args.quick else [])]
    argv += ["--out", shown(out), *(["--jobs", str(args.jobs)] if args.jobs else [])]
    argv += ["--render-only"] if args.render_only else []
    status = reproduce(argv)
    if status == 0 and doc is not None:
        shutil.copyfile(out / "pass.md", doc)
        print(f"wrote {doc}")
    return status


if __name__ == "__main__":
    sys.exit(main())
