#!/usr/bin/env python3
"""SOS's Fig. 6 / Table I / Fig. 7 setting: IOS, HOS, SOS(QSL), SOS(WHM) and SOS on `sos-4x4`.

Runs the release CLI on the shipped Financial1 and WebSearch traces (open loop, trace times),
once per device scheduler, and prints / writes mean response time normalized to IOS, the
write-hit ratio (`device.write_hits` / host page writes) and the per-chip average idle time
ratio (`device.idle_fraction_mean`). Every scheduler runs twice: without a write buffer (the
preset's default) and behind a DRAM write buffer of BUFFER_BYTES (`device.write_buffer_bytes`;
the paper's Fig. 3 has one, of unstated size), with the buffer's write/read hit ratios, full
waits and flushes. Stand-ins for Bonnie++, Postmark and Financial2 are not run yet (no labelled
stand-in exists in the repo).

    python3 scripts/sos_experiment.py [--quick] [--flashlane target/release/flashlane]

`--quick` replays the first 3000 requests of each trace. Output: out/sos/results.csv (or
results-quick.csv).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
try:
    # The experiment set lives in the package (flashlane reproduce sos uses the same).
    from flashlane.reproduce.sos import CONFIGS
    from flashlane.reproduce.sos import TRACES as TRACE_FILES
except ImportError as e:
    sys.exit(f"sos_experiment.py needs the flashlane package (pip install .): {e}")

TRACES = {workload: REPO / "traces" / name for workload, name in TRACE_FILES.items()}
# 512 pages of 2 KiB: our choice (the paper gives no size); flushing starts above half full.
BUFFER_BYTES = 1 << 20
BUFFERS = [0, BUFFER_BYTES]


def run(flashlane: Path, trace: Path, settings: list[str], max_requests: int | None) -> dict:
    """One simulation; returns the JSON summary."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "summary.json"
        # The traces span more than the 7.4 GiB drive: renumber their pages densely.
        command = [str(flashlane), "run", "--preset", "sos-4x4", "--trace", str(trace)]
        command += ["--remap-addresses"]
        for setting in settings:
            command += ["--set", setting]
        if max_requests is not None:
            command += ["--max-requests", str(max_requests)]
        command += ["--json", str(out)]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{done.stderr}")
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flashlane", type=Path, default=REPO / "target/release/flashlane")
    parser.add_argument("--out", type=Path, default=REPO / "out/sos")
    parser.add_argument("--quick", action="store_true", help="first 3000 requests per trace")
    args = parser.parse_args()
    max_requests = 3000 if args.quick else None
    rows = []
    for workload, trace in TRACES.items():
        for buffer_bytes in BUFFERS:
            rows += run_set(args.flashlane, workload, trace, buffer_bytes, max_requests)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / ("results-quick.csv" if args.quick else "results.csv")
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {path}")


def run_set(
    flashlane: Path, workload: str, trace: Path, buffer_bytes: int, max_requests: int | None
) -> list[dict]:
    """The five schedulers on one trace with one buffer size; normalized to IOS of the same."""
    rows = []
    base = None
    for name, settings in CONFIGS.items():
        settings = [*settings, f"device.write_buffer_bytes={buffer_bytes}"]
        s = run(flashlane, trace, settings, max_requests)
        mean_us = s["latency_us"]["all"]["mean"]
        if base is None:
            base = mean_us
        buffer = s.get("write_buffer") or {}
        rows.append(
            {
                "workload": workload,
                "scheduler": name,
                "write_buffer_bytes": buffer_bytes,
                "mean_response_us": round(mean_us, 1),
                "normalized_to_ios": round(mean_us / base, 3) if base else 0.0,
                "write_hit_ratio": round(s["device"]["write_hit_ratio"], 4),
                "write_hits": s["device"]["write_hits"],
                "moved_writes": s["device"]["moved_writes"],
                "idle_fraction_mean": round(s["device"]["idle_fraction_mean"], 4),
                "queue_length_mean": round(s["device"]["queue_length_mean"], 3),
                "queue_length_max": s["device"]["queue_length_max"],
                "buffer_write_hit_ratio": round(buffer.get("write_hit_ratio", 0.0), 4),
                "buffer_read_hit_ratio": round(buffer.get("read_hit_ratio", 0.0), 4),
                "buffer_full_waits": buffer.get("full_waits", 0),
                "buffer_flushes": buffer.get("flushes", 0),
                "flash_programs": s["flash"]["programs"],
                "gc_runs": s["gc"]["runs"],
                "requests": s["requests"]["completed"],
            }
        )
        print(", ".join(f"{k}={v}" for k, v in rows[-1].items()), flush=True)
    return rows


if __name__ == "__main__":
    main()
