"""``python -m flashlane.reproduce PAPER [--quick] [--out DIR] [--jobs N] [--traces DIR]``."""

from __future__ import annotations

import argparse
import multiprocessing
import signal
import sys
from types import FrameType

from flashlane.reproduce import PAPERS, ReproduceError, reproduce


def _stop(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM or SIGINT: stop now. A process pool leaving its ``with`` block by an exception
    still runs every queued run to the end (minutes, writing files), so its workers are ended
    first; then the exception unwinds :func:`reproduce`, which removes the output folder it
    created, and the exit status is 128 + the signal, as a shell reports it."""
    for child in multiprocessing.active_children():
        child.terminate()
    raise SystemExit(128 + signum)


def install_signal_handlers() -> None:
    """Stop on SIGTERM and SIGINT as :func:`_stop` says (main thread only, as Python requires)."""
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="flashlane reproduce",
        description="Run a paper's experiment set and write runs.csv, the JSON summaries, "
        "one PNG+SVG per paper figure and report.html.",
    )
    parser.add_argument("paper", help=f"one of: {', '.join([*PAPERS, 'all'])}")
    parser.add_argument("--quick", action="store_true", help="the reduced set the tests run")
    parser.add_argument("--out", default=None, help="output folder (default out/reproduce-PAPER)")
    parser.add_argument("--jobs", type=int, default=None, help="runs at once (default 2)")
    parser.add_argument("--traces", default=None, help="the repository's traces/ folder")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    out = args.out or f"out/reproduce-{args.paper}" + ("-quick" if args.quick else "")
    command = " ".join(["flashlane reproduce", *(argv if argv is not None else sys.argv[1:])])
    install_signal_handlers()
    try:
        result = reproduce(
            args.paper,
            out,
            quick=args.quick,
            jobs=args.jobs,
            traces=args.traces,
            command=command,
        )
    except ReproduceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for figure, verdicts in result["verdicts"].items():
        for text, verdict in verdicts:
            print(f"{figure}: {verdict:9} {text}")
    print(f"{result['runs']} runs; report: {out}/report.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
