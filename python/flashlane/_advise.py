"""Which of the five papers' techniques helps this trace: ``flashlane advise --trace T`` or
``flashlane.advise(T)`` (issue 32; docs/advise.md). Its own module, imported only when advice
is asked for: it brings the reproduce package's runner.

Three steps:

1. **Conditions.** The trace's workload conditions under the preset (``flashlane trace stats
   --preset``): how its pages spread over channels and chips, how bursty its arrivals are,
   and its offered load.
2. **Placement.** Where those conditions put the trace on each effect map (their axes: hot
   chips, hot channels, load) and which condition of the combinations study
   (docs/results/combinations.md) is nearest.
3. **Runs.** The baseline and every technique and combination
   (``flashlane.reproduce.combos.combinations``) on the trace itself, in parallel, sharing one
   preconditioned drive; a ranked table of each one's change of read and write mean latency,
   p99 and throughput against the baseline, with the one-sentence reason from the
   techniques' own statistics.

Every run is on the same drive: the preset with the drive behaviours the techniques rest on
(process variation, PASS's crowded regions) switched on, as in the combinations study. A
combination the preset refuses (e.g. Venice on a preset with SSDsim's shared-bus rules) is
listed with the preset's reason and not run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flashlane import _native
from flashlane.reproduce import combos
from flashlane.reproduce._core import Point, ReproduceError, get, ratio, run_points
from flashlane.reproduce._maps import BEHIND_FULL_FRACTION

__all__ = ["advise", "main", "render"]

PRESET = "combined-8x8"
#: Requests a quick advice replays (the first N of the trace); the full one replays it whole.
QUICK_REQUESTS = 5000
#: A change smaller than this (as a ratio, either way) is no change: run-to-run differences of
#: this size come from the order of equal-time events, not from the technique.
NO_CHANGE = 0.02
#: Below this offered load (a fraction of the channels' bandwidth) requests rarely meet, so
#: conflict schedulers have little to act on.
LIGHT_LOAD = 0.05
#: The load the advice suggests replaying at when the trace is light: where the combinations
#: study finds the techniques apart (docs/results/combinations.md).
SUGGESTED_LOAD = 0.3


def _conditions(trace: str, fmt: str | None, preset: str, time_scale: float) -> dict:
    """The trace's conditions as the runs replay it (remapped, at `time_scale`)."""
    return json.loads(_native.trace_conditions(trace, fmt, preset, [], True, time_scale))


def placement(conditions: dict[str, Any]) -> dict[str, Any]:
    """Where the trace sits: its coordinates on the effect maps' axes and the nearest
    condition of the combinations study.

    * ``hot_chips`` / ``hot_channels``: 1 / the busiest chip's (channel's) share of the page
      accesses, rounded: the number of equally loaded units that would give that share (the
      maps' ``hot_units``; all of them when the trace is even);
    * ``offered_load``: ``offered_load_channel_fraction``;
    * ``peak_to_mean_1ms``: the peak-to-mean arrival rate over 1 ms windows."""
    chips = conditions["chip_page_share"]
    channels = conditions["channel_page_share"]
    hot_chips, hot_channels = _as_hot(chips), _as_hot(channels)
    one_ms = next(w for w in conditions["windows"] if w["window_ns"] == 1_000_000)
    load = conditions["offered_load_channel_fraction"]
    burst = one_ms["peak_to_mean_arrivals"]
    # The study's conditions: skewed puts 90 % on a quarter of the chips, bursty has a
    # peak-to-mean of 5 over 1 ms at its loads (a light trace's sparse arrivals give high
    # peak-to-mean ratios without bursts that meet); rewrite distance is not measured on a
    # trace.
    if hot_chips <= len(chips) // 2:
        nearest = "skewed"
    elif burst >= 3.0 and load >= LIGHT_LOAD:
        nearest = "bursty"
    else:
        nearest = "even"
    loads = combos.LOADS
    nearest_load = min(loads, key=lambda x: abs(x - load))
    return {
        "hot_chips": hot_chips,
        "chips": len(chips),
        "hot_channels": hot_channels,
        "channels": len(channels),
        "offered_load": load,
        "peak_to_mean_1ms": burst,
        "study_condition": nearest,
        "study_load": nearest_load,
        "maps": (
            f"PIQ's and VIOS's maps (hot chips x load): {hot_chips} of {len(chips)} chips at "
            f"load {load:.3g}; Venice's (hot channels x load): {hot_channels} of "
            f"{len(channels)} channels; SOS's (rewrite distance x load): at load {load:.3g}, "
            "rewrite distance not measured on a trace; PASS's (closed-loop threads): a trace "
            "replays open loop, no place"
        ),
    }


def _as_hot(shares: list[float]) -> int:
    """How many equally loaded units give the busiest unit's share: 1 / that share, rounded,
    all of them when within 10 % of even."""
    top = max(shares)
    if top <= 0:
        return len(shares)
    hot = min(len(shares), max(1, round(1.0 / top)))
    return len(shares) if hot >= 0.9 * len(shares) else hot


def _points(
    trace: str,
    fmt: str | None,
    preset: str,
    time_scale: float,
    max_requests: int | None,
    combinations: Sequence[tuple[str, ...]],
) -> list[Point]:
    workload = ["--trace", trace, "--remap-addresses"]
    if fmt:
        workload += ["--format", fmt]
    if time_scale != 1.0:
        workload += ["--time-scale", repr(time_scale)]
    if max_requests is not None:
        workload += ["--max-requests", str(max_requests)]
    points = []
    for combo in [(), *combinations]:
        args = ["--preset", preset, *workload]
        for setting in _native.combined_settings([*combo, *combos.drive_switches()]):
            args += ["--set", setting]
        points.append(
            Point("advise", "advise", Path(trace).name, combos.combo_name(combo), tuple(args))
        )
    return points


def _refusal(point: Point) -> str | None:
    """The preset's reason for refusing a point's settings, or None when it takes them."""
    args = point.args
    preset = args[args.index("--preset") + 1]
    overrides = dict(args[i + 1].split("=", 1) for i, a in enumerate(args) if a == "--set")
    try:
        _native.resolve_config(preset, None, overrides)
    except ValueError as error:
        return str(error)
    return None


def _reason(combo: tuple[str, ...], base: dict, summary: dict) -> str:
    """The techniques' own statistics, baseline -> this run (combos.STATISTICS)."""
    parts = []
    for t in combo:
        path, phrase = combos.STATISTICS[t]
        before, after = combos.statistic(base, path), combos.statistic(summary, path)
        if before is None or after is None:
            continue
        parts.append(f"{combos.PAPER_NAMES[t]}: {phrase} {before:.3g} -> {after:.3g}")
    return "; ".join(parts)


def _row(combo: tuple[str, ...], base: dict, summary: dict, singles: dict) -> dict[str, Any]:
    def of(path: str) -> float | None:
        return ratio(get(summary, path), get(base, path))

    row = {
        "combination": combos.combo_label(combo),
        "switches": list(combo),
        "latency_ratio": of("latency_us.all.mean"),
        "read_latency_ratio": of("latency_us.read.mean"),
        "write_latency_ratio": of("latency_us.write.mean"),
        "p99_ratio": of("latency_us.all.p99"),
        "throughput_ratio": of("throughput.iops"),
        "reason": _reason(combo, base, summary),
        "interaction": None,
        "warnings": [w["code"] for w in summary.get("warnings", [])],
    }
    if len(combo) > 1:
        row["interaction"] = combos.interaction(
            row["latency_ratio"], [singles.get(t) for t in combo]
        )
    return row


def advise(
    trace: str | os.PathLike[str],
    *,
    preset: str = PRESET,
    format: str | None = None,
    quick: bool = False,
    time_scale: float = 1.0,
    max_requests: int | None = None,
    jobs: int | None = None,
    precondition_cache: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Advice for one trace (see the module's text). Returns ``{"trace", "preset",
    "time_scale", "requests", "conditions", "placement", "baseline", "rows", "refused",
    "warnings"}``: ``rows`` ranked by mean latency ratio (lower first), each with its ratios
    to the baseline (read, write, all, p99, throughput), interaction (combinations), reason and
    the command that reruns it (``flashlane run ...``); ``refused``: combinations the preset
    does not take, with its reason. `quick`: only the techniques alone and all together, on
    the first :data:`QUICK_REQUESTS` requests (unless `max_requests` says otherwise).
    Raises ValueError for an unreadable trace, an unknown preset or one that refuses the
    drive behaviours, and :class:`flashlane.reproduce.ReproduceError` for a failing run, before
    or without writing anything."""
    trace = str(trace)
    if not Path(trace).exists():
        raise ValueError(f"{trace}: no such trace")
    if max_requests is None and quick:
        max_requests = QUICK_REQUESTS
    conditions = _conditions(trace, format, preset, time_scale)
    place = placement(conditions)
    chosen = combos.combinations()
    if quick:
        largest = max(len(c) for c in chosen)
        chosen = [c for c in chosen if len(c) in (1, largest)]
    points = _points(trace, format, preset, time_scale, max_requests, chosen)
    refused = {}
    runnable = []
    for point in points:
        why = _refusal(point)
        if why is None:
            runnable.append(point)
        elif point.configuration == "baseline":
            raise ValueError(f"{preset}: the drive behaviours cannot be switched on: {why}")
        else:
            refused[point.configuration] = why
    scratch = None
    if precondition_cache is None:
        scratch = tempfile.mkdtemp(prefix="flashlane-precondition-")
        precondition_cache = scratch
    try:
        summaries = run_points(
            runnable,
            traces=Path(trace).parent,
            jobs=jobs or min(2, os.cpu_count() or 1),
            precondition_cache=precondition_cache,
        )
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    by_name = {p.configuration: (p, s) for p, s in zip(runnable, summaries, strict=True)}
    base_point, base = by_name.pop("baseline")
    singles = {
        name: ratio(get(s, "latency_us.all.mean"), get(base, "latency_us.all.mean"))
        for name, (_, s) in by_name.items()
        if "+" not in name
    }
    rows = []
    for name, (point, summary) in by_name.items():
        combo = tuple(name.split("+"))
        rows.append({**_row(combo, base, summary, singles), "command": point.command()})
    rows.sort(key=lambda r: (r["latency_ratio"] is None, r["latency_ratio"] or 0.0))
    return {
        "trace": trace,
        "preset": preset,
        "time_scale": time_scale,
        "requests": get(base, "latency_us.all.count"),
        "conditions": conditions,
        "placement": place,
        "baseline": {
            "latency_us": base["latency_us"],
            "throughput_iops": get(base, "throughput.iops"),
            "command": base_point.command(),
        },
        "rows": rows,
        "refused": [{"combination": k, "reason": v} for k, v in refused.items()],
        "warnings": _warnings(place, base, rows, time_scale),
    }


def _warnings(place: dict, base: dict, rows: list[dict], time_scale: float) -> list[str]:
    """Where no technique can differ on this trace, or where the comparison is of an overload,
    and what would change that."""
    said = []
    load = place["offered_load"]
    # The --time-scale that replays the trace at SUGGESTED_LOAD (arrival times x it).
    suggested = time_scale * load / SUGGESTED_LOAD if load > 0 else None
    at = f"; --time-scale {suggested:.3g} replays it at {SUGGESTED_LOAD}" if suggested else ""
    saturated = any(w["code"] == "open_loop_saturated" for w in base.get("warnings", []))
    full = get(base, "host_queue.full_fraction") or 0.0
    if saturated or full > BEHIND_FULL_FRACTION:
        why = (
            "it is still behind when the last request arrives (open_loop_saturated)"
            if saturated
            else f"its host queue is full {full:.0%} of the time"
        )
        said.append(
            f"overload: the trace offers {load:.3g} of the channels' bandwidth and the baseline "
            f"falls behind its arrivals ({why}), so the ratios here measure how far the "
            f"overload got in the trace's length rather than a steady state{at}"
        )
    elif load < LIGHT_LOAD:
        said.append(
            f"light load: the trace offers {load:.3g} of the channels' bandwidth, where requests "
            f"rarely meet and conflict schedulers have little to act on{at}"
        )
    idle = [r["combination"] for r in rows if "host_queue_never_held_two" in r["warnings"]]
    if idle:
        said.append(
            "the host queue never held two requests for "
            + ", ".join(idle)
            + ": a host scheduler had nothing to reorder; a higher load (a smaller "
            "--time-scale) or a preset whose host queue holds requests (combined-8x8's "
            "request queue of 64) lets it act"
        )
    moved = [
        r
        for r in rows
        if r["latency_ratio"] is not None and abs(r["latency_ratio"] - 1) > NO_CHANGE
    ]
    if not moved:
        said.append(
            f"no technique or combination changed the mean latency by more than "
            f"{NO_CHANGE:.0%} on this trace"
        )
    return said


def _percent(ratio: float | None) -> str:
    return "-" if ratio is None else f"{100 * (ratio - 1):+.1f} %"


def render(advice: dict[str, Any]) -> str:
    """The advice as text: the conditions, the placement, the ranked table, the warnings."""
    place = advice["placement"]
    base = advice["baseline"]
    lines = [
        f"advice for {advice['trace']} on {advice['preset']} "
        f"({advice['requests']:.0f} requests, time scale {advice['time_scale']:g})",
        f"conditions: busiest chip {max(advice['conditions']['chip_page_share']):.1%} of pages "
        f"(as {place['hot_chips']} of {place['chips']} hot chips), busiest channel "
        f"{max(advice['conditions']['channel_page_share']):.1%} (as {place['hot_channels']} "
        f"of {place['channels']}), offered load {place['offered_load']:.3g} of the channels' "
        f"bandwidth, peak-to-mean arrivals {place['peak_to_mean_1ms']:.2f} over 1 ms",
        f"on the maps: {place['maps']}",
        f"nearest condition of the combinations study: {place['study_condition']} at load "
        f"{place['study_load']} (docs/results/combinations.md)",
        f"baseline: mean latency {base['latency_us']['all']['mean']:.1f} us (read "
        f"{base['latency_us']['read']['mean']:.1f}, write "
        f"{base['latency_us']['write']['mean']:.1f}), {base['throughput_iops']:.0f} IOPS",
        "",
        f"{'rank':>4}  {'technique or combination':<24} {'mean':>8} {'read':>8} {'write':>8} "
        f"{'p99':>8} {'IOPS':>8} {'inter.':>6}  reason",
    ]
    for i, r in enumerate(advice["rows"], 1):
        inter = "" if r["interaction"] is None else f"{r['interaction']:.2f}"
        lines.append(
            f"{i:>4}  {r['combination']:<24} {_percent(r['latency_ratio']):>8} "
            f"{_percent(r['read_latency_ratio']):>8} {_percent(r['write_latency_ratio']):>8} "
            f"{_percent(r['p99_ratio']):>8} {_percent(r['throughput_ratio']):>8} {inter:>6}  "
            f"{r['reason']}"
        )
    for refused in advice["refused"]:
        lines.append(f"      {refused['combination']}: not run, {refused['reason']}")
    lines.append("")
    lines.append(
        "mean, read, write, p99: change of that latency against the baseline (negative: "
        "faster); IOPS: change of throughput; inter.: interaction, the combination's mean "
        "latency ratio over the product of its techniques' own (below 1 they compound, above 1 "
        "they cancel)"
    )
    for warning in advice["warnings"]:
        lines.append(f"warning: {warning}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="flashlane advise",
        description="Which of the five papers' techniques, alone or together, helps this trace: "
        "its conditions, where they put it on the effect maps, and every technique and "
        "combination run on the trace itself (docs/advise.md).",
    )
    parser.add_argument("--trace", required=True, help="the trace file")
    parser.add_argument("--preset", default=PRESET, help=f"the drive (default {PRESET})")
    parser.add_argument("--format", default=None, help="the trace's layout (default: detected)")
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"the techniques alone and all together, on the first {QUICK_REQUESTS} requests",
    )
    parser.add_argument(
        "--time-scale", type=float, default=1.0, help="arrival times x this (as flashlane run)"
    )
    parser.add_argument("--max-requests", type=int, default=None, help="replay the first N")
    parser.add_argument("--jobs", type=int, default=None, help="runs at once (default 2)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write it as JSON")
    args = parser.parse_args(argv)
    if args.json:
        # Before any run: an output that cannot be written fails at once.
        folder = Path(args.json).resolve().parent
        if not folder.is_dir():
            print(f"error: --json {args.json}: no folder {folder}", file=sys.stderr)
            return 2
    try:
        advice = advise(
            args.trace,
            preset=args.preset,
            format=args.format,
            quick=args.quick,
            time_scale=args.time_scale,
            max_requests=args.max_requests,
            jobs=args.jobs,
        )
    except (ValueError, ReproduceError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        # Whole or not at all: written beside, then renamed.
        target = Path(args.json)
        partial = target.with_name(f".{target.name}.partial")
        partial.write_text(json.dumps(advice, indent=1, sort_keys=True) + "\n")
        partial.replace(target)
    sys.stdout.write(render(advice))
    return 0
