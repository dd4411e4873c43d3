#!/usr/bin/env python3
"""The measurements of docs/real-drive.md on this machine's disk: fio beside `flashlane
replay` on the same access pattern, the probe's curves, and NOOP, Deadline, CFQ, AS and PASS
replaying the bundled traces beside the simulator's numbers for the same runs.

    python3 scripts/real_drive_experiment.py --dir DIR [--bin target/release/flashlane]
        [--reps 10] [--scheduler-reps 5] [--parts fio,probe,schedulers,open_loop]
        [--out docs/real-drive] [--tables-only]

DIR is a directory on the disk to measure (a file target is created there and removed at the
end; nothing is written anywhere else but OUT). Needs fio (Debian's package) for the fio part.
Writes OUT/results.json (every figure) and prints the tables docs/real-drive.md quotes; the
probe also writes OUT/probe-vda.json and OUT/probe-vda.svg. Nothing is timed by a test: these
are measurements, and on a shared virtual disk they vary from run to run (the repetitions
give the range).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TRACES = REPO / "traces"
GIB = 1 << 30

# (label, file, extra arguments): every bundled trace, packed (--remap-addresses) so its
# footprint is all the file needs; msnfs and websearch cut to stay within minutes.
TRACE_RUNS = [
    ("tpcc-small", "tpcc-small.mqsim", []),
    ("websearch-small", "websearch-small.mqsim", []),
    ("msnfs-30s (first 30 k)", "msnfs-30s.msr.csv.gz", ["--max-requests", "30000"]),
    ("financial1-head", "financial1-head.spc", []),
    ("ycsb-a-rocksdb", "ycsb-a-rocksdb.blkparse.gz", []),
]
SCHEDULERS = ["noop", "deadline", "cfq", "anticipatory", "pass"]
# The host side of the scheduler comparison: 32 requests in the system, 4 at the drive, so
# the host queue holds up to 28 for the scheduler to order.
HOST = [
    "--closed-loop",
    "32",
    "--set",
    "device.queue_depth_requests=4",
    "--set",
    "host.queue_length_requests=128",
]
# PASS's 4 GiB default region is larger than every packed trace here: one region per 64 MiB.
PASS_REGION = ["--set", "host.scheduler.region_bytes=67108864"]
SIM_PRESET = "mqsim-ssd"


def run(cmd: list[str]) -> None:
    print("$", " ".join(str(c) for c in cmd), file=sys.stderr, flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def spread(xs: list[float]) -> dict:
    return {
        "mean": statistics.fmean(xs),
        "median": statistics.median(xs),
        "min": min(xs),
        "max": max(xs),
        "runs": xs,
    }


# Seconds of one fio run (and, in requests, of the replay paired with it). Short runs, many
# pairs: the virtual disk's speed drifts over minutes, so only neighbouring runs compare.
PAIR_S = 3


def fio_run(img: Path, work: Path, rw: str, qd: int) -> tuple[float, float, float]:
    """fio's IOPS, mean total latency and mean completion latency (us) over PAIR_S s."""
    out = work / "fio.json"
    run(
        [
            "fio",
            "--name=pattern",
            f"--filename={img}",
            "--size=1G",
            f"--rw={rw}",
            "--bs=4k",
            f"--iodepth={qd}",
            "--ioengine=io_uring",
            "--direct=1",
            f"--runtime={PAIR_S}",
            "--time_based",
            "--norandommap",
            "--randrepeat=0",
            "--output-format=json",
            f"--output={out}",
        ]
    )
    job = load(out)["jobs"][0]["read" if rw == "randread" else "write"]
    return job["iops"], job["lat_ns"]["mean"] / 1e3, job["clat_ns"]["mean"] / 1e3


def our_run(
    bin_: str, img: Path, work: Path, rw: str, qd: int, requests: int
) -> tuple[float, float]:
    """flashlane replay of the same pattern: IOPS and mean latency (us)."""
    spec = work / "pattern.toml"
    spec.write_text(
        f'label = "fio-like {rw} 4 KiB over 1 GiB, QD {qd}"\n'
        f"requests = {requests}\n"
        f"read_fraction = {1.0 if rw == 'randread' else 0.0}\n"
        f'[arrival]\nkind = "closed_loop"\nqueue_depth_requests = {qd}\n'
        '[size]\nkind = "uniform"\nmin_bytes = 4096\nmax_bytes = 4096\nalign_bytes = 4096\n'
        f'[address]\nkind = "uniform"\nspan_bytes = {GIB}\nalign_bytes = 4096\n'
    )
    access = "--reads-only" if rw == "randread" else "--allow-writes"
    summary = work / "ours.json"
    run(
        [
            bin_,
            "replay",
            "--target",
            str(img),
            access,
            "--preset",
            SIM_PRESET,
            "--synthetic",
            str(spec),
            "--closed-loop",
            str(qd),
            "--set",
            f"device.queue_depth_requests={qd}",
            "--set",
            "host.scheduler.kind=noop",
            "--json",
            str(summary),
        ]
    )
    s = load(summary)
    return s["throughput"]["iops"], s["latency_us"]["all"]["mean"]


def fio_part(bin_: str, work: Path, reps: int) -> list[dict]:
    """fio and flashlane replay, same file, pattern, depth and block size, interleaved."""
    img = work / "fio.img"
    run(
        [
            "fio",
            "--name=layout",
            f"--filename={img}",
            "--size=1G",
            "--rw=write",
            "--bs=1M",
            "--direct=1",
            "--ioengine=io_uring",
            "--iodepth=8",
            "--output-format=terse",
        ]
    )
    rows = []
    for rw in ("randread", "randwrite"):
        for qd in (8, 32):
            fio: list[tuple[float, float, float]] = []
            ours: list[tuple[float, float]] = []
            for rep in range(reps):
                # Alternate who goes first; ours runs as many requests as fio did.
                if rep % 2 == 1:
                    ours.append(our_run(bin_, img, work, rw, qd, round(fio[-1][0] * PAIR_S)))
                fio.append(fio_run(img, work, rw, qd))
                if rep % 2 == 0:
                    ours.append(our_run(bin_, img, work, rw, qd, round(fio[-1][0] * PAIR_S)))
            rows.append(
                {
                    "pattern": rw,
                    "queue_depth": qd,
                    "fio_iops": spread([f[0] for f in fio]),
                    "fio_lat_us": spread([f[1] for f in fio]),
                    "fio_clat_us": spread([f[2] for f in fio]),
                    "flashlane_iops": spread([o[0] for o in ours]),
                    "flashlane_lat_us": spread([o[1] for o in ours]),
                    # Each pair's ratio (neighbouring runs), and their median.
                    "iops_ratio": spread([o[0] / f[0] for o, f in zip(ours, fio, strict=True)]),
                    "lat_ratio": spread([o[1] / f[1] for o, f in zip(ours, fio, strict=True)]),
                }
            )
    img.unlink()
    return rows


def probe_part(bin_: str, work: Path, out: Path) -> dict:
    run(
        [
            bin_,
            "probe",
            "--target",
            str(work / "probe.img"),
            "--point-ms",
            "500",
            "--outstanding",
            "1,2,4,8,16,32,64,128,256",
            "--json",
            str(out / "probe-vda.json"),
            "--svg",
            str(out / "probe-vda.svg"),
        ]
    )
    return load(out / "probe-vda.json")


def scheduler_args(sched: str) -> list[str]:
    """The --set flags of one host scheduler (PASS with the 64 MiB regions of this disk)."""
    return ["--set", f"host.scheduler.kind={sched}", *(PASS_REGION if sched == "pass" else [])]


def rotation(rep: int) -> list[str]:
    """The schedulers in a different order each repetition."""
    k = rep % len(SCHEDULERS)
    return SCHEDULERS[k:] + SCHEDULERS[:k]


def replay_summary(bin_: str, img: Path, work: Path, args: list[str]) -> dict:
    """`flashlane replay` onto the prepared file `img` (written over), its JSON summary."""
    replay = [bin_, "replay", "--target", str(img), "--allow-writes", "--preset", SIM_PRESET]
    run([*replay, *args, "--json", str(work / "real.json")])
    return load(work / "real.json")


def sim_summary(bin_: str, work: Path, args: list[str]) -> dict:
    """`flashlane run` on the simulator preset, its JSON summary."""
    run([bin_, "run", "--preset", SIM_PRESET, *args, "--json", str(work / "sim.json")])
    return load(work / "sim.json")


def scheduler_part(bin_: str, work: Path, reps: int) -> list[dict]:
    rows = []
    for label, name, extra in TRACE_RUNS:
        trace = ["--trace", str(TRACES / name), "--remap-addresses", *extra]
        img = work / "trace.img"
        # One file per trace, created and filled once, so every scheduler meets the same file.
        prep = [bin_, "replay", "--target", str(img), "--keep", "--preset", SIM_PRESET]
        run([*prep, *trace, *HOST, "--json", str(work / "prep.json")])
        results: dict[str, dict] = {s: {"iops": [], "lat": [], "p99": []} for s in SCHEDULERS}
        for rep in range(reps):
            for sched in rotation(rep):
                s = replay_summary(bin_, img, work, [*trace, *HOST, *scheduler_args(sched)])
                results[sched]["iops"].append(s["throughput"]["iops"])
                results[sched]["lat"].append(s["latency_us"]["all"]["mean"])
                results[sched]["p99"].append(s["latency_us"]["all"]["p99"])
        img.unlink()
        for sched in SCHEDULERS:
            sim = sim_summary(bin_, work, [*trace, *HOST, *scheduler_args(sched)])
            r = results[sched]
            rows.append(
                {
                    "trace": label,
                    "scheduler": sched,
                    "real_iops": spread(r["iops"]),
                    "real_mean_us": spread(r["lat"]),
                    "real_p99_us": spread(r["p99"]),
                    "sim_iops": sim["throughput"]["iops"],
                    "sim_mean_us": sim["latency_us"]["all"]["mean"],
                    "sim_p99_us": sim["latency_us"]["all"]["p99"],
                }
            )
    return rows


# Open loop: msnfs's first 30 k requests at 4x trace speed (10.4 s of trace in 2.6 s, about
# half the drive's rate at 4 outstanding), the host queue in front of 4 device slots.
OPEN_LOOP = [
    "--trace",
    str(TRACES / "msnfs-30s.msr.csv.gz"),
    "--remap-addresses",
    "--max-requests",
    "30000",
    "--time-scale",
    "0.25",
    "--set",
    "device.queue_depth_requests=4",
    "--set",
    "host.queue_length_requests=128",
]


def open_loop_part(bin_: str, work: Path, reps: int) -> list[dict]:
    img = work / "open.img"
    prep = [bin_, "replay", "--target", str(img), "--keep", "--preset", SIM_PRESET]
    run([*prep, *OPEN_LOOP, "--json", str(work / "prep.json")])
    runs: dict[str, list[dict]] = {s: [] for s in SCHEDULERS}
    for rep in range(reps):
        for sched in rotation(rep):
            runs[sched].append(
                replay_summary(bin_, img, work, [*OPEN_LOOP, *scheduler_args(sched)])
            )
    img.unlink()
    rows = []
    for sched in SCHEDULERS:
        sim = sim_summary(bin_, work, [*OPEN_LOOP, *scheduler_args(sched)])
        real = runs[sched]
        rows.append(
            {
                "scheduler": sched,
                "real_mean_us": spread([r["latency_us"]["all"]["mean"] for r in real]),
                "real_p99_us": spread([r["latency_us"]["all"]["p99"] for r in real]),
                "real_host_queue_us": spread([r["time_split_us"]["host_queue"] for r in real]),
                "real_device_us": spread([r["time_split_us"]["device"] for r in real]),
                "real_iops": spread([r["throughput"]["iops"] for r in real]),
                "arrival_lag_mean_us": spread(
                    [r["replay"]["arrival_lag_us"]["mean"] for r in real]
                ),
                "arrival_lag_max_us": spread([r["replay"]["arrival_lag_us"]["max"] for r in real]),
                "sim_mean_us": sim["latency_us"]["all"]["mean"],
                "sim_p99_us": sim["latency_us"]["all"]["p99"],
                "sim_host_queue_us": sim["time_split_us"]["host_queue"],
                "sim_device_us": sim["time_split_us"]["device"],
                "sim_iops": sim["throughput"]["iops"],
            }
        )
    return rows


def pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.1f} %"


def med(s: dict, digits: int = 0) -> str:
    """Median (min-max) of the runs."""
    return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"


def print_tables(results: dict) -> None:
    if "fio" in results:
        print(
            "| pattern | QD | fio IOPS | flashlane IOPS | IOPS ratio (pairs) | fio lat / clat us "
            "| flashlane mean us | latency ratio (pairs) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for r in results["fio"]:
            print(
                f"| {r['pattern']} 4 KiB | {r['queue_depth']} | {med(r['fio_iops'])} | "
                f"{med(r['flashlane_iops'])} | {med(r['iops_ratio'], 3)} | "
                f"{r['fio_lat_us']['median']:.1f} / {r['fio_clat_us']['median']:.1f} | "
                f"{med(r['flashlane_lat_us'], 1)} | {med(r['lat_ratio'], 3)} |"
            )
        print()
    if "schedulers" in results:
        print(
            "| trace | scheduler | real IOPS | real mean us | real p99 us | "
            f"sim IOPS ({SIM_PRESET}) | sim mean us | sim p99 us |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for r in results["schedulers"]:
            print(
                f"| {r['trace']} | {r['scheduler']} | {med(r['real_iops'])} | "
                f"{med(r['real_mean_us'], 1)} | {r['real_p99_us']['median']:.0f} | "
                f"{r['sim_iops']:.0f} | {r['sim_mean_us']:.1f} | {r['sim_p99_us']:.0f} |"
            )
        print()
        print(
            "| trace | PASS vs NOOP, real IOPS | PASS vs Deadline, real IOPS | "
            "PASS vs NOOP, sim IOPS | PASS vs Deadline, sim IOPS |"
        )
        print("|---|---|---|---|---|")
        by = {(r["trace"], r["scheduler"]): r for r in results["schedulers"]}
        for label, _, _ in TRACE_RUNS:
            p, n, d = by[(label, "pass")], by[(label, "noop")], by[(label, "deadline")]
            print(
                f"| {label} | {pct(p['real_iops']['median'], n['real_iops']['median'])} | "
                f"{pct(p['real_iops']['median'], d['real_iops']['median'])} | "
                f"{pct(p['sim_iops'], n['sim_iops'])} | {pct(p['sim_iops'], d['sim_iops'])} |"
            )
        print()
    if "open_loop" in results:
        print(
            "| scheduler | real mean us | real p99 us | real host queue / device us | "
            "arrival lag mean / max us | sim mean us | sim p99 us | sim host queue / device us |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for r in results["open_loop"]:
            print(
                f"| {r['scheduler']} | {med(r['real_mean_us'], 1)} | "
                f"{r['real_p99_us']['median']:.0f} | {r['real_host_queue_us']['median']:.1f} / "
                f"{r['real_device_us']['median']:.1f} | "
                f"{r['arrival_lag_mean_us']['median']:.1f} / "
                f"{r['arrival_lag_max_us']['max']:.0f} | {r['sim_mean_us']:.1f} | "
                f"{r['sim_p99_us']:.0f} | {r['sim_host_queue_us']:.1f} / "
                f"{r['sim_device_us']:.1f} |"
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, required=True, help="work directory on the disk")
    parser.add_argument("--bin", default=str(REPO / "target/release/flashlane"))
    parser.add_argument("--reps", type=int, default=10, help="fio / flashlane pairs per pattern")
    parser.add_argument(
        "--scheduler-reps", type=int, default=5, help="repetitions of each scheduler replay"
    )
    parser.add_argument("--parts", default="fio,probe,schedulers,open_loop")
    parser.add_argument("--out", type=Path, default=REPO / "docs/real-drive")
    parser.add_argument("--tables-only", action="store_true", help="print OUT/results.json")
    args = parser.parse_args()
    out = args.out.resolve()
    results_path = out / "results.json"
    if args.tables_only:
        print_tables(load(results_path))
        return 0
    work = args.dir.resolve()
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    results = load(results_path) if results_path.exists() else {}
    parts = args.parts.split(",")
    if "fio" in parts:
        results["fio"] = fio_part(args.bin, work, args.reps)
    if "probe" in parts:
        probe_part(args.bin, work, out)
    if "schedulers" in parts:
        results["schedulers"] = scheduler_part(args.bin, work, args.scheduler_reps)
    if "open_loop" in parts:
        results["open_loop"] = open_loop_part(args.bin, work, args.scheduler_reps)
    for leftover in ("fio.json", "ours.json", "pattern.toml", "prep.json", "real.json", "sim.json"):
        (work / leftover).unlink(missing_ok=True)
    results_path.write_text(json.dumps(results, indent=1) + "\n")
    print_tables(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
