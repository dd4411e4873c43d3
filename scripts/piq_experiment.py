#!/usr/bin/env python3
"""The PIQ paper's Figure 8 comparison on every bundled trace.

Runs `flashlane compare` with NOOP, RWS, PIQ_R, PIQ_W and PIQ on the `ssdsim-mlc-8x8` preset
(the paper's SSD) for each trace in traces/, the drive preconditioned as the paper describes
("warmed up with all the data used by the traces and the other space is filled up with random
data": footprint first, then a full logical fill). Traces larger than the drive are remapped
(their touched pages renumbered densely). Writes out/piq/<trace>.csv and .json, and prints a
markdown table normalized to NOOP.

    python3 scripts/piq_experiment.py [--flashlane target/release/flashlane] [--out out/piq]
"""

import argparse
import csv
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCHEDULERS = ["noop", "rws", "piq_r", "piq_w", "piq"]
TRACES = [
    ("tpcc-small.mqsim", "mqsim"),
    ("websearch-small.mqsim", "mqsim"),
    ("financial1-head.ssdsim", "ssdsim"),
    ("financial1-head.spc", "spc"),
    ("msnfs-30s.disksim.gz", "disksim"),
    ("msnfs-30s.msr.csv.gz", "msr"),
    ("ycsb-a-rocksdb.blkparse.gz", "blkparse"),
]


def run_trace(flashlane: Path, name: str, layout: str, out: Path) -> list[dict[str, str]]:
    stem = out / name.split(".")[0]
    csv_path = stem.with_name(f"{stem.name}-{layout}.csv")
    command = [
        str(flashlane),
        "compare",
        "--preset",
        "ssdsim-mlc-8x8",
        "--trace",
        str(REPO / "traces" / name),
        "--format",
        layout,
        "--remap-addresses",
        "--set",
        "precondition.fill_fraction=1.0",
        "--host-schedulers",
        ",".join(SCHEDULERS),
        "--csv",
        str(csv_path),
        "--json",
        str(csv_path.with_suffix(".json")),
    ]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    with csv_path.open() as f:
        return list(csv.DictReader(f))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flashlane", type=Path, default=REPO / "target/release/flashlane")
    parser.add_argument("--out", type=Path, default=REPO / "out/piq")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(
        "| trace | scheduler | read lat | write lat | chip util (window) | chip util (active) "
        "| read confl | write confl | read us | write us |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, layout in TRACES:
        for row in run_trace(args.flashlane, name, layout, args.out):
            print(
                f"| {name} | {row['host_scheduler']} "
                f"| {float(row['read_latency_us_normalized']):.3f} "
                f"| {float(row['write_latency_us_normalized']):.3f} "
                f"| {float(row['chip_utilization_normalized']):.3f} "
                f"| {float(row['chip_active_utilization_normalized']):.3f} "
                f"| {int(float(row['read_conflicts']))} | {int(float(row['write_conflicts']))} "
                f"| {float(row['read_latency_us']):.1f} | {float(row['write_latency_us']):.1f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
