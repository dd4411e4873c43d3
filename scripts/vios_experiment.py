#!/usr/bin/env python3
"""The VIOS paper's Figures 5-7 and Table 1, with process variation on, on two platforms.

For each workload and wear-out stage (6K, 9K, 12K, 15K P/E) runs `flashlane run` on the
`ssdsim-mlc-8x8` preset (the paper's SSD) with `[variation]` on, the paper's timings (program
600 us at dVp = 0.3, read 20 us, erase 1.5 ms) and the drive filled as in the PIQ experiment, for:

* noop  - NOOP, blocks in order;
* piq   - PIQ, blocks in order;
* vios- - VIOS's hierarchical batches only, blocks in order (the half without variation);
* vios  - VIOS with variation-aware allocation (`ftl.block_choice = "fastest_for_conflicts"`).

"write speed detection technique is implemented with all of the schedulers": every run has
variation on; only VIOS picks blocks by speed.

Platforms (`--platform`, docs/models/vios.md):

* ssdsim        - SSDsim's queueing as the PIQ experiment models it (device scheduler `ssdsim`:
                  chip-level busy, reads first per chip) with PIQ's `host_queue` reading: a host
                  I/O queue of 64 in front of SSDsim's request queue of 64. The paper's platform.
* ssdsim_shared - the same device with PIQ's `shared_queue` reading (the I/O queue of 64 *is*
                  SSDsim's request queue, outstanding requests included). Not in the full set.
* default       - the preset's own device scheduler and queues (the first VIOS experiment).

Workloads: every bundled trace (up to 500,000 requests each; all are shorter) and the labelled
synthetic stand-ins of VIOS Table 1 (`flashlane gen --list`, profiles `vios_*`: 500,000
requests each, matching only the table's read and write counts), the paper's "500000 I/Os of
each trace". Writes out/vios[-quick]/<platform>/<workload>-<pe>-<config>.json (reused when
present), adds every run to out/vios[-quick]/runs.json and prints the markdown tables of
docs/results/vios.md.

    python3 scripts/vios_experiment.py [--quick] [--platform ssdsim,default] [--stages 12000]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from piq_experiment import PLATFORMS as PIQ_PLATFORMS

REPO = Path(__file__).resolve().parent.parent
try:
    # The bundled traces are the package's set (flashlane reproduce vios uses the same).
    from flashlane.reproduce.vios import (
        CONFIGS,
        QUICK_STAND_INS,
        STAGES,
        STAND_INS,
        TABLE_1,
        TRACES,
    )
except ImportError as e:
    sys.exit(f"vios_experiment.py needs the flashlane package (pip install .): {e}")
QUICK_TRACES = TRACES[:2]
PLATFORMS = {
    "ssdsim": ["device.scheduler.kind=ssdsim", *PIQ_PLATFORMS["host_queue"]],
    "ssdsim_shared": ["device.scheduler.kind=ssdsim", *PIQ_PLATFORMS["shared_queue"]],
    "default": [],
}
FULL_PLATFORMS = ["ssdsim", "default"]
PAPER_TIMING = [
    "timing.page_program_ns=600000",
    "timing.page_read_ns=20000",
    "timing.block_erase_ns=1500000",
]


def workload_args(workload: str) -> list[str]:
    for name, layout in TRACES:
        if name == workload:
            return ["--trace", str(REPO / "traces" / name), "--format", layout, "--remap-addresses"]
    return ["--profile", workload]


def run_one(args: argparse.Namespace, key: tuple[str, str, int, str]) -> dict:
    platform, workload, pe, config = key
    out = args.out / platform / f"{workload.replace('.', '_')}-{pe}-{config}.json"
    sets = [
        *PAPER_TIMING,
        "precondition.fill_fraction=1.0",
        "variation.enabled=true",
        f"variation.initial_pe_cycles={pe}",
        *PLATFORMS[platform],
        *CONFIGS[config],
    ]
    command = [str(args.flashlane), "run", "--preset", "ssdsim-mlc-8x8"]
    command += workload_args(workload)
    command += ["--max-requests", str(args.max_requests)]
    for s in sets:
        command += ["--set", s]
    command += ["--json", str(out)]
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    s = json.loads(out.read_text())
    lat = s["latency_us"]
    v = s["variation"]
    completed = max(s["requests"]["completed"], 1)
    return {
        "platform": platform,
        "workload": workload,
        "pe_cycles": pe,
        "config": config,
        "command": " ".join(command[1:]),
        "completed": s["requests"]["completed"],
        "reads": lat["read"]["count"],
        "writes": lat["write"]["count"],
        "read_latency_us": lat["read"]["mean"],
        "write_latency_us": lat["write"]["mean"],
        # PIQ's conflict count (reads + writes) over completed requests: Table 1's ratio.
        "conflict_share": (s["conflicts"]["read"] + s["conflicts"]["write"]) / completed,
        "write_fast_fraction": v["write_fast_fraction"],
        "write_medium_fraction": v["write_medium_fraction"],
        "write_slow_fraction": v["write_slow_fraction"],
        "conflict_write_fraction": v["conflict_write_fraction"],
        "mean_host_program_us": v["mean_host_program_us"],
        "host_queue_wait_us": s["time_split_us"]["host_queue"],
    }


def run_order(r: dict) -> tuple:
    return (r["platform"], r["workload"], r["pe_cycles"], list(CONFIGS).index(r["config"]))


def ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def pct(x: float | None) -> str:
    return "-" if x is None else f"{(x - 1) * 100:+.2f} %"


def avg(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return mean(kept) if kept else None


def all_runs_table(index: dict, platform: str, workloads: list[str], stages: list[int]) -> None:
    print(f"\n### Platform `{platform}`: every run (latency normalized to NOOP)\n")
    print(
        "| workload | P/E | config | read lat | write lat | read us | write us "
        "| conflict share | conflict writes | writes fast/med/slow | mean prog us |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for w in workloads:
        for pe in stages:
            noop = index[(platform, w, pe, "noop")]
            for config in CONFIGS:
                r = index[(platform, w, pe, config)]
                print(
                    f"| {w} | {pe // 1000}K | {config} "
                    f"| {fmt(ratio(r['read_latency_us'], noop['read_latency_us']))} "
                    f"| {fmt(ratio(r['write_latency_us'], noop['write_latency_us']))} "
                    f"| {r['read_latency_us']:.1f} | {r['write_latency_us']:.1f} "
                    f"| {r['conflict_share']:.3f} | {r['conflict_write_fraction']:.2f} "
                    f"| {r['write_fast_fraction']:.2f}/{r['write_medium_fraction']:.2f}/"
                    f"{r['write_slow_fraction']:.2f} | {r['mean_host_program_us']:.1f} |"
                )


def relative(
    index: dict, platform: str, workloads: list[str], pe: int, config: str, ref: str, field: str
) -> float | None:
    """Mean over `workloads` of `config`'s `field` divided by `ref`'s (None where undefined)."""
    return avg(
        [
            ratio(index[(platform, w, pe, config)][field], index[(platform, w, pe, ref)][field])
            for w in workloads
        ]
    )


def claims_table(
    index: dict, platform: str, groups: dict[str, list[str]], stages: list[int]
) -> None:
    """The paper's averages: mean over workloads of per-workload ratios."""
    print(f"\n### Platform `{platform}`: the paper's averages (mean of per-workload ratios)\n")
    print(
        "| workloads | P/E | VIOS read vs NOOP | VIOS write vs NOOP | VIOS write vs PIQ "
        "| PIQ read vs NOOP | PIQ write vs NOOP | vios- write vs NOOP | vios write vs vios- |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for group, workloads in groups.items():
        for pe in stages:

            def rel(
                config: str, ref: str, field: str, pe: int = pe, ws: list[str] = workloads
            ) -> float | None:
                return relative(index, platform, ws, pe, config, ref, field)

            print(
                f"| {group} | {pe // 1000}K | {pct(rel('vios', 'noop', 'read_latency_us'))} "
                f"| {pct(rel('vios', 'noop', 'write_latency_us'))} "
                f"| {pct(rel('vios', 'piq', 'write_latency_us'))} "
                f"| {pct(rel('piq', 'noop', 'read_latency_us'))} "
                f"| {pct(rel('piq', 'noop', 'write_latency_us'))} "
                f"| {pct(rel('vios-', 'noop', 'write_latency_us'))} "
                f"| {pct(rel('vios', 'vios-', 'write_latency_us'))} |"
            )


def table_1(index: dict, platform: str, stand_ins: list[str], stages: list[int]) -> None:
    if 12000 not in stages or not stand_ins:
        return
    print(f"\n### Platform `{platform}`: Table 1 beside the stand-ins (NOOP, 12K)\n")
    print(
        "| stand-in | paper reads / writes | ours reads / writes | paper ConflictsRatio % "
        "| ours % | VIOS write vs NOOP | VIOS write vs PIQ | VIOS read vs NOOP |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for w in stand_ins:
        reads, writes, conflicts = TABLE_1[w.removeprefix("vios_")]
        r = index[(platform, w, 12000, "noop")]
        vios = index[(platform, w, 12000, "vios")]
        piq = index[(platform, w, 12000, "piq")]
        print(
            f"| {w} | {reads} / {writes} | {r['reads']} / {r['writes']} | {conflicts:.2f} "
            f"| {100 * r['conflict_share']:.2f} "
            f"| {pct(ratio(vios['write_latency_us'], r['write_latency_us']))} "
            f"| {pct(ratio(vios['write_latency_us'], piq['write_latency_us']))} "
            f"| {pct(ratio(vios['read_latency_us'], r['read_latency_us']))} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flashlane", type=Path, default=REPO / "target/release/flashlane")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="2 traces and 1 stand-in, 12K P/E, 50,000 requests, platform ssdsim",
    )
    parser.add_argument("--max-requests", type=int, default=None)
    parser.add_argument("--stages", type=str, default=None, help="e.g. 6000,12000")
    parser.add_argument(
        "--platform",
        type=str,
        default=None,
        help=f"comma-separated, of {', '.join(PLATFORMS)} (default: {','.join(FULL_PLATFORMS)}; "
        "ssdsim with --quick)",
    )
    parser.add_argument(
        "--no-stand-ins", action="store_true", help="bundled traces only (no vios_* profiles)"
    )
    args = parser.parse_args()
    if args.platform is None:
        args.platform = "ssdsim" if args.quick else ",".join(FULL_PLATFORMS)
    platforms = args.platform.split(",")
    for p in platforms:
        if p not in PLATFORMS:
            parser.error(f"--platform: unknown platform {p!r} (known: {', '.join(PLATFORMS)})")
    traces = [t for t, _ in (QUICK_TRACES if args.quick else TRACES)]
    stand_ins = [] if args.no_stand_ins else (QUICK_STAND_INS if args.quick else STAND_INS)
    stages = [12000] if args.quick else STAGES
    if args.stages:
        stages = [int(s) for s in args.stages.split(",")]
    if args.max_requests is None:
        args.max_requests = 50_000 if args.quick else 500_000
    args.out = args.out or REPO / ("out/vios-quick" if args.quick else "out/vios")
    workloads = traces + stand_ins
    keys = [(p, w, pe, c) for p in platforms for w in workloads for pe in stages for c in CONFIGS]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(lambda k: run_one(args, k), keys))
    args.out.mkdir(parents=True, exist_ok=True)
    index = {(r["platform"], r["workload"], r["pe_cycles"], r["config"]): r for r in runs}
    # runs.json accumulates every run of every invocation (one record per key).
    known = args.out / "runs.json"
    merged = (
        {}
        if not known.exists()
        else {
            (r["platform"], r["workload"], r["pe_cycles"], r["config"]): r
            for r in json.loads(known.read_text())
        }
    )
    merged.update(index)
    known.write_text(json.dumps(sorted(merged.values(), key=run_order), indent=1) + "\n")

    # The paper's averages are over traces with writes (ycsb-a's head is read-only).
    def with_writes(ws: list[str]) -> list[str]:
        return [w for w in ws if index[(platforms[0], w, stages[0], "noop")]["writes"] > 0]

    groups = {"shipped traces": with_writes(traces)}
    if stand_ins:
        groups["Table 1 stand-ins"] = stand_ins
    for platform in platforms:
        claims_table(index, platform, groups, stages)
        table_1(index, platform, stand_ins, stages)
        all_runs_table(index, platform, workloads, stages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
