#!/usr/bin/env python3
"""The workload conditions of every shipped trace and every synthetic stand-in, as the markdown
table of docs/workloads.md ("Conditions of the shipped traces and stand-ins").

Each row is `flashlane trace stats --preset P` on the trace (addresses remapped, as the
experiments replay them) or on the first N requests of a stand-in (`flashlane gen`), under the
preset of the paper the stand-in stands for.

    python3 scripts/conditions_table.py [--flashlane target/release/flashlane] [--requests 20000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TRACES = [
    ("tpcc-small.mqsim", "mqsim"),
    ("websearch-small.mqsim", "mqsim"),
    ("financial1-head.ssdsim", "ssdsim"),
    ("financial1-head.spc", "spc"),
    ("msnfs-30s.disksim.gz", "disksim"),
    ("msnfs-30s.msr.csv.gz", "msr"),
    ("ycsb-a-rocksdb.blkparse.gz", "blkparse"),
]
TRACE_PRESET = "ssdsim-platform"


def preset_of(profile: str) -> str:
    """The preset of the paper a stand-in stands for."""
    if profile.startswith(("piq_", "vios_")):
        return "ssdsim-platform"
    if profile in ("Financial1", "Financial2", "Bonnie++", "Postmark", "TPC-C", "Iozone"):
        return "sos-4x4"
    return "venice-perf"


def conditions(flashlane: str, path: Path, args: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stats.json"
        subprocess.run(
            [flashlane, "trace", "stats", str(path), *args, "--json", str(out)],
            check=True,
            capture_output=True,
        )
        stats = json.loads(out.read_text())
        return {**stats["conditions"], "span_ns": stats["span_ns"]}


def row(name: str, c: dict) -> str:
    w1, w100 = c["windows"]
    busiest = max(c["channel_page_share"]) * 100
    if c["span_ns"] == 0:
        # Every record at time 0: a closed-loop stand-in has no arrival rate of its own.
        return (
            f"| {name} | {c['preset']} | {busiest:.1f} | closed loop | | | | | |"
            f" {c['mean_run_requests']:.2f} |"
        )
    return (
        f"| {name} | {c['preset']} | {busiest:.1f} | {w1['hottest_channel_share_mean'] * 100:.1f}"
        f" | {w100['hottest_channel_share_mean'] * 100:.1f} | {w1['peak_to_mean_arrivals']:.1f}"
        f" | {w100['peak_to_mean_arrivals']:.1f} | {c['offered_load_channel_fraction']:.4f}"
        f" | {c['offered_load_array_fraction']:.4f} | {c['mean_run_requests']:.2f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flashlane", default=str(REPO / "target/release/flashlane"))
    parser.add_argument("--requests", type=int, default=20_000)
    args = parser.parse_args()
    print(
        "| workload | preset | busiest channel, % of pages | busiest channel in 1 ms windows, %"
        " | in 100 ms windows, % | peak-to-mean arrivals, 1 ms | 100 ms"
        " | offered load / channel bandwidth | array load / dies | requests per run |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, layout in TRACES:
        c = conditions(
            args.flashlane,
            REPO / "traces" / name,
            ["--format", layout, "--preset", TRACE_PRESET, "--remap-addresses"],
        )
        print(row(f"traces/{name}", c), flush=True)
    listing = subprocess.run(
        [args.flashlane, "gen", "--list"], check=True, capture_output=True, text=True
    ).stdout
    profiles = [line.split()[0] for line in listing.splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        for profile in profiles:
            out = Path(tmp) / f"{profile}.mqsim"
            subprocess.run(
                [
                    *(args.flashlane, "gen", "--profile", profile, "--out", str(out)),
                    *("--requests", str(args.requests)),
                ],
                check=True,
                capture_output=True,
            )
            c = conditions(
                args.flashlane,
                out,
                ["--format", "mqsim", "--preset", preset_of(profile), "--remap-addresses"],
            )
            print(row(f"{profile} (stand-in)", c), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
