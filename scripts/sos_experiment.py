#!/usr/bin/env python3
"""SOS's Fig. 6 / Table I / Fig. 7 setting: IOS, HOS, SOS(QSL), SOS(WHM) and SOS on `sos-4x4`.

Workloads: the shipped Financial1 and WebSearch traces (open loop, trace times, addresses
remapped) and the labelled synthetic stand-ins for Bonnie++, Postmark and Financial2
(profiles; readings in docs/workloads.md). Three sets, each over every workload and scheduler:

- main: without a write buffer (the preset's default) and behind a 1 MiB DRAM write buffer;
  mean response time normalized to IOS, write-hit ratio (`device.write_hits` / host page
  writes), per-chip idle ratio (`device.idle_fraction_mean`), moved writes, buffer figures;
- load: open-loop workloads at trace time / load for each LOAD_FACTORS, the closed-loop
  benchmark stand-ins at each BENCHMARK_DEPTHS;
- buffer: each BUFFER_SIZES_BYTES, open-loop workloads at load BUFFER_SWEEP_LOAD;
- chips (Fig. 7): HOS and SOS(QSL) on 1 to 16 chips (CHIP_GEOMETRIES), Financial1 at load
  CHIP_SWEEP_LOAD and Postmark closed loop.

    python3 scripts/sos_experiment.py [--quick] [--flashlane target/release/flashlane]

`--quick` replays the first 3000 requests of each workload and sweeps fewer points. Output:
out/sos/{results,load,buffer,chips}.csv (or *-quick.csv).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
try:
    # The experiment set lives in the package (flashlane reproduce sos uses the same).
    from flashlane.reproduce import sos
except ImportError as e:
    sys.exit(f"sos_experiment.py needs the flashlane package (pip install .): {e}")

# 512 pages of 2 KiB: our choice (the paper gives no size); flushing starts above half full.
MAIN_BUFFERS = (0, 1 << 20)
QUICK_LOADS = (1, 64, 1024)
QUICK_DEPTHS = (1, 32)
QUICK_BUFFERS = (0, 1 << 20, 16 << 20)


def run(flashlane: Path, args: list[str]) -> dict:
    """One simulation; returns the JSON summary."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "summary.json"
        command = [str(flashlane), "run", *args, "--json", str(out)]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
        return json.loads(out.read_text())


def row(workload: str, config: str, tags: dict, s: dict) -> dict:
    buffer = s.get("write_buffer") or {}
    return {
        "workload": sos.label(workload),
        "scheduler": config,
        **tags,
        "mean_response_us": round(s["latency_us"]["all"]["mean"], 1),
        "read_response_us": round(s["latency_us"]["read"]["mean"], 1),
        "write_response_us": round(s["latency_us"]["write"]["mean"], 1),
        "write_hit_ratio": round(s["device"]["write_hit_ratio"], 4),
        "write_hits": s["device"]["write_hits"],
        "moved_writes": s["device"]["moved_writes"],
        "idle_fraction_mean": round(s["device"]["idle_fraction_mean"], 4),
        "queue_length_mean": round(s["device"]["queue_length_mean"], 3),
        "queue_length_max": s["device"]["queue_length_max"],
        "buffer_write_hit_ratio": round(buffer.get("write_hit_ratio", 0.0), 4),
        "buffer_read_hit_ratio": round(buffer.get("read_hit_ratio", 0.0), 4),
        "buffer_full_waits": buffer.get("full_waits", 0),
        "flash_programs": s["flash"]["programs"],
        "gc_runs": s["gc"]["runs"],
        "requests": s["requests"]["completed"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flashlane", type=Path, default=REPO / "target/release/flashlane")
    parser.add_argument("--out", type=Path, default=REPO / "out/sos")
    parser.add_argument("--quick", action="store_true", help="first 3000 requests, fewer points")
    parser.add_argument("--jobs", type=int, default=2, help="simulations run at once")
    args = parser.parse_args()
    limit = sos.QUICK_REQUESTS if args.quick else None
    loads = QUICK_LOADS if args.quick else sos.LOAD_FACTORS
    depths = QUICK_DEPTHS if args.quick else sos.BENCHMARK_DEPTHS
    buffers = QUICK_BUFFERS if args.quick else sos.BUFFER_SIZES_BYTES

    # (set, workload, config, tags, extra arguments)
    jobs = []
    for w in sos.WORKLOADS:
        for b in MAIN_BUFFERS:
            extra = ("--set", f"device.write_buffer_bytes={b}")
            jobs += [("results", w, c, {"write_buffer_bytes": b}, extra) for c in sos.CONFIGS]
        for load in depths if sos.closed_loop(w) else loads:
            kind = "closed_loop_requests" if sos.closed_loop(w) else "load"
            extra = sos.load_args(w, load)
            jobs += [("load", w, c, {kind: load}, extra) for c in sos.CONFIGS]
        for b in buffers:
            extra = ("--set", f"device.write_buffer_bytes={b}")
            if not sos.closed_loop(w):
                extra += sos.load_args(w, sos.BUFFER_SWEEP_LOAD)
            jobs += [("buffer", w, c, {"write_buffer_bytes": b}, extra) for c in sos.CONFIGS]

    for w in ("Financial1", "Postmark"):
        load = () if sos.closed_loop(w) else sos.load_args(w, sos.CHIP_SWEEP_LOAD)
        for buses, ways in sos.CHIP_GEOMETRIES:
            extra = (*sos.chip_args(buses, ways), *load)
            tags = {"chips": buses * ways}
            jobs += [("chips", w, c, tags, extra) for c in ("HOS", "SOS(QSL)")]

    def one(job):
        name, w, c, tags, extra = job
        s = run(args.flashlane, sos.run_args(w, c, limit, str(REPO / "traces"), extra))
        return name, row(w, c, tags, s)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(one, jobs))
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = "-quick" if args.quick else ""
    for name in ("results", "load", "buffer", "chips"):
        rows = [r for n, r in results if n == name]
        normalize(rows)
        path = args.out / f"{name}{suffix}.csv"
        with path.open("w", newline="") as f:
            fields = list(dict.fromkeys(k for r in rows for k in r))
            writer = csv.DictWriter(f, fieldnames=fields)
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {path} ({len(rows)} runs)")


def normalize(rows: list[dict]) -> None:
    """normalized_to_ios and change_vs_hos_percent: against IOS / HOS of the same workload and
    the same swept value."""
    key_fields = ["load", "closed_loop_requests", "write_buffer_bytes", "chips"]

    def key(r: dict) -> tuple:
        return (r["workload"], *(r.get(k) for k in key_fields))

    base = {key(r): r["mean_response_us"] for r in rows if r["scheduler"] == "IOS"}
    hos = {key(r): r["mean_response_us"] for r in rows if r["scheduler"] == "HOS"}
    for r in rows:
        ios, h = base.get(key(r)), hos.get(key(r))
        r["normalized_to_ios"] = round(r["mean_response_us"] / ios, 3) if ios else ""
        r["change_vs_hos_percent"] = round(100 * (r["mean_response_us"] / h - 1), 1) if h else ""


if __name__ == "__main__":
    main()
