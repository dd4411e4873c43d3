#!/usr/bin/env python3
"""Write docs/advise.md: `flashlane advise` on every shipped trace (traces/), at its recorded
rate and, where the advice says the trace is light or an overload, again at the time scale it
suggests. Every row is a pair of `flashlane run` commands the page names (the advice's
``command``); tests/python/test_advise.py recomputes one.

    python scripts/advise_docs.py [--max-requests N] [--out docs/advise.md]
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import flashlane
from flashlane import _advise

REPO = Path(__file__).resolve().parents[1]
#: Requests per run: the first N of each trace (msnfs has 150,000, the others up to 24,783):
#: an overloaded trace on Venice costs seconds per thousand requests (its scouts retry).
MAX_REQUESTS = 3_000


def _command(trace: str, max_requests: int, time_scale: float) -> str:
    scale = "" if time_scale == 1.0 else f" --time-scale {time_scale:.3g}"
    return f"flashlane advise --trace traces/{trace} --max-requests {max_requests}{scale}"


def _suggested(advice: dict) -> float | None:
    """The time scale a light-load or overload warning suggests, if there is one."""
    for warning in advice["warnings"]:
        if warning.startswith(("light load", "overload")):
            found = re.search(r"--time-scale ([0-9.e+-]+)", warning)
            if found:
                return float(found.group(1))
    return None


def _best(advice: dict) -> str:
    row = advice["rows"][0]
    change = 100 * (row["latency_ratio"] - 1)
    return f"{row['combination']} ({change:+.1f} % mean latency)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-requests", type=int, default=MAX_REQUESTS)
    parser.add_argument("--out", default=str(REPO / "docs" / "advise.md"))
    args = parser.parse_args()
    traces = sorted(p.name for p in (REPO / "traces").iterdir() if p.name != "README.md")
    sections: list[str] = []
    summary: list[str] = []
    for name in traces:
        path = str(REPO / "traces" / name)
        runs = [(1.0, flashlane.advise(path, max_requests=args.max_requests))]
        scale = _suggested(runs[0][1])
        if scale is not None:
            runs.append(
                (scale, flashlane.advise(path, max_requests=args.max_requests, time_scale=scale))
            )
        place = runs[0][1]["placement"]
        summary.append(
            f"| `{name}` | {place['offered_load']:.3g} | {place['hot_chips']} of "
            f"{place['chips']} | {place['peak_to_mean_1ms']:.3g} | {_best(runs[0][1])} | "
            + (f"{runs[1][0]:.3g}: {_best(runs[1][1])}" if len(runs) > 1 else "-")
            + " |"
        )
        sections += [f"## `{name}`", ""]
        for time_scale, advice in runs:
            text = _advise.render(advice).replace(str(REPO) + "/", "")
            sections += [
                f"`{_command(name, args.max_requests, time_scale)}`:",
                "",
                "```text",
                text.rstrip("\n"),
                "```",
                "",
            ]
    page = [
        "# `flashlane advise` on every shipped trace",
        "",
        "Written by `python scripts/advise_docs.py` (the advice of "
        "`python/flashlane/_advise.py`, docs below). Each trace is advised at its recorded "
        f"rate on its first {args.max_requests:,} requests, every technique and combination "
        "of the combinations study (docs/results/combinations.md) run on it; where the "
        "advice warns of light load or overload, again at the time scale it suggests (the "
        "load where the study finds the techniques apart).",
        "",
        "## What advise does",
        "",
        "1. **Conditions**: `flashlane trace stats --preset combined-8x8 --remap-addresses` "
        "(docs/workloads.md, \"Conditions\"): the busiest chip's and channel's share of the "
        "page accesses, the offered load as a fraction of the channels' bandwidth, the "
        "peak-to-mean arrival rate over 1 ms.",
        "2. **Placement**: the busiest chip's share as a number of equally loaded chips (the "
        "`hot_units` axis of PIQ's and VIOS's effect maps; the same for channels and "
        "Venice's), the load (every map's other axis), and the nearest condition of the "
        "combinations study: `skewed` when the busiest chip's share is that of half the chips "
        "or fewer, `bursty` when the 1 ms peak-to-mean is 3 or more at a load of 0.05 or "
        "more (a light trace's sparse arrivals give high ratios without bursts that meet), "
        "else `even`.",
        "3. **Runs**: the baseline and every technique and combination on the trace, on "
        "`combined-8x8` with the drive behaviours the techniques rest on switched on for all "
        "(as in the study), in parallel, sharing one preconditioned drive; ranked by mean "
        "latency. `reason`: each technique's own statistic, baseline -> this run "
        "(docs/models/combined.md). `inter.`: the combination's mean latency ratio over the "
        "product of its techniques' single ratios.",
        "4. **Warnings**: light load (below 0.05 of the channels' bandwidth), overload (the "
        "baseline's `open_loop_saturated`, or its host queue full more than 10 % of the time), "
        "a host queue that never held two requests, and no change above 2 %; each says what "
        "would change it. They judge the baseline: a technique whose own run falls behind "
        "(Venice's rows on ycsb at time scale 3.04, below) shows as a ratio in the hundreds.",
        "",
        'In Python: `flashlane.advise("traces/tpcc-small.mqsim", quick=True)` returns the '
        "same as a dict (`rows`, `placement`, `conditions`, `warnings`, each row's `command`).",
        "",
        "## Summary",
        "",
        "| trace | offered load | as hot chips | peak-to-mean (1 ms) | best at the recorded "
        "rate | best at the suggested time scale |",
        "|---|---:|---|---:|---|---|",
        *summary,
        "",
        *sections,
    ]
    Path(args.out).write_text("\n".join(page))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
