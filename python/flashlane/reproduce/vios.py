"""VIOS (variation-aware I/O scheduler): Figures 5, 6 and 7 on SSDsim's queueing.

The experiment set (the same runs as ``scripts/vios_experiment.py`` on its ``ssdsim``
platform): ``ssdsim-mlc-8x8`` with process variation on, the paper's timings (program 600 us at
dVp = 0.3, read 20 us, erase 1.5 ms), the drive filled, SSDsim's device order with a host queue
of 64 in front of a request queue of 64 (PIQ's ``host_queue`` reading, docs/models/vios.md),
for NOOP, PIQ, VIOS's batches alone (``vios-``) and VIOS with variation-aware allocation.
"""

from __future__ import annotations

from flashlane.reproduce import piq
from flashlane.reproduce._core import Claim, Figure, Point, Run, get, mean, percent_change, ratio

PAPER = "vios"
TITLE = "VIOS: a variation-aware I/O scheduler for flash SSDs"
PRESET = "ssdsim-mlc-8x8"
TRACES = [
    ("financial1-head.spc", "spc"),
    ("msnfs-30s.msr.csv.gz", "msr"),
    ("tpcc-small.mqsim", "mqsim"),
    ("ycsb-a-rocksdb.blkparse.gz", "blkparse"),
    ("websearch-small.mqsim", "mqsim"),
]
STAGES = [6000, 9000, 12000, 15000]
CONFIGS = {
    "noop": ["host.scheduler.kind=noop"],
    "piq": ["host.scheduler.kind=piq"],
    "vios-": ["host.scheduler.kind=vios"],
    "vios": ["host.scheduler.kind=vios", "ftl.block_choice=fastest_for_conflicts"],
}
PLATFORM = ["device.scheduler.kind=ssdsim", *piq.PLATFORMS["host_queue"]]
PAPER_TIMING = [
    "timing.page_program_ns=600000",
    "timing.page_read_ns=20000",
    "timing.block_erase_ns=1500000",
]
# Fig. 7: VIOS's write latency reduction relative to PIQ at 6K, 9K, 12K, 15K P/E (percent).
PAPER_FIG7 = [2.25, 5.25, 7.71, 9.63]
# The full set: the three traces of docs/results/vios.md's claims at every stage, the first
# 50,000 requests of each (kept under the 15-minute budget of `reproduce all`; the script runs
# all five and the Table 1 stand-ins); the quick set: msnfs, two stages, 3000 requests.
FULL_TRACES = TRACES[:3]
FULL_REQUESTS = 50_000
QUICK_TRACES = TRACES[1:2]
QUICK_STAGES = [6000, 12000]
QUICK_REQUESTS = 3000
MAIN_STAGE = 12000


def run_args(
    trace: str, layout: str, pe: int, config: str, max_requests: int, traces: str = "{traces}"
) -> list[str]:
    """Every `flashlane run` argument of one VIOS point (without --json)."""
    args = [
        "--preset",
        PRESET,
        "--trace",
        f"{traces}/{trace}",
        "--format",
        layout,
        "--remap-addresses",
        "--max-requests",
        str(max_requests),
    ]
    settings = [
        *PAPER_TIMING,
        "precondition.fill_fraction=1.0",
        "variation.enabled=true",
        f"variation.initial_pe_cycles={pe}",
        *PLATFORM,
        *CONFIGS[config],
    ]
    for setting in settings:
        args += ["--set", setting]
    return args


def points(quick: bool) -> list[Point]:
    traces = QUICK_TRACES if quick else FULL_TRACES
    stages = QUICK_STAGES if quick else STAGES
    limit = QUICK_REQUESTS if quick else FULL_REQUESTS
    return [
        Point(
            PAPER,
            "fig5-7",
            trace,
            config,
            tuple(run_args(trace, layout, pe, config, limit)),
            (("pe_cycles", pe),),
        )
        for trace, layout in traces
        for pe in stages
        for config in CONFIGS
    ]


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    index = {(r.point.workload, r.point.configuration, r.point.tag("pe_cycles")): r for r in runs}
    workloads = list(dict.fromkeys(r.point.workload for r in runs))
    stages = sorted({r.point.tag("pe_cycles") for r in runs})

    def value(workload: str, config: str, pe: int, path: str) -> float | None:
        run = index.get((workload, config, pe))
        return None if run is None else get(run.summary, path)

    read, write = "latency_us.read.mean", "latency_us.write.mean"
    shown = ["piq", "vios-", "vios"]

    def normalized(path: str) -> dict[str, list[float | None]]:
        return {
            c: [
                ratio(value(w, c, MAIN_STAGE, path), value(w, "noop", MAIN_STAGE, path))
                for w in workloads
            ]
            for c in shown
        }

    def change(config: str, base: str, path: str, pe: int = MAIN_STAGE) -> float | None:
        return mean(
            [
                percent_change(value(w, config, pe, path), value(w, base, pe, path))
                for w in workloads
            ]
        )

    limit = QUICK_REQUESTS if quick else FULL_REQUESTS
    caption = (
        f"Preset {PRESET}, variation on, paper timings, drive filled, SSDsim order, host queue "
        f"64 + request queue 64; {MAIN_STAGE} P/E cycles; first {limit} requests of "
        f"{', '.join(workloads)}."
    )
    pts = [r.point for r in runs]
    fig5 = Figure(
        PAPER,
        "fig5",
        f"Fig. 5: mean read latency normalized to NOOP ({MAIN_STAGE} P/E)",
        caption,
        "bars",
        "workload",
        "read latency / NOOP's (ratio)",
        workloads,
        normalized(read),
        claims=[
            Claim(
                "VIOS read latency vs NOOP, mean over workloads",
                -17.66,
                -17.66,
                change("vios", "noop", read),
            )
        ],
        points=pts,
    )
    fig6 = Figure(
        PAPER,
        "fig6",
        f"Fig. 6: mean write latency normalized to NOOP ({MAIN_STAGE} P/E)",
        caption,
        "bars",
        "workload",
        "write latency / NOOP's (ratio)",
        workloads,
        normalized(write),
        claims=[
            Claim(
                "VIOS write latency vs NOOP, mean over workloads",
                -22.93,
                -22.93,
                change("vios", "noop", write),
            ),
            Claim(
                "VIOS write latency vs PIQ, mean over workloads",
                -7.71,
                -7.71,
                change("vios", "piq", write),
            ),
        ],
        points=pts,
    )
    reduction = [change("vios", "piq", write, pe) for pe in stages]
    paper_by_stage = dict(zip(STAGES, PAPER_FIG7, strict=True))
    fig7 = Figure(
        PAPER,
        "fig7",
        "Fig. 7: write latency reduction of VIOS relative to PIQ by wear",
        caption.replace(f"{MAIN_STAGE} P/E cycles", "P/E cycles on x"),
        "lines",
        "initial wear (P/E cycles)",
        "write latency reduction vs PIQ (%)",
        [str(s) for s in stages],
        {"VIOS vs PIQ (mean over workloads)": [None if r is None else -r for r in reduction]},
        paper_series={"VIOS vs PIQ": [paper_by_stage.get(s) for s in stages]},
        claims=[
            Claim(
                f"VIOS write latency vs PIQ at {pe} P/E",
                -paper_by_stage[pe],
                -paper_by_stage[pe],
                r,
            )
            for pe, r in zip(stages, reduction, strict=True)
        ],
        points=pts,
    )
    return [fig5, fig6, fig7]
