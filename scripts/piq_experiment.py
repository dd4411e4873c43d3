#!/usr/bin/env python3
"""The PIQ paper's Figures 8-12 on the paper's platform and on two earlier readings of it.

The SSD is the paper's (8 x 8 MLC chips, 2 KiB pages), preconditioned as the paper describes
("warmed up with all the data used by the traces and the other space is filled up with random
data": trace footprint, then a full logical fill), with SSDsim's device-side order (chip-level
busy, reads first on each chip). Platforms (docs/models/piq.md):

* `ssdsim`: the `ssdsim-platform` preset, SSDsim's request path as the public SSDsim fork with
  PIQ runs it (request queue of 64, hand-over at device events, write acknowledged at data
  transfer, read-modify-write). NOOP is SSDsim's FIFO, `noop_d` its NOOP-D; RWS and the PIQ
  kinds run as the fork's PIQ (reordered into conflict-free passes, never held, handed over
  all at once while every channel is idle). The main platform.
* `host_queue`: `ssdsim-mlc-8x8` with a host scheduling queue of 64 in front of SSDsim's
  request queue of 64 (the paper: "implemented in the I/O queue of the host systems"), our
  batch lists.
* `shared_queue`: the I/O queue *is* SSDsim's request queue: 64 requests inside, waiting for
  the scheduler or already issued (`host.queue_includes_outstanding=true`).

Schemes on the two earlier platforms: NOOP, RWS, PIQ_R, PIQ_W, PIQ with the "hold conflicting
requests" issue rule, and PIQ_R/PIQ_W/PIQ with the "batch cycle" rule (`batch_cycles=true`).
Traces: every trace in traces/ and the labelled synthetic stand-ins of the paper's Table I
(`flashlane gen --list`). Figure 11: the queue length swept from 1 to 512 on a subset.

Writes out/piq[-quick]/runs.json (one record per run) and prints the markdown tables of
docs/results/piq.md.

    python3 scripts/piq_experiment.py [--quick] [--platforms ssdsim,host_queue,shared_queue]
        [--jobs 2] [--flashlane target/release/flashlane]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from statistics import mean

REPO = Path(__file__).resolve().parent.parent

try:
    # The experiment set lives in the package (flashlane reproduce piq uses the same).
    from flashlane.reproduce.piq import (
        BASE,
        PLATFORM_SCHEMES,
        PLATFORMS,
        QUEUE_LENGTHS,
        QUICK_STAND_INS,
        QUICK_TRACES,
        SCHEMES,
        STAND_INS,
        SWEEP_SCHEMES,
        TRACES,
        run_args,
    )
except ImportError as e:
    sys.exit(f"piq_experiment.py needs the flashlane package (pip install .): {e}")

__all__ = ["BASE", "PLATFORMS", "PLATFORM_SCHEMES", "QUEUE_LENGTHS", "SCHEMES", "TRACES"]


def run_one(flashlane: Path, out: Path, key: tuple[str, str, str, int], quick: bool) -> dict:
    platform, workload, scheme, queue = key
    name = f"{platform}-{workload.replace('.', '_')}-{scheme}-q{queue}"
    json_path = out / "runs" / f"{name}.json"
    command = [str(flashlane), "run"]
    command += run_args(platform, workload, scheme, queue, quick, str(REPO / "traces"))
    command += ["--json", str(json_path)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    s = json.loads(json_path.read_text())
    return {
        "platform": platform,
        "workload": workload,
        "scheme": scheme,
        "queue_length_requests": queue,
        "command": " ".join(command[1:]),
        "read_latency_us": s["latency_us"]["read"]["mean"],
        "write_latency_us": s["latency_us"]["write"]["mean"],
        "read_conflicts": s["conflicts"]["read"],
        "write_conflicts": s["conflicts"]["write"],
        "read_chip_wait_us": s["conflicts"]["read_chip_wait_us"],
        "write_chip_wait_us": s["conflicts"]["write_chip_wait_us"],
        "host_queue_wait_us": s["time_split_us"]["host_queue"],
        "chip_utilization": s["chips"]["utilization"],
        "iops": s["throughput"]["iops"],
        "mib_per_s": s["throughput"]["mib_per_s"],
        "window_s": s["sim_time_ns"] / 1e9,
        "completed": s["requests"]["completed"],
        "reads_prioritized_share": s["host_scheduler"]["reads_prioritized_share"],
    }


def ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{(x - 1) * 100:+.1f} %"


def by_key(runs: list[dict]) -> dict[tuple, dict]:
    return {
        (r["platform"], r["workload"], r["scheme"], r["queue_length_requests"]): r for r in runs
    }


def figure8_table(runs: list[dict], platform: str, workloads: list[str]) -> None:
    index = by_key(runs)
    print(f"\n### Platform `{platform}`: each scheme normalized to NOOP (queue 64)\n")
    print(
        "| workload | scheme | read lat | write lat | read chip wait | write chip wait "
        "| host wait us | chip util | IOPS | read confl | write confl | reads prio % "
        "| read us | write us |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for w in workloads:
        noop = index[(platform, w, "noop", 64)]
        for scheme in PLATFORM_SCHEMES[platform]:
            r = index[(platform, w, scheme, 64)]
            print(
                f"| {w} | {scheme} "
                f"| {fmt(ratio(r['read_latency_us'], noop['read_latency_us']))} "
                f"| {fmt(ratio(r['write_latency_us'], noop['write_latency_us']))} "
                f"| {fmt(ratio(r['read_chip_wait_us'], noop['read_chip_wait_us']))} "
                f"| {fmt(ratio(r['write_chip_wait_us'], noop['write_chip_wait_us']))} "
                f"| {r['host_queue_wait_us']:.1f} "
                f"| {fmt(ratio(r['chip_utilization'], noop['chip_utilization']))} "
                f"| {fmt(ratio(r['iops'], noop['iops']))} "
                f"| {r['read_conflicts']} | {r['write_conflicts']} "
                f"| {100 * r['reads_prioritized_share']:.1f} "
                f"| {r['read_latency_us']:.1f} | {r['write_latency_us']:.1f} |"
            )


def averages_table(runs: list[dict], platform: str, workloads: list[str], group: str) -> None:
    """Mean over workloads of per-workload ratios (the paper's "on average")."""
    index = by_key(runs)
    print(f"\n### Platform `{platform}`, {group}: mean of per-workload ratios\n")
    print(
        "| scheme | read lat vs NOOP | write lat vs NOOP | read lat vs RWS | write lat vs RWS "
        "| chip util vs RWS | IOPS vs NOOP |"
    )
    print("|---|---|---|---|---|---|---|")

    def avg(scheme: str, field: str, ref: str) -> float | None:
        values = [
            ratio(index[(platform, w, scheme, 64)][field], index[(platform, w, ref, 64)][field])
            for w in workloads
        ]
        values = [v for v in values if v is not None]
        return mean(values) if values else None

    for scheme in PLATFORM_SCHEMES[platform]:
        print(
            f"| {scheme} | {pct(avg(scheme, 'read_latency_us', 'noop'))} "
            f"| {pct(avg(scheme, 'write_latency_us', 'noop'))} "
            f"| {pct(avg(scheme, 'read_latency_us', 'rws'))} "
            f"| {pct(avg(scheme, 'write_latency_us', 'rws'))} "
            f"| {pct(avg(scheme, 'chip_utilization', 'rws'))} "
            f"| {pct(avg(scheme, 'iops', 'noop'))} |"
        )


def sweep_table(
    runs: list[dict], platform: str, workloads: list[str], queue_lengths: list[int]
) -> None:
    index = by_key(runs)
    print(f"\n### Figure 11, platform `{platform}`: mean latency (us) by queue length\n")
    print("| workload | scheme | " + " | ".join(f"q={q} rd / wr" for q in queue_lengths) + " |")
    print("|---|---|" + "---|" * len(queue_lengths))
    for w in workloads:
        for scheme in [s for s in SWEEP_SCHEMES if s in PLATFORM_SCHEMES[platform]]:
            cells = []
            for q in queue_lengths:
                r = index[(platform, w, scheme, q)]
                cells.append(f"{r['read_latency_us']:.0f} / {r['write_latency_us']:.0f}")
            print(f"| {w} | {scheme} | " + " | ".join(cells) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flashlane", type=Path, default=REPO / "target/release/flashlane")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--quick", action="store_true", help="two traces, two stand-ins, short stand-in runs"
    )
    parser.add_argument(
        "--platforms",
        default=",".join(PLATFORMS),
        help=f"comma-separated, of {', '.join(PLATFORMS)} (default: all)",
    )
    args = parser.parse_args()
    platforms = args.platforms.split(",")
    for p in platforms:
        if p not in PLATFORMS:
            parser.error(f"--platforms: unknown platform {p!r} (known: {', '.join(PLATFORMS)})")
    out = args.out or REPO / ("out/piq-quick" if args.quick else "out/piq")
    (out / "runs").mkdir(parents=True, exist_ok=True)
    traces = [t for t, _ in (QUICK_TRACES if args.quick else TRACES)]
    stand_ins = QUICK_STAND_INS if args.quick else STAND_INS
    workloads = traces + stand_ins
    if args.quick:
        sweep_workloads, queue_lengths = ["piq_r484454_w15445"], [1, 16, 64, 512]
    else:
        sweep_workloads = [
            "tpcc-small.mqsim",
            "msnfs-30s.msr.csv.gz",
            "piq_r346001_w153995",
        ]
        queue_lengths = QUEUE_LENGTHS
    keys = [(p, w, s, 64) for p in platforms for w in workloads for s in PLATFORM_SCHEMES[p]]
    keys += [
        (p, w, s, q)
        for p in platforms
        for w in sweep_workloads
        for s in SWEEP_SCHEMES
        if s in PLATFORM_SCHEMES[p]
        for q in queue_lengths
        if q != 64
    ]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(lambda k: run_one(args.flashlane, out, k, args.quick), keys))
    (out / "runs.json").write_text(json.dumps(runs, indent=1) + "\n")
    for platform in platforms:
        figure8_table(runs, platform, workloads)
        averages_table(runs, platform, traces, "shipped traces")
        averages_table(runs, platform, stand_ins, "Table I stand-ins (synthetic)")
        sweep_table(runs, platform, sweep_workloads, queue_lengths)
    return 0


if __name__ == "__main__":
    sys.exit(main())
