#!/usr/bin/env python3
"""The VIOS paper's Figures 5-7 on the bundled traces, with process variation on.

For each trace and wear-out stage (6K, 9K, 12K, 15K P/E) runs `flashlane run` on the
`ssdsim-mlc-8x8` preset (the paper's SSD) with `[variation]` on, the paper's timings (program
600 us at dVp = 0.3, read 20 us, erase 1.5 ms) and the drive filled as in the PIQ experiment, for:

* noop  - NOOP, blocks in order;
* piq   - PIQ, blocks in order;
* vios- - VIOS's hierarchical batches only, blocks in order (the half without variation);
* vios  - VIOS with variation-aware allocation (`ftl.block_choice = "fastest_for_conflicts"`).

"write speed detection technique is implemented with all of the schedulers": every run has
variation on; only VIOS picks blocks by speed. Up to 500,000 requests per trace (the paper's
count). Writes out/vios/<trace>-<pe>-<config>.json and prints markdown tables normalized to NOOP.
The bundled traces are stand-ins for the paper's MSR Cambridge traces (see traces/README.md).

    python3 scripts/vios_experiment.py [--quick] [--flashlane target/release/flashlane]
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TRACES = [
    ("financial1-head.spc", "spc"),
    ("msnfs-30s.msr.csv.gz", "msr"),
    ("tpcc-small.mqsim", "mqsim"),
    ("ycsb-a-rocksdb.blkparse.gz", "blkparse"),
    ("websearch-small.mqsim", "mqsim"),
]
QUICK_TRACES = TRACES[:2]
STAGES = [6000, 9000, 12000, 15000]
CONFIGS = {
    "noop": ["host.scheduler.kind=noop"],
    "piq": ["host.scheduler.kind=piq"],
    "vios-": ["host.scheduler.kind=vios"],
    "vios": ["host.scheduler.kind=vios", "ftl.block_choice=fastest_for_conflicts"],
}
PAPER_TIMING = [
    "timing.page_program_ns=600000",
    "timing.page_read_ns=20000",
    "timing.block_erase_ns=1500000",
]


def normalized(lat: dict, base: dict, op: str) -> str:
    """Mean latency of `op` relative to the NOOP run's, or "-" when NOOP had none."""
    if base[op]["count"] == 0 or base[op]["mean"] == 0:
        return "-"
    return f"{lat[op]['mean'] / base[op]['mean']:.3f}"


def run_one(args: argparse.Namespace, trace: str, layout: str, pe: int, name: str) -> dict:
    out = args.out / f"{trace.split('.')[0]}-{pe}-{name}.json"
    if not out.exists():
        sets = [
            *PAPER_TIMING,
            "precondition.fill_fraction=1.0",
            "variation.enabled=true",
            f"variation.initial_pe_cycles={pe}",
            *CONFIGS[name],
        ]
        command = [
            str(args.flashlane),
            "run",
            "--preset",
            "ssdsim-mlc-8x8",
            "--trace",
            str(REPO / "traces" / trace),
            "--format",
            layout,
            "--remap-addresses",
            "--max-requests",
            str(args.max_requests),
            "--json",
            str(out),
        ]
        for s in sets:
            command += ["--set", s]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with out.open() as f:
        return json.load(f)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flashlane", type=Path, default=REPO / "target/release/flashlane")
    parser.add_argument("--out", type=Path, default=REPO / "out/vios")
    parser.add_argument("--quick", action="store_true", help="2 traces, 12K P/E, 50,000 requests")
    parser.add_argument("--max-requests", type=int, default=None)
    parser.add_argument("--stages", type=str, default=None, help="e.g. 6000,12000")
    args = parser.parse_args()
    traces = QUICK_TRACES if args.quick else TRACES
    stages = [12000] if args.quick else STAGES
    if args.stages:
        stages = [int(s) for s in args.stages.split(",")]
    if args.max_requests is None:
        args.max_requests = 50_000 if args.quick else 500_000
    args.out.mkdir(parents=True, exist_ok=True)

    print(
        "| trace | P/E | config | read lat | write lat | read us | write us "
        "| conflict share | writes fast/med/slow | mean prog us |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    gains: dict[int, list[float]] = {pe: [] for pe in stages}
    for trace, layout in traces:
        for pe in stages:
            runs = {name: run_one(args, trace, layout, pe, name) for name in CONFIGS}
            base = runs["noop"]["latency_us"]
            for name, s in runs.items():
                lat = s["latency_us"]
                v = s["variation"]
                req = s["requests"]
                conflicts = s["conflicts"]
                total = max(req["completed"], 1)
                share = (conflicts["read"] + conflicts["write"]) / total

                print(
                    f"| {trace} | {pe // 1000}K | {name} | {normalized(lat, base, 'read')} "
                    f"| {normalized(lat, base, 'write')} "
                    f"| {lat['read']['mean']:.1f} | {lat['write']['mean']:.1f} | {share:.3f} "
                    f"| {v['write_fast_fraction']:.2f}/{v['write_medium_fraction']:.2f}/"
                    f"{v['write_slow_fraction']:.2f} | {v['mean_host_program_us']:.1f} |"
                )
            piq_w = runs["piq"]["latency_us"]["write"]["mean"]
            vios_w = runs["vios"]["latency_us"]["write"]["mean"]
            if runs["piq"]["latency_us"]["write"]["count"] > 0 and piq_w > 0:
                gains[pe].append(1.0 - vios_w / piq_w)
    print()
    print("| P/E | mean write-latency reduction of VIOS vs PIQ over traces with writes |")
    print("|---|---|")
    for pe, values in gains.items():
        if values:
            print(f"| {pe // 1000}K | {100 * sum(values) / len(values):.2f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
