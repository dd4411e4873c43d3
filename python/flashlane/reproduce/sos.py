"""SOS (Software-based Out-of-order Scheduling): Fig. 6 and Fig. 7 on ``sos-4x4``.

The experiment set (also used by ``scripts/sos_experiment.py``): the shipped Financial1 and
WebSearch traces, open loop at trace times, addresses remapped densely (the traces span more
than the 7.4 GiB drive), once per device scheduler: IOS, HOS, SOS(QSL), SOS(WHM), SOS.
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


def run_args(trace: str, config: str, max_requests: int | None, traces: str = "{traces}"):
    """Every `flashlane run` argument of one SOS point (without --json)."""
    args = ["--preset", PRESET, "--trace", f"{traces}/{trace}", "--remap-addresses"]
    for setting in CONFIGS[config]:
        args += ["--set", setting]
    if max_requests is not None:
        args += ["--max-requests", str(max_requests)]
    return args


def points(quick: bool) -> list[Point]:
    limit = QUICK_REQUESTS if quick else None
    return [
        Point(PAPER, "fig6", workload, config, tuple(run_args(trace, config, limit)))
        for workload, trace in TRACES.items()
        for config in CONFIGS
    ]


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    index = {(r.point.workload, r.point.configuration): r for r in runs}
    workloads = list(TRACES)

    def value(workload: str, config: str, path: str) -> float | None:
        run = index.get((workload, config))
        return None if run is None else get(run.summary, path)

    response = "latency_us.all.mean"
    caption = (
        f"Preset {PRESET} (4 buses x 4 ways, SLC), open loop at trace times, addresses "
        f"remapped; traces: {', '.join(TRACES.values())}"
        + (f" (first {QUICK_REQUESTS} requests)." if quick else ".")
    )
    fin = "Financial1"

    def change(config: str, base: str) -> float | None:
        return percent_change(value(fin, config, response), value(fin, base, response))

    fig6 = Figure(
        PAPER,
        "fig6",
        "Fig. 6: mean response time normalized to IOS",
        caption,
        "bars",
        "workload",
        "response time / IOS's (ratio)",
        workloads,
        {
            c: [ratio(value(w, c, response), value(w, "IOS", response)) for w in workloads]
            for c in CONFIGS
        },
        claims=[
            Claim(
                "SOS(QSL) vs HOS response time, Financial1 (paper: 16-42 % lower)",
                -16.0,
                -42.0,
                change("SOS(QSL)", "HOS"),
            ),
            Claim(
                "SOS(WHM) vs HOS response time, Financial1 (paper: 5-17 % lower)",
                -5.0,
                -17.0,
                change("SOS(WHM)", "HOS"),
            ),
            Claim(
                "SOS vs IOS response time, Financial1 (paper: up to 56 % lower)",
                -56.0,
                -56.0,
                change("SOS", "IOS"),
            ),
            Claim(
                "write-hit ratio of SOS(WHM), Financial1 (paper: 17.6 %)",
                17.6,
                17.6,
                _percent(value(fin, "SOS(WHM)", "device.write_hit_ratio")),
            ),
        ],
        points=[r.point for r in runs],
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
        workloads,
        {c: [_percent(value(w, c, idle)) for w in workloads] for c in CONFIGS},
        claims=[
            Claim(
                f"SOS(QSL) per-chip idle time ratio, {w} (paper: < 2 %)",
                2.0,
                2.0,
                _percent(value(w, "SOS(QSL)", idle)),
                kind="at_most",
            )
            for w in workloads
        ],
        points=[r.point for r in runs],
    )
    return [fig6, fig7]


def _percent(fraction: float | None) -> float | None:
    return None if fraction is None else 100.0 * fraction
