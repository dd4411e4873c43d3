"""SOS (Software-based Out-of-order Scheduling): Fig. 6, Table I and Fig. 7 on ``sos-4x4``.

The experiment sets (``scripts/sos_experiment.py`` is a wrapper of the results set): the shipped
Financial1 and
WebSearch traces (open loop at trace times, addresses remapped densely: the traces span more
than the 7.4 GiB drive) and labelled synthetic stand-ins for the paper's other workloads
(Bonnie++, Postmark, Financial2: ``flashlane gen --list``, readings in docs/workloads.md), once
per device scheduler: IOS, HOS, SOS(QSL), SOS(WHM), SOS. The full report set adds a load sweep,
a write-buffer sweep and the chip-count sweep; the results set (``--results``) is the tables of
docs/results/sos.md: the main set with and without a 1 MiB write buffer, and the three sweeps
(fewer points and the first 3000 requests with ``--quick``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flashlane.reproduce import sos_map
from flashlane.reproduce._core import Claim, Figure, Point, Run, get, percent_change, ratio
from flashlane.reproduce.sos_platform import CONFIGS, PRESET

PAPER = "sos"
TITLE = "SOS: Software-Based Out-of-Order Scheduling for NAND flash SSDs"
#: The figures `--results` draws into OUT/figures/ for docs/results/sos.md (docs/results/figures/).
KEY_FIGURES = ("fig6", "map-sos", "map-qsl", "map-whm", "map-sos-gc", "map-qsl-gc", "map-whm-gc")
TRACES = {
    "Financial1": "financial1-head.spc",
    "WebSearch": "websearch-small.mqsim",
}
#: Synthetic stand-ins (profiles of the same names), in the paper's Table I order. Their label
#: says "synthetic stand-in for ..." and every table names them as stand-ins.
STANDINS = ("Bonnie++", "Postmark", "Financial2")
#: Requests a stand-in run replays (the full set; the quick set replays QUICK_REQUESTS).
STANDIN_REQUESTS = 20_000
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
        return pts + sos_map.points(quick)
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
    return pts + sos_map.points(quick)


#: Table I: write-hit ratios with SOS(WHM), per workload (%).
PAPER_WRITE_HITS = {
    "Bonnie++": 11.7,
    "Postmark": 14.3,
    "Financial1": 17.6,
    "Financial2": 9.2,
    "WebSearch": 7.1,
}


#: The paper's "up to 56 % lower" response time of SOS than IOS (Financial1), Sec. IV-B.
PAPER_SOS_VS_IOS = -56.0
#: The paper's per-chip idle time ratio: below 2 % with SOS(QSL), up to 23.5 % with HOS (%).
PAPER_QSL_IDLE_BOUND = 2.0
PAPER_HOS_IDLE = 23.5
#: docs/results/sos.md's section with the reasons for each figure's gaps.
GAPS = "The paper's claims beside ours"


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
        "response time / IOS's (1 = IOS)",
        labels,
        {
            c: [ratio(value(w, c, response), value(w, "IOS", response)) for w in WORKLOADS]
            for c in CONFIGS
        },
        paper_series={
            "SOS": [1 + PAPER_SOS_VS_IOS / 100 if w == "Financial1" else None for w in WORKLOADS]
        },
        baseline="IOS",
        paper_note='The diamond is the paper\'s "up to 56 % lower than IOS" (SOS, '
        "Financial1); its SOS(QSL) and SOS(WHM) ranges (16-42 %, 5-17 % lower) are against "
        "HOS: in the claims table.",
        gaps=GAPS,
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
                PAPER_SOS_VS_IOS,
                PAPER_SOS_VS_IOS,
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
        gaps=GAPS,
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
        paper_levels={"SOS(QSL) below 2 %": PAPER_QSL_IDLE_BOUND},
        gaps=GAPS,
        claims=[
            Claim(
                f"SOS(QSL) per-chip idle time ratio, {label(w)} (paper: < 2 %)",
                PAPER_QSL_IDLE_BOUND,
                PAPER_QSL_IDLE_BOUND,
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
    # Where the Fig. 6 claims appear (sos_map.py): its sentences go to those claims.
    return figs + sos_map.figures(runs, quick, [c.text for c in fig6.claims])


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
        paper_series={
            f"HOS up to {PAPER_HOS_IDLE} % at {chips[-1]} chips": [None] * (len(chips) - 1)
            + [PAPER_HOS_IDLE]
        },
        paper_levels={"SOS(QSL) below 2 %": PAPER_QSL_IDLE_BOUND},
        gaps=GAPS,
        claims=[
            Claim(
                f"SOS(QSL) per-chip idle ratio at {n} chips, {label(w)} (paper: < 2 %)",
                PAPER_QSL_IDLE_BOUND,
                PAPER_QSL_IDLE_BOUND,
                value(w, "SOS(QSL)", n),
                kind="at_most",
            )
            for w in ("Financial1", "Postmark")
            for n in (chips[-1],)
        ]
        + [
            Claim(
                f"HOS per-chip idle ratio at 16 chips, {label(w)} (paper: up to 23.5 %)",
                PAPER_HOS_IDLE,
                PAPER_HOS_IDLE,
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
                f"Preset {PRESET}, traces/{TRACES[fin]}, addresses remapped; {where}.",
                "lines" if log_x else "bars",
                xlabel,
                "mean response time / HOS's (1 = HOS)",
                categories,
                series,
                baseline="HOS",
                paper_note="not a paper figure (the paper reports one load and no buffer size).",
                gaps="Load sweep" if tag == "load" else "Write-buffer sweep",
                points=[
                    r.point for r in runs if r.point.figure == figure and r.point.workload == fin
                ],
                log_x=log_x,
            )
        )
    return figs


def _percent(fraction: float | None) -> float | None:
    return None if fraction is None else 100.0 * fraction


# --- the results set: docs/results/sos.md ----------------------------------------------------

#: The main set's write buffers: none, and 1 MiB (512 pages of 2 KiB: our choice, the paper
#: gives no size; flushing starts above half full).
MAIN_BUFFERS = (0, 1 << 20)
QUICK_LOADS = (1, 64, 1024)
QUICK_DEPTHS = (1, 32)
QUICK_BUFFERS = (0, 1 << 20, 16 << 20)
#: The chip-count sweep's workloads and schedulers (Fig. 7).
CHIP_WORKLOADS = ("Financial1", "Postmark")
CHIP_CONFIGS = ("HOS", "SOS(QSL)")
RESULTS_OPTIONS = ()


def results_points(quick: bool, options: Mapping[str, Any]) -> list[Point]:
    """Four sets over every workload and scheduler: ``main`` (trace-time load, without and
    behind a 1 MiB write buffer), ``load`` (open-loop workloads at trace time / load, the
    closed-loop stand-ins at each depth), ``buffer`` (each write-buffer size, open-loop
    workloads at BUFFER_SWEEP_LOAD) and ``chips`` (Fig. 7: HOS and SOS(QSL) on 1 to 16
    chips). --quick: the first QUICK_REQUESTS requests, fewer sweep points."""
    limit = QUICK_REQUESTS if quick else None
    loads = QUICK_LOADS if quick else LOAD_FACTORS
    depths = QUICK_DEPTHS if quick else BENCHMARK_DEPTHS
    buffers = QUICK_BUFFERS if quick else BUFFER_SIZES_BYTES
    pts = []

    def add(figure: str, workload: str, tags: tuple, extra: tuple[str, ...], configs) -> None:
        for config in configs:
            args = run_args(workload, config, limit, extra=extra)
            pts.append(Point(PAPER, figure, workload, config, tuple(args), tags))

    for w in WORKLOADS:
        for b in MAIN_BUFFERS:
            extra = ("--set", f"device.write_buffer_bytes={b}")
            add("main", w, (("write_buffer_bytes", b),), extra, CONFIGS)
        for load in depths if closed_loop(w) else loads:
            kind = "closed_loop_requests" if closed_loop(w) else "load"
            add("load", w, ((kind, load),), load_args(w, load), CONFIGS)
        for b in buffers:
            extra = ("--set", f"device.write_buffer_bytes={b}")
            if not closed_loop(w):
                extra += load_args(w, BUFFER_SWEEP_LOAD)
            add("buffer", w, (("write_buffer_bytes", b),), extra, CONFIGS)
    for w in CHIP_WORKLOADS:
        load = () if closed_loop(w) else load_args(w, CHIP_SWEEP_LOAD)
        for buses, ways in CHIP_GEOMETRIES:
            extra = (*chip_args(buses, ways), *load)
            add("chips", w, (("chips", buses * ways),), extra, CHIP_CONFIGS)
    return pts + sos_map.points(quick)


def _row(run: Run) -> dict:
    """One run's figures as the tables show them (rounded as they print)."""
    s = run.summary
    buffer = s.get("write_buffer") or {}
    return {
        "workload": run.point.workload,
        "scheduler": run.point.configuration,
        **dict(run.point.tags),
        "mean_response_us": round(s["latency_us"]["all"]["mean"], 1),
        "write_hit_ratio": round(s["device"]["write_hit_ratio"], 4),
        "moved_writes": s["device"]["moved_writes"],
        "idle_fraction_mean": round(s["device"]["idle_fraction_mean"], 4),
        "queue_length_mean": round(s["device"]["queue_length_mean"], 3),
        "buffer_write_hit_ratio": round(buffer.get("write_hit_ratio", 0.0), 4),
        "buffer_full_waits": buffer.get("full_waits", 0),
        "flash_programs": s["flash"]["programs"],
    }


def _share(fraction: float) -> str:
    """A ratio as the tables print it: ``0`` when zero, else a percentage."""
    return "0" if fraction == 0 else f"{100 * fraction:.2f} %"


def _idle(fraction: float) -> str:
    return f"{100 * fraction:.2f} %"


def _change(value: float, base: float) -> str:
    """``value`` against ``base`` in percent, from the rounded response times."""
    return f"{round(100 * (value / base - 1), 1):+.1f} %" if base else ""


def _normalized(value: float, base: float) -> str:
    return str(round(value / base, 3)) if base else ""


def _load_label(workload: str, load: float) -> str:
    return f"depth {load}" if closed_loop(workload) else f"{load}x"


def _buffer_label(size: int) -> str:
    if size == 0:
        return "none"
    return f"{size >> 20} MiB" if size >= 1 << 20 else f"{size >> 10} KiB"


def results_markdown(runs: list[Run], quick: bool, options: Mapping[str, Any], command: str) -> str:
    """The tables of docs/results/sos.md: the main set without and behind a 1 MiB write
    buffer, the load sweep, the write-buffer sweep and the chip-count sweep. "vs HOS" and
    "normalized to IOS" compare with the same workload at the same swept value; response times
    are in us."""
    rows = [(r.point.figure, _row(r)) for r in runs]

    def pick(figure: str, **match: Any) -> dict[str, dict]:
        """Scheduler -> row of one workload at one swept value."""
        return {
            row["scheduler"]: row
            for f, row in rows
            if f == figure and all(row.get(k) == v for k, v in match.items())
        }

    def swept(figure: str, workload: str, tag: str) -> list:
        return list(
            dict.fromkeys(
                row[tag]
                for f, row in rows
                if f == figure and row["workload"] == workload and tag in row
            )
        )

    lines = [
        "# SOS: the results set's tables",
        "",
        f'Generated by `{command}`. Response times in us; "vs HOS" = 100 (t / t_HOS - 1) '
        'and "normalized to IOS" = t / t_IOS on the same workload at the same swept value '
        "(from the response times as shown); ratios of 0 print as 0.",
        "",
        "## Main set: trace-time load (benchmarks: closed loop, 32 requests)",
        "",
        "| workload | scheduler | mean response (us) | normalized to IOS | vs HOS | moved writes "
        "| write-hit ratio | per-chip idle ratio | mean chip queue |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for w in WORKLOADS:
        by = pick("main", workload=w, write_buffer_bytes=0)
        for c in CONFIGS:
            if c not in by:
                continue
            r = by[c]
            t, ios, hos = (by[x]["mean_response_us"] for x in (c, "IOS", "HOS"))
            lines.append(
                f"| {label(w)} | {c} | {t} | {_normalized(t, ios)} "
                f"| {'' if c in ('IOS', 'HOS') else _change(t, hos)} | {r['moved_writes']} "
                f"| {_share(r['write_hit_ratio'])} | {_idle(r['idle_fraction_mean'])} "
                f"| {r['queue_length_mean']} |"
            )
    lines += [
        "",
        "### Behind a 1 MiB DRAM write buffer",
        "",
        "| workload | scheduler | mean response (us) | normalized to IOS | vs HOS | moved writes "
        "| buffer write-hit ratio | buffer-full waits | flash programs | per-chip idle ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in WORKLOADS:
        by = pick("main", workload=w, write_buffer_bytes=MAIN_BUFFERS[1])
        for c in CONFIGS:
            if c not in by:
                continue
            r = by[c]
            t, ios, hos = (by[x]["mean_response_us"] for x in (c, "IOS", "HOS"))
            lines.append(
                f"| {label(w)} | {c} | {t} | {_normalized(t, ios)} "
                f"| {'' if c in ('IOS', 'HOS') else _change(t, hos)} | {r['moved_writes']} "
                f"| {_share(r['buffer_write_hit_ratio'])} | {r['buffer_full_waits']} "
                f"| {r['flash_programs']} | {_idle(r['idle_fraction_mean'])} |"
            )
    lines += [
        "",
        "## Load sweep",
        "",
        "Open-loop workloads at trace time / load (`--time-scale 1/load`); the closed-loop "
        "stand-ins at each depth (`--closed-loop N`).",
        "",
        "| workload | load | IOS (us) | HOS (us) | SOS(QSL) vs HOS | SOS(WHM) vs HOS "
        "| SOS vs HOS | SOS vs IOS | WHM write-hit ratio | idle HOS | idle SOS(QSL) "
        "| mean chip queue (HOS) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in WORKLOADS:
        tag = "closed_loop_requests" if closed_loop(w) else "load"
        for load in swept("load", w, tag):
            by = pick("load", workload=w, **{tag: load})
            t = {c: by[c]["mean_response_us"] for c in CONFIGS}
            lines.append(
                f"| {label(w)} | {_load_label(w, load)} | {t['IOS']} | {t['HOS']} "
                f"| {_change(t['SOS(QSL)'], t['HOS'])} | {_change(t['SOS(WHM)'], t['HOS'])} "
                f"| {_change(t['SOS'], t['HOS'])} | {_change(t['SOS'], t['IOS'])} "
                f"| {_share(by['SOS(WHM)']['write_hit_ratio'])} "
                f"| {_idle(by['HOS']['idle_fraction_mean'])} "
                f"| {_idle(by['SOS(QSL)']['idle_fraction_mean'])} "
                f"| {by['HOS']['queue_length_mean']} |"
            )
    lines += [
        "",
        "## Write-buffer sweep",
        "",
        f"`device.write_buffer_bytes`; open-loop workloads at load {BUFFER_SWEEP_LOAD} (trace "
        f"time / {BUFFER_SWEEP_LOAD}), the closed-loop ones at their profile's depth.",
        "",
        "| workload | write buffer | IOS (us) | HOS (us) | SOS(QSL) vs HOS | SOS(WHM) vs HOS "
        "| SOS vs HOS | buffer write-hit ratio (HOS) | buffer-full waits (HOS) "
        "| device write-hit ratio (SOS(WHM)) | idle HOS | idle SOS(QSL) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in WORKLOADS:
        for size in swept("buffer", w, "write_buffer_bytes"):
            by = pick("buffer", workload=w, write_buffer_bytes=size)
            t = {c: by[c]["mean_response_us"] for c in CONFIGS}
            lines.append(
                f"| {label(w)} | {_buffer_label(size)} | {t['IOS']} | {t['HOS']} "
                f"| {_change(t['SOS(QSL)'], t['HOS'])} | {_change(t['SOS(WHM)'], t['HOS'])} "
                f"| {_change(t['SOS'], t['HOS'])} "
                f"| {_share(by['HOS']['buffer_write_hit_ratio'])} "
                f"| {by['HOS']['buffer_full_waits']} "
                f"| {_share(by['SOS(WHM)']['write_hit_ratio'])} "
                f"| {_idle(by['HOS']['idle_fraction_mean'])} "
                f"| {_idle(by['SOS(QSL)']['idle_fraction_mean'])} |"
            )
    lines += [
        "",
        "## Chip-count sweep (Fig. 7)",
        "",
        f"HOS and SOS(QSL) on {', '.join(f'{b}x{w}' for b, w in CHIP_GEOMETRIES)} buses x ways "
        f"(`geometry.channels` x `geometry.chips_per_channel`); open-loop workloads at load "
        f"{CHIP_SWEEP_LOAD}, closed-loop ones at their profile's depth.",
        "",
        "| workload | chips (buses x ways) | HOS response (us) | SOS(QSL) response (us) "
        "| SOS(QSL) vs HOS | idle HOS | idle SOS(QSL) | moved writes | mean chip queue (HOS) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    geometry = {b * w: f"{b}x{w}" for b, w in CHIP_GEOMETRIES}
    for w in CHIP_WORKLOADS:
        for chips in swept("chips", w, "chips"):
            by = pick("chips", workload=w, chips=chips)
            hos, qsl = by["HOS"], by["SOS(QSL)"]
            lines.append(
                f"| {label(w)} | {chips} ({geometry[chips]}) | {hos['mean_response_us']} "
                f"| {qsl['mean_response_us']} "
                f"| {_change(qsl['mean_response_us'], hos['mean_response_us'])} "
                f"| {_idle(hos['idle_fraction_mean'])} | {_idle(qsl['idle_fraction_mean'])} "
                f"| {qsl['moved_writes']} | {hos['queue_length_mean']} |"
            )
    lines += ["", *sos_map.markdown(runs, quick)]
    return "\n".join(lines) + "\n"
