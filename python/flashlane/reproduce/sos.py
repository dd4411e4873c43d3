"""SOS (Software-based Out-of-order Scheduling): Fig. 6, Table I and Fig. 7 on ``sos-4x4``.

The experiment set (also used by ``scripts/sos_experiment.py``): the shipped Financial1 and
WebSearch traces (open loop at trace times, addresses remapped densely: the traces span more
than the 7.4 GiB drive) and labelled synthetic stand-ins for the paper's other workloads
(Bonnie++, Postmark, Financial2: ``flashlane gen --list``, readings in docs/workloads.md), once
per device scheduler: IOS, HOS, SOS(QSL), SOS(WHM), SOS. The full set adds a load sweep and a
write-buffer sweep on Financial1.
"""

from __future__ import annotations

from flashlane.reproduce._core import Claim, Figure, Point, Run, get, percent_change, ratio

PAPER = "sos"
TITLE = "SOS: Software-Based Out-of-Order Scheduling for NAND flash SSDs"
PRESET = "sos-4x4"
TRACES = {
    "Financial1": "financial1-head.spc",
    "WebSearch": "websearch-small.mqsim",
}
#: Synthetic stand-ins (profiles of the same names), in the paper's Table I order. Their label
#: says "synthetic stand-in for ..." and every table names them as stand-ins.
STANDINS = ("Bonnie++", "Postmark", "Financial2")
#: Requests a stand-in run replays (the full set; the quick set replays QUICK_REQUESTS).
STANDIN_REQUESTS = 20_000
CONFIGS = {
    "IOS": ["device.scheduler.kind=in_order"],
    "HOS": ["device.scheduler.kind=out_of_order"],
    "SOS(QSL)": [
        "device.scheduler.kind=sos",
        "device.scheduler.queue_size_leveller=true",
        "device.scheduler.write_hit_manager=false",
    ],
    "SOS(WHM)": [
        "device.scheduler.kind=sos",
        "device.scheduler.queue_size_leveller=false",
        "device.scheduler.write_hit_manager=true",
    ],
    "SOS": [
        "device.scheduler.kind=sos",
        "device.scheduler.queue_size_leveller=true",
        "device.scheduler.write_hit_manager=true",
    ],
}
QUICK_REQUESTS = 3000
#: Load factors of the open-loop sweep: requests arrive at trace time / factor
#: (``--time-scale 1/factor``). Our reading of "load": the paper replays at one unknown speed.
LOAD_FACTORS = (0.5, 1, 4, 16, 64, 256, 1024)
#: Closed-loop depths (requests in the system) of the benchmark stand-ins' load sweep.
BENCHMARK_DEPTHS = (1, 4, 16, 32, 64)
#: Fig. 7's chip counts (1 to 16) as (buses, ways): buses first, as BlueSSD's 4 buses x 4 ways
#: would be populated (our reading; the paper does not say which chips it kept).
CHIP_GEOMETRIES = ((1, 1), (2, 1), (4, 1), (4, 2), (4, 4))
#: Load of the chip sweep for open-loop workloads (Financial1's HOS queues start to build).
CHIP_SWEEP_LOAD = 64
#: Write-buffer sizes of the buffer sweep (``device.write_buffer_bytes``).
BUFFER_SIZES_BYTES = (0, 256 << 10, 1 << 20, 4 << 20, 16 << 20)
#: The load factor of the full set's buffer sweep on Financial1 (a load where HOS's queues
#: are long: see docs/results/sos.md).
BUFFER_SWEEP_LOAD = 256


def is_standin(workload: str) -> bool:
    return workload in STANDINS


def closed_loop(workload: str) -> bool:
    """The benchmark stand-ins replay closed loop (their spec says so); the rest open loop."""
    return workload in ("Bonnie++", "Postmark")


def workload_args(workload: str, max_requests: int | None, traces: str = "{traces}") -> list[str]:
    """The `flashlane run` arguments that name one workload (trace or stand-in)."""
    if workload in TRACES:
        args = ["--trace", f"{traces}/{TRACES[workload]}", "--remap-addresses"]
    elif workload in STANDINS:
        args = ["--profile", workload]
        max_requests = max_requests or STANDIN_REQUESTS
    else:
        raise ValueError(f"unknown SOS workload {workload!r}")
    if max_requests is not None:
        args += ["--max-requests", str(max_requests)]
    return args


def run_args(
    workload: str,
    config: str,
    max_requests: int | None,
    traces: str = "{traces}",
    extra: tuple[str, ...] = (),
) -> list[str]:
    """Every `flashlane run` argument of one SOS point (without --json); `extra` is appended
    (``--time-scale``, ``--closed-loop``, ``--set device.write_buffer_bytes=...``)."""
    args = ["--preset", PRESET, *workload_args(workload, max_requests, traces)]
    for setting in CONFIGS[config]:
        args += ["--set", setting]
    return [*args, *extra]


def chip_args(buses: int, ways: int) -> tuple[str, ...]:
    """Arguments of one chip-count step (the preset's geometry, fewer buses or ways)."""
    return ("--set", f"geometry.channels={buses}", "--set", f"geometry.chips_per_channel={ways}")


def load_args(workload: str, load: float) -> tuple[str, ...]:
    """Arguments of one load-sweep step: a time scale (open loop) or a depth (closed loop)."""
    if closed_loop(workload):
        return ("--closed-loop", str(int(load)))
    return ("--time-scale", repr(1.0 / load))


WORKLOADS = ["Bonnie++", "Postmark", "Financial1", "Financial2", "WebSearch"]


def points(quick: bool) -> list[Point]:
    """Fig. 6 / Table I / Fig. 7 on every workload; the full set adds the load and buffer
    sweeps on every workload."""
    limit = QUICK_REQUESTS if quick else None
    pts = [
        Point(PAPER, "fig6", workload, config, tuple(run_args(workload, config, limit)))
        for workload in WORKLOADS
        for config in CONFIGS
    ]
    if quick:
        return pts
    for workload in WORKLOADS:
        loads = BENCHMARK_DEPTHS if closed_loop(workload) else LOAD_FACTORS
        for load in loads:
            for config in CONFIGS:
                args = run_args(workload, config, None, extra=load_args(workload, load))
                pts.append(Point(PAPER, "load", workload, config, tuple(args), (("load", load),)))
        for size in BUFFER_SIZES_BYTES:
            extra = ("--set", f"device.write_buffer_bytes={size}")
            if not closed_loop(workload):
                extra = (*extra, *load_args(workload, BUFFER_SWEEP_LOAD))
            for config in CONFIGS:
                args = run_args(workload, config, None, extra=extra)
                tags = (("write_buffer_bytes", size),)
                pts.append(Point(PAPER, "buffer", workload, config, tuple(args), tags))
    for workload in ("Financial1", "Postmark"):
        load = () if closed_loop(workload) else load_args(workload, CHIP_SWEEP_LOAD)
        for buses, ways in CHIP_GEOMETRIES:
            for config in ("HOS", "SOS(QSL)"):
                args = run_args(workload, config, None, extra=(*chip_args(buses, ways), *load))
                tags = (("chips", buses * ways),)
                pts.append(Point(PAPER, "fig7chips", workload, config, tuple(args), tags))
    return pts


#: Table I: write-hit ratios with SOS(WHM), per workload (%).
PAPER_WRITE_HITS = {
    "Bonnie++": 11.7,
    "Postmark": 14.3,
    "Financial1": 17.6,
    "Financial2": 9.2,
    "WebSearch": 7.1,
}


def label(workload: str) -> str:
    """Workload name as tables show it: stand-ins are marked."""
    return f"{workload} (stand-in)" if is_standin(workload) else workload


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    fig6_runs = [r for r in runs if r.point.figure == "fig6"]
    index = {(r.point.workload, r.point.configuration): r for r in fig6_runs}

    def value(workload: str, config: str, path: str) -> float | None:
        run = index.get((workload, config))
        return None if run is None else get(run.summary, path)

    response = "latency_us.all.mean"
    limit = f"first {QUICK_REQUESTS} requests" if quick else f"{STANDIN_REQUESTS} per stand-in"
    caption = (
        f"Preset {PRESET} (4 buses x 4 ways, SLC). Traces {', '.join(TRACES.values())}: open "
        f"loop at trace times, addresses remapped. Synthetic stand-ins (not the paper's "
        f"traces; docs/workloads.md): {', '.join(STANDINS)} ({limit}); Bonnie++ and Postmark "
        "closed loop at 32 requests." + (" Quick set." if quick else "")
    )
    labels = [label(w) for w in WORKLOADS]

    def change(workload: str, config: str, base: str) -> float | None:
        return percent_change(value(workload, config, response), value(workload, base, response))

    fig6 = Figure(
        PAPER,
        "fig6",
        "Fig. 6: mean response time normalized to IOS",
        caption,
        "bars",
        "workload",
        "response time / IOS's (ratio)",
        labels,
        {
            c: [ratio(value(w, c, response), value(w, "IOS", response)) for w in WORKLOADS]
            for c in CONFIGS
        },
        claims=[
            Claim(
                f"SOS(QSL) vs HOS response time, {label(w)} (paper: 16-42 % lower)",
                -16.0,
                -42.0,
                change(w, "SOS(QSL)", "HOS"),
            )
            for w in WORKLOADS
        ]
        + [
            Claim(
                f"SOS(WHM) vs HOS response time, {label(w)} (paper: 5-17 % lower)",
                -5.0,
                -17.0,
                change(w, "SOS(WHM)", "HOS"),
            )
            for w in WORKLOADS
        ]
        + [
            Claim(
                "SOS vs IOS response time, Financial1 (paper: up to 56 % lower)",
                -56.0,
                -56.0,
                change("Financial1", "SOS", "IOS"),
            ),
        ],
        points=[r.point for r in fig6_runs],
    )
    hits = "device.write_hit_ratio"
    table1 = Figure(
        PAPER,
        "table1",
        "Table I: write-hit ratio with SOS(WHM)",
        caption + " Write-hit ratio: device.write_hit_ratio (docs/summary.md).",
        "bars",
        "workload",
        "write-hit ratio (%)",
        labels,
        {"SOS(WHM)": [_percent(value(w, "SOS(WHM)", hits)) for w in WORKLOADS]},
        paper_series={"Table I": [PAPER_WRITE_HITS[w] for w in WORKLOADS]},
        claims=[
            Claim(
                f"write-hit ratio of SOS(WHM), {label(w)} (paper: {PAPER_WRITE_HITS[w]} %)",
                PAPER_WRITE_HITS[w],
                PAPER_WRITE_HITS[w],
                _percent(value(w, "SOS(WHM)", hits)),
            )
            for w in WORKLOADS
        ],
        points=[r.point for r in fig6_runs],
    )
    idle = "device.idle_fraction_mean"
    fig7 = Figure(
        PAPER,
        "fig7",
        "Fig. 7: per-chip average idle time ratio",
        caption + " Idle ratio: device.idle_fraction_mean (docs/summary.md).",
        "bars",
        "workload",
        "per-chip idle time ratio (%)",
        labels,
        {c: [_percent(value(w, c, idle)) for w in WORKLOADS] for c in CONFIGS},
        claims=[
            Claim(
                f"SOS(QSL) per-chip idle time ratio, {label(w)} (paper: < 2 %)",
                2.0,
                2.0,
                _percent(value(w, "SOS(QSL)", idle)),
                kind="at_most",
            )
            for w in WORKLOADS
        ],
        points=[r.point for r in fig6_runs],
    )
    figs = [fig6, table1, fig7]
    if not quick:
        figs += _sweep_figures(runs)
        figs.append(_chips_figure(runs))
    return figs


def _chips_figure(runs: list[Run]) -> Figure:
    """Fig. 7 proper: per-chip idle ratio by chip count, HOS and SOS(QSL)."""
    idle = "device.idle_fraction_mean"
    sweep = [r for r in runs if r.point.figure == "fig7chips"]
    index = {(r.point.workload, r.point.configuration, r.point.tag("chips")): r for r in sweep}
    chips = [b * w for b, w in CHIP_GEOMETRIES]

    def value(workload: str, config: str, n: int) -> float | None:
        run = index.get((workload, config, n))
        return None if run is None else _percent(get(run.summary, idle))

    series = {
        f"{label(w)} {c}": [value(w, c, n) for n in chips]
        for w in ("Financial1", "Postmark")
        for c in ("HOS", "SOS(QSL)")
    }
    return Figure(
        PAPER,
        "fig7chips",
        "Fig. 7: per-chip average idle time ratio by number of chips",
        f"Preset {PRESET} with fewer buses / ways {CHIP_GEOMETRIES}; Financial1 at trace time / "
        f"{CHIP_SWEEP_LOAD}, Postmark (stand-in) closed loop at 32. Idle ratio: "
        "device.idle_fraction_mean (docs/summary.md).",
        "lines",
        "flash chips",
        "per-chip idle time ratio (%)",
        [str(n) for n in chips],
        series,
        claims=[
            Claim(
                f"SOS(QSL) per-chip idle ratio at {n} chips, {label(w)} (paper: < 2 %)",
                2.0,
                2.0,
                value(w, "SOS(QSL)", n),
                kind="at_most",
            )
            for w in ("Financial1", "Postmark")
            for n in (chips[-1],)
        ]
        + [
            Claim(
                f"HOS per-chip idle ratio at 16 chips, {label(w)} (paper: up to 23.5 %)",
                23.5,
                23.5,
                value(w, "HOS", chips[-1]),
            )
            for w in ("Financial1", "Postmark")
        ],
        points=[r.point for r in sweep],
        log_x=True,
    )


def _sweep_figures(runs: list[Run]) -> list[Figure]:
    """Mean response time by load and by write-buffer size, Financial1 (all workloads are in
    runs.csv and in docs/results/sos.md)."""
    fin = "Financial1"
    response = "latency_us.all.mean"
    figs = []
    for figure, tag, xlabel, values, log_x in (
        ("load", "load", "load (x trace-time arrival rate)", LOAD_FACTORS, True),
        ("buffer", "write_buffer_bytes", "write buffer (KiB)", BUFFER_SIZES_BYTES, False),
    ):
        index = {
            (r.point.configuration, r.point.tag(tag)): r
            for r in runs
            if r.point.figure == figure and r.point.workload == fin
        }

        def at(config: str, v: float, index: dict = index) -> float | None:
            run = index.get((config, v))
            return None if run is None else get(run.summary, response)

        # Normalized to HOS at the same point: absolute times span five decades.
        series = {c: [ratio(at(c, v), at("HOS", v)) for v in values] for c in CONFIGS}
        categories = [str(v) if tag == "load" else str(v >> 10) for v in values]
        where = (
            "requests arrive at trace time / load"
            if tag == "load"
            else f"at load {BUFFER_SWEEP_LOAD} (trace time / {BUFFER_SWEEP_LOAD})"
        )
        figs.append(
            Figure(
                PAPER,
                figure,
                f"Financial1: mean response time by {xlabel.split(' (')[0]}, normalized to HOS",
                f"Preset {PRESET}, traces/{TRACES[fin]}, addresses remapped; {where}. "
                "Not a paper figure: the paper reports one load and no buffer size.",
                "lines" if log_x else "bars",
                xlabel,
                "mean response time / HOS's (ratio)",
                categories,
                series,
                points=[
                    r.point for r in runs if r.point.figure == figure and r.point.workload == fin
                ],
                log_x=log_x,
            )
        )
    return figs


def _percent(fraction: float | None) -> float | None:
    return None if fraction is None else 100.0 * fraction
