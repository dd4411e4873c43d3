"""``python -m flashlane.reproduce PAPER [--quick] [--results [OPTIONS]] [--out DIR] [--jobs N]
[--traces DIR] [--precondition-cache DIR] [--reuse | --render-only]``."""

from __future__ import annotations

import argparse
import multiprocessing
import signal
import sys
from types import FrameType

from flashlane.reproduce import PAPERS, STUDIES, ReproduceError, paper_module, reproduce
from flashlane.reproduce._core import Option


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


def _paper_of(argv: list[str] | None) -> str | None:
    """The PAPER argument, read before the full parser exists (its options depend on it): the
    first argument that names a paper, not counting the values of --out, --jobs, --traces,
    --precondition-cache."""
    pre = argparse.ArgumentParser(add_help=False)
    for flag in ("--out", "--jobs", "--traces", "--precondition-cache"):
        pre.add_argument(flag)
    _, rest = pre.parse_known_args(argv)
    return next((a for a in rest if a in PAPERS or a in STUDIES or a == "all"), None)


def build_parser(paper: str | None) -> tuple[argparse.ArgumentParser, list[Option]]:
    """The parser of `flashlane reproduce`, with the results-set options of `paper` (one of
    PAPERS; else none), and those options. crates/flashlane-cli/src/reproduce.rs prints the
    same options as its own help when this package is missing (tests/python/test_reproduce.py
    checks that it names every one of them)."""
    parser = argparse.ArgumentParser(
        prog="flashlane reproduce",
        description="Run a paper's experiment set and write runs.csv, the JSON summaries, "
        "one PNG+SVG per paper figure and report.html; with --results, the set behind "
        "docs/results/PAPER.md and its Markdown tables (PAPER.md).",
    )
    parser.add_argument(
        "paper",
        help=f"one of: {', '.join([*PAPERS, 'all', *STUDIES])} (all: the five papers; combos: "
        "their techniques alone and together, docs/results/combinations.md; `PAPER --help` adds "
        "the options of its results set)",
    )
    parser.add_argument("--quick", action="store_true", help="the reduced set the tests run")
    parser.add_argument(
        "--results",
        action="store_true",
        help="the results set: every platform, variant and sweep behind docs/results/PAPER.md; "
        "writes its Markdown tables (OUT/PAPER.md) instead of the figures and report",
    )
    parser.add_argument(
        "--out",
        default=None,
        help="output folder (default out/reproduce-PAPER[-results][-quick])",
    )
    parser.add_argument("--jobs", type=int, default=None, help="runs at once (default 2)")
    parser.add_argument("--traces", default=None, help="the repository's traces/ folder")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="do not rerun a point whose summary (same command) an earlier run left in --out",
    )
    parser.add_argument(
        "--precondition-cache",
        default=None,
        metavar="DIR",
        help="keep snapshots of preconditioned drives in DIR and load them in every run of the "
        "same drive (docs/sweeps.md); runs.csv is the same with or without (default: a "
        "temporary folder, removed when the call ends)",
    )
    parser.add_argument(
        "--render-only",
        action="store_true",
        help="run nothing: rewrite the tables (or figures) from the summaries in --out",
    )
    options: list[Option] = []
    if paper in PAPERS:
        options = list(getattr(paper_module(paper), "RESULTS_OPTIONS", ()))
    if options:
        group = parser.add_argument_group(f"options of the {paper} results set (with --results)")
        for option in options:
            if option.parse is None:
                group.add_argument(
                    option.flag(),
                    dest=f"option_{option.name}",
                    action="store_true",
                    default=None,
                    help=option.help,
                )
            else:
                group.add_argument(
                    option.flag(),
                    dest=f"option_{option.name}",
                    type=option.parse,
                    default=None,
                    help=option.help,
                    metavar="VALUE",
                )
    return parser, options


def run_count(result: dict, out: str) -> str:
    """The runs of a :func:`reproduce` result as the last line gives them: the simulations of
    this call first (the count the progress went to), then those reused from `out`, and the
    points where more of them shared a run (one row each in runs.csv)."""
    text = f"{result['ran']} runs"
    if result["reused"]:
        text += f", {result['reused']} reused from {out}"
    if result["rows"] != result["runs"]:
        text += f" ({result['rows']} points: points with the same arguments share a run)"
    return text


def without_cache_option(argv: list[str]) -> list[str]:
    """`argv` without ``--precondition-cache DIR`` (or ``--precondition-cache=DIR``)."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--precondition-cache":
            skip = True
        elif not arg.startswith("--precondition-cache="):
            kept.append(arg)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser, options = build_parser(_paper_of(argv))
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    given = {
        o.name: getattr(args, f"option_{o.name}")
        for o in options
        if getattr(args, f"option_{o.name}") is not None
    }
    if given and not args.results:
        parser.error(f"{next(o.flag() for o in options if o.name in given)} needs --results")
    out = args.out or (
        f"out/reproduce-{args.paper}"
        + ("-results" if args.results else "")
        + ("-quick" if args.quick else "")
    )
    # The command that makes these results: --reuse and --render-only change only what runs,
    # --precondition-cache only how long it takes.
    given_argv = argv if argv is not None else sys.argv[1:]
    shown = without_cache_option([a for a in given_argv if a not in ("--reuse", "--render-only")])
    command = " ".join(["flashlane reproduce", *shown])
    install_signal_handlers()
    try:
        result = reproduce(
            args.paper,
            out,
            quick=args.quick,
            jobs=args.jobs,
            traces=args.traces,
            command=command,
            results=args.results,
            options=given,
            reuse=args.reuse,
            render_only=args.render_only,
            precondition_cache=args.precondition_cache,
        )
    except ReproduceError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for figure, verdicts in result["verdicts"].items():
        for text, verdict in verdicts:
            print(f"{figure}: {verdict:9} {text}")
    where = (
        f"tables: {', '.join(result['tables'])}"
        if result["tables"]
        else f"report: {out}/report.html"
    )
    print(f"{run_count(result, out)}; {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
