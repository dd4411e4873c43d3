#!/usr/bin/env python3
"""Venice's results set (docs/results/venice.md): a wrapper of
`flashlane reproduce venice --results`.

The experiment (designs and the variants not in the paper, presets, array shapes, platform
readings, stand-ins, real traces and mixes, the run arguments and the whole page
docs/results/venice.md) is defined once, in python/flashlane/reproduce/venice.py; this script
keeps its old flags and copies the page (OUT/venice.md) to --doc: docs/results/venice.md for
the full set, nowhere else for --quick. The runs go through the package in-process:
`--flashlane` is ignored; `--render-only` rewrites the page from the summaries of an earlier
run in OUT (same --requests).

    python3 scripts/venice_experiment.py [--quick] [--requests N] [--jobs 2]
        [--out out/venice[-quick]] [--doc PATH] [--render-only]
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
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--requests", type=int, help="per workload (default 4000; quick 1000)")
    parser.add_argument("--jobs", type=int, help="runs at once (default 2)")
    parser.add_argument("--out", type=Path, help="default out/venice[-quick]")
    parser.add_argument("--doc", type=Path, help="default: docs/results/venice.md (full set)")
    parser.add_argument("--render-only", action="store_true", help="no runs: rewrite the page")
    parser.add_argument("--flashlane", help="ignored (the package runs the simulator)")
    args = parser.parse_args()
    try:
        from flashlane.reproduce.__main__ import main as reproduce
    except ImportError as e:
        sys.exit(f"venice_experiment.py needs the flashlane package (pip install .): {e}")
    out = (args.out or REPO / ("out/venice-quick" if args.quick else "out/venice")).resolve()
    doc = args.doc.resolve() if args.doc else None
    if doc is None and not args.quick:
        doc = REPO / "docs/results/venice.md"
    os.chdir(REPO)
    argv = ["venice", "--results", *(["--quick"] if args.quick else [])]
    argv += ["--requests", str(args.requests)] if args.requests else []
    argv += ["--out", shown(out), *(["--jobs", str(args.jobs)] if args.jobs else [])]
    argv += ["--render-only"] if args.render_only else []
    status = reproduce(argv)
    if status == 0 and doc is not None:
        shutil.copyfile(out / "venice.md", doc)
        print(f"wrote {doc}")
    return status


if __name__ == "__main__":
    sys.exit(main())
