"""PASS's platform: the schedulers compared, the labelled stand-ins of the paper's workloads,
the drive behaviours its gain rests on, and the run of one point, in one module that both the
figure sets (pass_.py) and the effect map (pass_map.py) import (pass_.py's docstring says what
each set runs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flashlane.reproduce._core import Point

PAPER = "pass"
SCHEDULERS = ["noop", "deadline", "cfq", "anticipatory", "pass"]
GIB = 1 << 30


def spec_text(
    label: str,
    requests: int,
    read_fraction: float,
    size_bytes: int,
    span_bytes: int,
    seed: int,
    arrival: str,
    stream_count: int,
) -> str:
    """A synthetic workload spec (docs/workloads.md)."""
    return (
        f"label = {json.dumps(label)}\n"
        f"requests = {requests}\n"
        f"read_fraction = {read_fraction}\n"
        f"seed = {seed}\n"
        f"stream_count = {stream_count}\n"
        f"[arrival]\n{arrival}\n"
        f'[size]\nkind = "fixed"\nbytes = {size_bytes}\n'
        f'[address]\nkind = "uniform"\nspan_bytes = {span_bytes}\nalign_bytes = {size_bytes}\n'
    )


@dataclass(frozen=True)
class Workload:
    """A labelled synthetic stand-in: one spec per thread file, or one spec for all threads."""

    key: str
    label: str
    read_fraction: float
    size_bytes: int
    span_bytes: int
    #: The paper's request count (the full sets run all of them; --quick a fifth).
    requests: int
    per_thread_files: bool = False

    def specs(self, threads: int, requests: int) -> list[str]:
        """TOML texts of the specs (docs/workloads.md)."""
        if self.per_thread_files:
            # One source per thread: each gets its own share of the logical space (its file)
            # and its own stream; fixed 1 ns gaps deal the sources' records in turn, and the
            # closed-loop replay keeps `threads` requests outstanding.
            return [
                spec_text(
                    f"{self.label} (thread {t})",
                    requests,
                    self.read_fraction,
                    self.size_bytes,
                    self.span_bytes,
                    seed=t + 1,
                    arrival='kind = "fixed"\ninterarrival_ns = 1',
                    stream_count=1,
                )
                for t in range(threads)
            ]
        return [
            spec_text(
                self.label,
                requests,
                self.read_fraction,
                self.size_bytes,
                self.span_bytes,
                seed=1,
                arrival=f'kind = "closed_loop"\nqueue_depth_requests = {threads}',
                stream_count=threads,
            )
        ]


MULTITHREADED = Workload(
    "multithreaded",
    "stand-in for PASS's multithreaded file benchmark: per thread a 10 GiB file, uniform random "
    "4 KiB reads and writes (half each), one outstanding request per thread; not: ext4 "
    "metadata and journal writes, page cache",
    0.5,
    4096,
    10 * GIB,
    10_000,
    per_thread_files=True,
)
FILEIO = Workload(
    "sysbench-fileio",
    "stand-in for sysbench random file I/O (20 GiB of files, 16 KiB blocks, 1.5 reads per "
    "write, 10,000 requests in all); not: fsync every 100 requests, file boundaries",
    0.6,
    16384,
    20 * GIB,
    10_000,
)
SIMPLE = Workload(
    "oltp-simple",
    "stand-in for sysbench OLTP Simple on InnoDB (40 GiB table, 16 KiB pages, point selects "
    "that miss the buffer pool: random 16 KiB reads, 100,000 requests); not: buffer-pool hits, "
    "index pages, log writes",
    1.0,
    16384,
    40 * GIB,
    100_000,
)
COMPLEX = Workload(
    "oltp-complex",
    "stand-in for sysbench OLTP Complex on InnoDB (40 GiB table, 16 KiB pages, 3 page reads "
    "per page write, 50,000 I/Os for 10,000 transactions); not: redo-log appends, doublewrite "
    "buffer, fsync, buffer-pool hits, range scans",
    0.75,
    16384,
    40 * GIB,
    50_000,
)
# Figs. 9 and 10: the sysbench stand-ins (docs/models/pass.md).
SWEEP_FIGURES = {"sysbench-fileio": "fig9", "oltp-simple": "fig10a", "oltp-complex": "fig10b"}
SWEEP_FIGS = set(SWEEP_FIGURES.values())


def workload_point(
    figure: str,
    workload: Workload,
    scheduler: str,
    preset: str,
    threads: int,
    depth: int,
    requests: int,
    extra: tuple[str, ...] = (),
    *,
    stem: str | None = None,
    tags: tuple[tuple[str, Any], ...] = (),
) -> Point:
    """One run: `workload`'s specs for `threads` threads and `requests` requests, closed loop,
    scheduler and device queue depth set; `stem` names its spec files, `tags` extend the
    point's (threads, depth)."""
    if stem is None:
        stem = f"{figure}-{workload.key}-{scheduler}" + (
            f"-t{threads}" if figure in SWEEP_FIGS else ""
        )
    specs = workload.specs(threads, requests)
    files = tuple((f"{stem}-{i}.toml", text) for i, text in enumerate(specs))
    args = [
        "--preset",
        preset,
        "--set",
        f"host.scheduler.kind={scheduler}",
        "--set",
        f"device.queue_depth_requests={depth}",
        "--closed-loop",
        str(threads),
        *extra,
    ]
    for name, _ in files:
        args += ["--synthetic", f"{{work}}/{name}"]
    return Point(
        PAPER,
        figure,
        workload.key,
        scheduler,
        tuple(args),
        (("threads", threads), ("device_queue_depth_requests", depth), *tags),
        files,
    )


def _curve_args(table: str, count_key: str, onset: int) -> tuple[str, ...]:
    """`--set`s of one of PASS's drive behaviours (`device.TABLE`) over 4 GiB regions: array
    times x1 up to `onset` (of the count `COUNT_KEY` names), x1.25 at twice it, x2 at eight
    times it (the shape of the paper's Fig. 2; an assumed curve)."""
    counts, factors = [1, onset, 2 * onset, 8 * onset], [1.0, 1.0, 1.25, 2.0]
    if onset == 1:
        counts, factors = counts[1:], factors[1:]
    return (
        "--set",
        f"device.{table}.region_bytes={4 * (1 << 30)}",
        "--set",
        f"device.{table}.{count_key}={counts}",
        "--set",
        f"device.{table}.service_time_factor={factors}",
    )


def contention_args(onset: int) -> tuple[str, ...]:
    """The drive behaviour with its slowdown starting past `onset` outstanding requests in a
    4 GiB region (device.region_contention)."""
    return _curve_args("region_contention", "outstanding_requests", onset)


def region_runs_args(onset: int) -> tuple[str, ...]:
    """The drive behaviour's second reading (device.region_runs, docs/models/pass.md): a request
    sent to a 4 GiB region in a row with others slows with its place in the run, from place
    `onset` on (the shape contention_args assumes)."""
    return _curve_args("region_runs", "run_length_requests", onset)
