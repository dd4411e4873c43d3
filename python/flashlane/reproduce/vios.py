"""VIOS (variation-aware I/O scheduler): Figures 5, 6 and 7 on the paper's platform, and Table
1's workloads as labelled synthetic stand-ins.

The experiment set: the ``ssdsim-platform`` preset (the PIQ and VIOS papers' SSD with SSDsim's
request path: request queue of 64, hand-over at device events, reads first per chip, write
acknowledged at data transfer, read-modify-write; drive filled) with process variation on and
the paper's timings (program 600 us at dVp = 0.3, read 20 us, erase 1.5 ms), for NOOP (SSDsim's
FIFO), PIQ as the public SSDsim fork runs it, VIOS's batches alone (``vios-``) and VIOS with
variation-aware allocation; the PIQ and VIOS schedulers get the fork's PIQ hand-over (all
waiting requests at once, only while every channel is idle). ``scripts/vios_experiment.py``
keeps the earlier platforms (PIQ's ``host_queue`` reading on ``ssdsim-mlc-8x8``).
"""

from __future__ import annotations

from flashlane.reproduce import piq
from flashlane.reproduce._core import Claim, Figure, Point, Run, get, mean, percent_change, ratio

PAPER = "vios"
TITLE = "VIOS: a variation-aware I/O scheduler for flash SSDs"
PRESET = "ssdsim-platform"
TRACES = [
    ("financial1-head.spc", "spc"),
    ("msnfs-30s.msr.csv.gz", "msr"),
    ("tpcc-small.mqsim", "mqsim"),
    ("ycsb-a-rocksdb.blkparse.gz", "blkparse"),
    ("websearch-small.mqsim", "mqsim"),
]
STAGES = [6000, 9000, 12000, 15000]
# The fork's hand-over under its PIQ, for every scheduler that reorders.
FORK_HANDOVER = ["host.handover_per_pass=all", "host.handover_needs_idle_channels=true"]
CONFIGS = {
    "noop": ["host.scheduler.kind=noop"],
    "piq": ["host.scheduler.kind=piq", *piq.FORK_PIQ],
    "vios-": ["host.scheduler.kind=vios", *FORK_HANDOVER],
    "vios": [
        "host.scheduler.kind=vios",
        "ftl.block_choice=fastest_for_conflicts",
        *FORK_HANDOVER,
    ],
}
# Everything else is in the preset.
PLATFORM: list[str] = []
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
# VIOS Table 1: trace -> (read I/Os, write I/Os, ConflictsRatio % under NOOP at 12K). Our
# stand-ins (profiles vios_*) match only the read and write counts (flashlane gen --list).
TABLE_1 = {
    "prn": (61422, 438578, 59.89),
    "fin": (129342, 370658, 28.30),
    "hm": (139527, 360473, 44.65),
    "mds": (26301, 473699, 4.70),
    "proj": (151549, 348451, 14.29),
    "rsrch": (43803, 456197, 47.45),
    "src": (81377, 418623, 77.74),
    "stg": (43818, 456182, 46.40),
    "ts": (76687, 423313, 6.95),
    "usr": (206983, 293017, 20.09),
    "wdev": (102663, 397337, 43.84),
    "web": (239458, 260542, 21.79),
}
STAND_INS = [f"vios_{t}" for t in TABLE_1]
QUICK_STAND_INS = ["vios_src"]
# The stand-ins run at MAIN_STAGE only, for these schedulers, cut to the first N of their
# 500,000 requests (the paper's "500000 I/Os of each trace" do not fit the time budget).
TABLE1_CONFIGS = ["noop", "piq", "vios"]
TABLE1_REQUESTS = 20_000
QUICK_TABLE1_REQUESTS = 3000


def run_args(
    trace: str, layout: str, pe: int, config: str, max_requests: int, traces: str = "{traces}"
) -> list[str]:
    """Every `flashlane run` argument of one VIOS point (without --json); an empty `layout`
    names a profile (a Table 1 stand-in) instead of a trace."""
    if layout:
        inputs = ["--trace", f"{traces}/{trace}", "--format", layout, "--remap-addresses"]
    else:
        inputs = ["--profile", trace]
    args = ["--preset", PRESET, *inputs, "--max-requests", str(max_requests)]
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
    table1_requests = QUICK_TABLE1_REQUESTS if quick else TABLE1_REQUESTS
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
    ] + [
        Point(
            PAPER,
            "table1",
            stand_in,
            config,
            tuple(run_args(stand_in, "", MAIN_STAGE, config, table1_requests)),
            (("pe_cycles", MAIN_STAGE),),
        )
        for stand_in in (QUICK_STAND_INS if quick else STAND_INS)
        for config in TABLE1_CONFIGS
    ]


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    table1 = _table1([r for r in runs if r.point.figure == "table1"], quick)
    runs = [r for r in runs if r.point.figure != "table1"]
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
        f"Preset {PRESET} (SSDsim's request path, NOOP = SSDsim's FIFO, PIQ as the SSDsim "
        f"fork's), variation on, paper timings, drive filled; {MAIN_STAGE} P/E cycles; first "
        f"{limit} requests of {', '.join(workloads)}."
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
    return [fig5, fig6, fig7, table1]


def conflicts_ratio_percent(summary: dict) -> float | None:
    """Table 1's ConflictsRatio: conflicting requests as PIQ counts them (reads + writes whose
    chips intersect those of a request outstanding or queued, docs/summary.md `conflicts.*`)
    over completed requests, in percent."""
    reads, writes = get(summary, "conflicts.read"), get(summary, "conflicts.write")
    done = get(summary, "requests.completed")
    if reads is None or writes is None or not done:
        return None
    return 100 * (reads + writes) / done


def _table1(runs: list[Run], quick: bool) -> Figure:
    index = {(r.point.workload, r.point.configuration): r for r in runs}
    stand_ins = list(dict.fromkeys(r.point.workload for r in runs))

    def value(stand_in: str, config: str, path: str) -> float | None:
        return get(index[(stand_in, config)].summary, path)

    def change(config: str, base: str, path: str) -> float | None:
        return mean(
            [percent_change(value(w, config, path), value(w, base, path)) for w in stand_ins]
        )

    read, write = "latency_us.read.mean", "latency_us.write.mean"
    requests = QUICK_TABLE1_REQUESTS if quick else TABLE1_REQUESTS
    return Figure(
        PAPER,
        "table1",
        f"Table 1 stand-ins: ConflictsRatio under NOOP ({MAIN_STAGE} P/E)",
        f"Preset {PRESET}, the Fig. 5-7 platform, {MAIN_STAGE} P/E. Synthetic stand-ins of "
        "Table 1's traces (profiles vios_*: only their read and write counts), first "
        f"{requests} of 500,000 requests (reduced to fit the time budget). ConflictsRatio = "
        "(conflicts.read + conflicts.write) / requests.completed under NOOP. Claims: the "
        "paper's means over its traces, ours over the stand-ins.",
        "bars",
        "Table 1 stand-in",
        "conflicting requests (%)",
        stand_ins,
        {
            "NOOP": [conflicts_ratio_percent(index[(w, "noop")].summary) for w in stand_ins],
        },
        paper_series={
            "Table 1 ConflictsRatio": [TABLE_1[w.removeprefix("vios_")][2] for w in stand_ins]
        },
        claims=[
            Claim(
                "VIOS read latency vs NOOP, mean over the stand-ins",
                -17.66,
                -17.66,
                change("vios", "noop", read),
            ),
            Claim(
                "VIOS write latency vs NOOP, mean over the stand-ins",
                -22.93,
                -22.93,
                change("vios", "noop", write),
            ),
            Claim(
                "VIOS write latency vs PIQ, mean over the stand-ins",
                -7.71,
                -7.71,
                change("vios", "piq", write),
            ),
        ],
        points=[r.point for r in runs],
    )
