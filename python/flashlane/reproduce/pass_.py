"""PASS (parallelism-aware scheduler): Table 2 (throughput of the multithreaded benchmark),
Figs. 9 and 10 (sysbench file I/O and OLTP Simple / Complex over a thread sweep) and Table 3
(write amplification relative to Noop), on ``pass-ssd1`` and ``pass-msr-60gb``.

A reduced form of ``scripts/pass_experiment.py``'s set: the same labelled synthetic stand-ins
(the paper's benchmarks ran on a file system on a real SSD; the stand-ins keep only read share,
request size, footprint and thread count: docs/models/pass.md) and the same platform (NCQ depth
31, closed loop, one outstanding request per thread), for Noop, Deadline, CFQ, AS and PASS. The
NCQ-less and concatenated-layout variants stay in the script (docs/results/pass.md).
"""

from __future__ import annotations

import json

from flashlane.reproduce._core import Claim, Figure, Point, Run, get, percent_change, ratio

PAPER = "pass"
TITLE = "PASS: a parallelism-aware scheduler for SSDs (Linux block-layer schedulers)"
SCHEDULERS = ["noop", "deadline", "cfq", "anticipatory", "pass"]
NAMES = {"noop": "Noop", "deadline": "Deadline", "cfq": "CFQ", "anticipatory": "AS", "pass": "PASS"}
GIB = 1 << 30
QUICK_TABLE3 = ["noop", "pass"]
# Table 2 of the paper (read MB/s, write MB/s, total MB/s, IOPS; Noop's and CFQ's IOPS are
# printed "3.74" and "3.64", without the thousands, and are read as 3740 and 3640).
PAPER_TABLE2 = {
    "noop": (6.06, 5.95, 12.01, 3740),
    "cfq": (5.87, 5.84, 11.71, 3640),
    "deadline": (6.07, 6.04, 12.12, 3103),
    "anticipatory": (5.93, 5.90, 11.84, 3072),
    "pass": (7.02, 7.05, 14.07, 3190),
}
# Table 3: write amplification relative to Noop, Complex OLTP column.
PAPER_TABLE3_COMPLEX = {
    "noop": 1.0,
    "deadline": 2.34,
    "cfq": 3.21,
    "anticipatory": 2.96,
    "pass": 1.52,
}


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


# Figs. 9 and 10: (key, label, read fraction, request bytes, footprint bytes, requests in all)
# of the sysbench stand-ins (docs/models/pass.md), as scripts/pass_experiment.py defines them.
SWEEP_WORKLOADS = {
    "sysbench-fileio": (
        "stand-in for sysbench random file I/O (20 GiB of files, 16 KiB blocks, 1.5 reads per "
        "write, 10,000 requests in all)",
        0.6,
        16384,
        20 * GIB,
        10_000,
    ),
    "oltp-simple": (
        "stand-in for sysbench OLTP Simple on InnoDB (40 GiB table, 16 KiB page reads that "
        "miss the buffer pool, 100,000 requests)",
        1.0,
        16384,
        40 * GIB,
        100_000,
    ),
    "oltp-complex": (
        "stand-in for sysbench OLTP Complex on InnoDB (40 GiB table, 16 KiB pages, 3 page "
        "reads per page write, 50,000 I/Os)",
        0.75,
        16384,
        40 * GIB,
        50_000,
    ),
}
SWEEP_FIGURES = {"sysbench-fileio": "fig9", "oltp-simple": "fig10a", "oltp-complex": "fig10b"}
SWEEP_THREADS = [1, 2, 4, 8, 16, 32, 64]
SWEEP_FIGS = set(SWEEP_FIGURES.values())
QUICK_SWEEP_THREADS = [4, 16, 32]
# Fig. 9 (Sec. 4.2): PASS over the best of the other four at 16 and 32 threads (percent).
PAPER_FIG9_GAIN = {16: 36.6, 32: 41.6}
# The full set's sweeps run this fraction of the paper's request counts (1: all of them).
SWEEP_SCALE = 1


def sweep_spec(workload: str, threads: int, requests: int) -> str:
    """One closed-loop spec whose `threads` streams keep one request outstanding each."""
    label, read_fraction, size, span, _ = SWEEP_WORKLOADS[workload]
    return spec_text(
        label,
        requests,
        read_fraction,
        size,
        span,
        1,
        f'kind = "closed_loop"\nqueue_depth_requests = {threads}',
        threads,
    )


def multithreaded_specs(threads: int, requests: int) -> list[str]:
    """PASS's multithreaded file benchmark: per thread a 10 GiB file, uniform random 4 KiB
    reads and writes (half each), one outstanding request per thread."""
    return [
        spec_text(
            f"multithreaded stand-in (thread {t})",
            requests,
            0.5,
            4096,
            10 * GIB,
            t + 1,
            'kind = "fixed"\ninterarrival_ns = 1',
            1,
        )
        for t in range(threads)
    ]


def complex_oltp_spec(threads: int, requests: int) -> str:
    """sysbench OLTP Complex on InnoDB: 40 GiB table, 16 KiB pages, 3 reads per write."""
    return spec_text(
        "oltp-complex stand-in",
        requests,
        0.75,
        16384,
        40 * GIB,
        1,
        f'kind = "closed_loop"\nqueue_depth_requests = {threads}',
        threads,
    )


def _point(
    figure: str,
    workload: str,
    scheduler: str,
    preset: str,
    threads: int,
    depth: int,
    specs: list[str],
    extra: tuple[str, ...] = (),
) -> Point:
    stem = f"{figure}-{workload}-{scheduler}" + (f"-t{threads}" if figure in SWEEP_FIGS else "")
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
        workload,
        scheduler,
        tuple(args),
        (("threads", threads), ("device_queue_depth_requests", depth)),
        files,
    )


def points(quick: bool) -> list[Point]:
    scale = 5 if quick else 1
    result = [
        _point(
            "table2",
            "multithreaded",
            s,
            "pass-ssd1",
            4,
            31,
            multithreaded_specs(4, 10_000 // scale),
        )
        for s in SCHEDULERS
    ]
    # Figs. 9 and 10: the thread sweeps at NCQ depth 31 (a fifth of the requests, as Table 2's
    # quick set, and two thread counts with --quick).
    for workload, figure in SWEEP_FIGURES.items():
        requests = SWEEP_WORKLOADS[workload][4] // (5 if quick else SWEEP_SCALE)
        for threads in QUICK_SWEEP_THREADS if quick else SWEEP_THREADS:
            result += [
                _point(
                    figure,
                    workload,
                    s,
                    "pass-ssd1",
                    threads,
                    31,
                    [sweep_spec(workload, threads, requests)],
                )
                for s in SCHEDULERS
            ]
    # Sec. 4.5 / Table 3: the full, aged 60 GB drive, 64 threads at NCQ depth 31. Ageing the
    # drive takes seconds per run: --quick runs Noop and PASS only.
    result += [
        _point(
            "table3",
            "oltp-complex",
            s,
            "pass-msr-60gb",
            64,
            31,
            [complex_oltp_spec(64, 50_000 // scale)],
            ("--set", "precondition.age=true"),
        )
        for s in (QUICK_TABLE3 if quick else SCHEDULERS)
    ]
    return result


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    index = {(r.point.figure, r.point.configuration): r for r in runs}

    def mb_per_s(scheduler: str) -> float | None:
        return throughput_mb_per_s(index[("table2", scheduler)].summary, 4096)

    names = [NAMES[s] for s in SCHEDULERS]
    ours = {s: mb_per_s(s) for s in SCHEDULERS}
    best_other = max((v for k, v in ours.items() if k != "pass" and v is not None), default=None)
    paper_best_other = max(v[2] for k, v in PAPER_TABLE2.items() if k != "pass")
    table2 = Figure(
        PAPER,
        "table2",
        "Table 2: multithreaded benchmark throughput",
        "Preset pass-ssd1, 4 threads (one 10 GiB file each, random 4 KiB, half reads), NCQ "
        f"depth 31, closed loop; {10_000 // (5 if quick else 1)} requests per thread. "
        "Throughput = completed requests x 4 KiB / simulated time.",
        "bars",
        "scheduler",
        "throughput (MB/s)",
        names,
        {"ours": [ours[s] for s in SCHEDULERS]},
        paper_series={"Table 2": [PAPER_TABLE2[s][2] for s in SCHEDULERS]},
        claims=[
            Claim(
                "PASS throughput vs the best other scheduler",
                100 * (PAPER_TABLE2["pass"][2] / paper_best_other - 1),
                100 * (PAPER_TABLE2["pass"][2] / paper_best_other - 1),
                percent_change(ours["pass"], best_other),
            )
        ],
        points=[r.point for r in runs if r.point.figure == "table2"],
    )

    def waf(scheduler: str) -> float | None:
        run = index.get(("table3", scheduler))
        return None if run is None else get(run.summary, "waf")

    relative = {s: ratio(waf(s), waf("noop")) for s in SCHEDULERS}
    table3 = Figure(
        PAPER,
        "table3",
        "Table 3: write amplification relative to Noop (Complex OLTP)",
        "Preset pass-msr-60gb (aged), OLTP Complex stand-in (40 GiB, 16 KiB pages, 3 reads per "
        f"write), 64 threads, NCQ depth 31; {50_000 // (5 if quick else 1)} requests. "
        "WAF: the summary's waf (docs/summary.md).",
        "bars",
        "scheduler",
        "WAF / Noop's (ratio)",
        names,
        {"ours": [relative[s] for s in SCHEDULERS]},
        paper_series={"Table 3": [PAPER_TABLE3_COMPLEX[s] for s in SCHEDULERS]},
        claims=[
            Claim(
                f"{NAMES[s]} write amplification vs Noop (Complex OLTP)",
                100 * (PAPER_TABLE3_COMPLEX[s] - 1),
                100 * (PAPER_TABLE3_COMPLEX[s] - 1),
                percent_change(waf(s), waf("noop")),
            )
            for s in SCHEDULERS
            if s != "noop" and ("table3", s) in index
        ],
        points=[r.point for r in runs if r.point.figure == "table3"],
    )
    sweeps = [_sweep_figure(runs, workload, quick) for workload in SWEEP_FIGURES]
    return [table2, *sweeps, table3]


def throughput_mb_per_s(summary: dict, size_bytes: int) -> float | None:
    """Completed requests x request size / simulated time (MB/s, 10^6 bytes)."""
    seconds = get(summary, "sim_time_ns")
    done = get(summary, "requests.completed")
    if not seconds or done is None:
        return None
    return done * size_bytes / 1e6 / (seconds / 1e9)


def _sweep_figure(runs: list[Run], workload: str, quick: bool) -> Figure:
    figure = SWEEP_FIGURES[workload]
    mine = [r for r in runs if r.point.figure == figure]
    size = SWEEP_WORKLOADS[workload][2]
    index = {(r.point.configuration, r.point.tag("threads")): r for r in mine}
    threads = sorted({r.point.tag("threads") for r in mine})
    ours = {
        s: [throughput_mb_per_s(index[(s, t)].summary, size) for t in threads] for s in SCHEDULERS
    }

    def gain(t: int) -> float | None:
        others = [ours[s][threads.index(t)] for s in SCHEDULERS if s != "pass"]
        best = max((v for v in others if v is not None), default=None)
        return percent_change(ours["pass"][threads.index(t)], best)

    claims = []
    if workload == "sysbench-fileio":
        claims = [
            Claim(
                f"PASS throughput vs the best other scheduler at {t} threads",
                paper,
                paper,
                gain(t) if t in threads else None,
            )
            for t, paper in PAPER_FIG9_GAIN.items()
        ]
    requests = SWEEP_WORKLOADS[workload][4] // (5 if quick else SWEEP_SCALE)
    name = (
        "Fig. 9: sysbench random file I/O"
        if figure == "fig9"
        else (f"Fig. 10{figure[-1]}: OLTP {'Simple' if workload == 'oltp-simple' else 'Complex'}")
    )
    return Figure(
        PAPER,
        figure,
        f"{name}, throughput by thread count",
        f"Preset pass-ssd1, {SWEEP_WORKLOADS[workload][0]}; {requests} requests per run, "
        "closed loop with one outstanding request per thread, NCQ depth 31, striped layout. "
        "Throughput = completed requests x request size / simulated time. "
        + (
            "The paper prints numbers only for 16 and 32 threads (PASS over the best other)."
            if figure == "fig9"
            else "The paper prints no numbers for this figure (only its trend)."
        ),
        "lines",
        "threads",
        "throughput (MB/s)",
        [str(t) for t in threads],
        {NAMES[s]: ours[s] for s in SCHEDULERS},
        claims=claims,
        points=[r.point for r in mine],
        log_x=True,
    )
