"""Venice (conflict-free paths): Figure 9 (speedup over the shared-bus baseline) and Figure 13
(transfers whose path was conflict-free on the first try), on ``venice-perf`` and
``venice-cost`` with an 8 x 8 array.

The experiment set is the 8 x 8 part of ``scripts/venice_experiment.py``'s: labelled synthetic
stand-ins of the paper's Table 2 workloads (``flashlane gen --list``: they match only read share,
mean size and inter-arrival time) and the two real MQSim traces we ship, cut to a number of
requests per workload. Speedup here is of mean request latency (baseline mean / design mean):
traces are replayed at their own arrival times, so execution time is bounded by the trace's
length (docs/results/venice.md).
"""

from __future__ import annotations

import math

from flashlane.reproduce._core import Claim, Figure, Point, Run, get, percent_change

PAPER = "venice"
TITLE = "Venice: improving SSD parallelism at low cost via conflict-free accesses"
DESIGNS = ["shared_bus", "packetized", "pnssd", "nossd", "venice", "ideal"]
NAMES = {
    "shared_bus": "Baseline",
    "packetized": "pSSD",
    "pnssd": "pnSSD",
    "nossd": "NoSSD",
    "venice": "Venice",
    "ideal": "Ideal",
}
PROFILES = [
    "hm_0",
    "mds_0",
    "proj_3",
    "prxy_0",
    "rsrch_0",
    "src1_0",
    "src2_1",
    "usr_0",
    "wdev_0",
    "web_1",
    "YCSB_B",
    "YCSB_D",
    "jenkins",
    "postgres",
    "LUN0",
    "LUN2",
    "LUN3",
    "ssd-00",
    "ssd-10",
]
QUICK_PROFILES = ["hm_0", "YCSB_B"]
REAL_TRACES = ["tpcc-small.mqsim", "websearch-small.mqsim"]
PRESETS = ["venice-perf", "venice-cost"]
FULL_REQUESTS = 2000
QUICK_REQUESTS = 500
# The paper's averages (Sec. 6.1, Figure 9): Venice's speedup over the baseline and over the
# other designs, as speedups over the baseline; Figure 13: first-try conflict-free share (%).
PAPER_SPEEDUP = {
    "venice-perf": {
        "packetized": 2.65 / 2.10,
        "pnssd": 2.65 / 2.00,
        "nossd": 2.65 / 1.92,
        "venice": 2.65,
    },
    "venice-cost": {
        "packetized": 1.67 / 1.52,
        "pnssd": 1.67 / 1.55,
        "nossd": 1.67 / 1.47,
        "venice": 1.67,
    },
}
PAPER_FIRST_TRY = {
    "shared_bus": 76.40,
    "packetized": 78.47,
    "pnssd": 77.88,
    "nossd": 80.65,
    "venice": 99.98,
}


def run_args(
    preset: str, design: str, workload: str, requests: int, traces: str = "{traces}"
) -> list[str]:
    """Every `flashlane run` argument of one Venice point (without --json)."""
    args = [
        "--preset",
        preset,
        "--set",
        f"interconnect.kind={design}",
        "--set",
        "geometry.channels=8",
        "--set",
        "geometry.chips_per_channel=8",
        "--max-requests",
        str(requests),
    ]
    if workload in REAL_TRACES:
        return [*args, "--trace", f"{traces}/{workload}", "--format", "mqsim"]
    return [*args, "--profile", workload]


def points(quick: bool) -> list[Point]:
    workloads = QUICK_PROFILES if quick else [*PROFILES, *REAL_TRACES]
    requests = QUICK_REQUESTS if quick else FULL_REQUESTS
    return [
        Point(
            PAPER,
            f"fig9-{preset}",
            workload,
            design,
            tuple(run_args(preset, design, workload, requests)),
        )
        for preset in PRESETS
        for workload in workloads
        for design in DESIGNS
    ]


def _geomean(values: list[float]) -> float | None:
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    figs = []
    requests = QUICK_REQUESTS if quick else FULL_REQUESTS
    first_try: dict[str, dict[str, float | None]] = {}
    for preset in PRESETS:
        mine = [r for r in runs if r.point.figure == f"fig9-{preset}"]
        index = {(r.point.workload, r.point.configuration): r for r in mine}
        workloads = list(dict.fromkeys(r.point.workload for r in mine))

        def speedup(design: str, index=index, workloads=workloads) -> float | None:
            values = []
            for w in workloads:
                base = get(index[(w, "shared_bus")].summary, "latency_us.all.mean")
                ours = get(index[(w, design)].summary, "latency_us.all.mean")
                if base and ours:
                    values.append(base / ours)
            return _geomean(values)

        ours = {d: speedup(d) for d in DESIGNS}
        first_try[preset] = {
            d: _mean_percent(
                [
                    get(index[(w, d)].summary, "interconnect.first_try_conflict_free_fraction")
                    for w in workloads
                ]
            )
            for d in DESIGNS
        }
        paper = PAPER_SPEEDUP[preset]
        caption = (
            f"Preset {preset}, 8 x 8 array, first {requests} requests of each of: "
            f"{', '.join(workloads)} (stand-ins are synthetic). Speedup = geometric mean over "
            "workloads of baseline mean latency / design mean latency."
        )
        figs.append(
            Figure(
                PAPER,
                f"fig9-{preset}",
                f"Fig. 9 ({preset}): speedup over the shared-bus baseline",
                caption,
                "bars",
                "design",
                "speedup over baseline (ratio)",
                [NAMES[d] for d in DESIGNS],
                {"mean-latency speedup": [ours[d] for d in DESIGNS]},
                paper_series={"execution-time speedup": [paper.get(d) for d in DESIGNS]},
                claims=[
                    Claim(
                        f"{NAMES[d]} speedup over the baseline ({preset}), as a change",
                        100 * (paper[d] - 1),
                        100 * (paper[d] - 1),
                        None if ours[d] is None else 100 * (ours[d] - 1),
                    )
                    for d in paper
                ],
                points=[r.point for r in mine],
            )
        )
    preset = "venice-perf"
    shown = [d for d in DESIGNS if d in PAPER_FIRST_TRY]
    figs.append(
        Figure(
            PAPER,
            "fig13",
            "Fig. 13: transfers conflict-free on the first try",
            f"Preset {preset}, 8 x 8 array, the Fig. 9 runs; statistic "
            "interconnect.first_try_conflict_free_fraction (docs/summary.md), mean over workloads.",
            "bars",
            "design",
            "conflict-free on first try (%)",
            [NAMES[d] for d in shown],
            {preset: [first_try[preset][d] for d in shown]},
            paper_series={"paper": [PAPER_FIRST_TRY[d] for d in shown]},
            claims=[
                Claim(
                    "Venice's first-try conflict-free share vs the baseline's (relative change)",
                    100 * (PAPER_FIRST_TRY["venice"] / PAPER_FIRST_TRY["shared_bus"] - 1),
                    100 * (PAPER_FIRST_TRY["venice"] / PAPER_FIRST_TRY["shared_bus"] - 1),
                    percent_change(first_try[preset]["venice"], first_try[preset]["shared_bus"]),
                )
            ],
            points=[r.point for r in runs if r.point.figure == f"fig9-{preset}"],
        )
    )
    return figs


def _mean_percent(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return 100 * sum(present) / len(present) if present else None
