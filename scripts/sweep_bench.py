"""Time one flashlane.sweep in process, on the local pool and on a Dask LocalCluster.

    python scripts/sweep_bench.py

A 2 x 2 grid over the two shipped MQSim traces (8 whole-trace runs on mqsim-ssd). Prints
the wall time of each and whether the three frames are equal. Needs the dask extra.
docs/sweeps.md reports a run of it.
"""

from __future__ import annotations

import time
from pathlib import Path

import distributed

import flashlane

REPO = Path(__file__).resolve().parents[1]
GRID = {"ftl.overprovisioning_fraction": [0.07, 0.25], "device.queue_depth_requests": [4, 32]}
TRACES = [str(REPO / "traces" / "tpcc-small.mqsim"), str(REPO / "traces" / "websearch-small.mqsim")]


def main() -> None:
    frames = {}
    for name, jobs in [("jobs=1 (in process)", 1), ("local pool, jobs=2", 2)]:
        started = time.perf_counter()
        frames[name] = flashlane.sweep("mqsim-ssd", GRID, TRACES, seed=1, jobs=jobs)
        print(f"{name}: {time.perf_counter() - started:.2f} s", flush=True)
    started = time.perf_counter()
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        up = time.perf_counter()
        frames["dask"] = flashlane.sweep("mqsim-ssd", GRID, TRACES, seed=1, client=client)
        done = time.perf_counter()
    print(f"LocalCluster(n_workers=2): {done - up:.2f} s (starting it: {up - started:.2f} s)")
    frame = frames["dask"]
    print(f"{frame.height} rows, {frame.width} columns")
    first = next(iter(frames.values()))
    print("frames equal:", all(f.equals(first) for f in frames.values()))


if __name__ == "__main__":
    main()
