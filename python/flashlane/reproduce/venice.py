"""Venice (conflict-free paths): Figure 9 (speedup over the shared-bus baseline), Figure 12
(the same on mixed workloads), Figure 13 (transfers whose path was conflict-free on the first
try) and Figure 14 (SSD energy over the baseline's), on ``venice-perf`` and ``venice-cost``
with an 8 x 8 array.

The experiment set is the 8 x 8 part of ``scripts/venice_experiment.py``'s: labelled synthetic
stand-ins of the paper's Table 2 workloads (``flashlane gen --list``: they match only read share,
mean size and inter-arrival time) and every real trace we ship (``REAL_TRACES``), cut to a
number of requests per workload. Speedup here is of mean request latency (baseline mean /
design mean): traces are replayed at their own arrival times, so execution time is bounded by
the trace's length (docs/results/venice.md).
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
# Every real trace we ship (distinct recordings: the .spc and .disksim files re-encode two of
# them), with the options that read it: its layout, and for YCSB-A,
# whose addresses lie past the preset's logical space, --fold-addresses.
REAL_TRACES = {
    "tpcc-small.mqsim": ["--format", "mqsim"],
    "websearch-small.mqsim": ["--format", "mqsim"],
    "financial1-head.ssdsim": ["--format", "ssdsim"],
    "msnfs-30s.msr.csv.gz": ["--format", "msr"],
    "ycsb-a-rocksdb.blkparse.gz": ["--format", "blkparse", "--fold-addresses"],
}
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
# Table 3 rows whose constituents our text copy of the paper keeps (mix2, mix4-6 lost theirs):
# each mix replays its stand-ins together, each in its own equal share of the logical space.
MIXES = {"mix1": ["src2_1", "proj_3"], "mix3": ["prxy_0", "rsrch_0"]}
# Figure 12 averages over the six mixes (Sec. 6.2): Venice over Baseline/pSSD/pnSSD/NoSSD
# 1.83/1.81/1.80/1.63, so each design over the baseline is 1.83 / that.
PAPER_MIX_SPEEDUP = {
    "packetized": 1.83 / 1.81,
    "pnssd": 1.83 / 1.80,
    "nossd": 1.83 / 1.63,
    "venice": 1.83,
}
# Figure 14(b) (Sec. 6.4): Venice's energy is 61/54/53/46 % below Baseline/pSSD/pnSSD/NoSSD, so
# each design's energy over the baseline's is (1 - 0.61) / (1 - that).
PAPER_ENERGY = {
    "packetized": 0.39 / 0.46,
    "pnssd": 0.39 / 0.47,
    "nossd": 0.39 / 0.54,
    "venice": 0.39,
}
# Figure 14(a): Venice's average power is 4 % below the baseline's.
PAPER_POWER = {"venice": 0.96}
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
        return [*args, "--trace", f"{traces}/{workload}", *REAL_TRACES[workload]]
    if workload in MIXES:
        return [*args, *(a for profile in MIXES[workload] for a in ("--profile", profile))]
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
    ] + [
        # Fig. 12: the two mixes on venice-perf (the quick set keeps mix1).
        Point(
            PAPER,
            "fig12",
            mix,
            design,
            tuple(run_args("venice-perf", design, mix, requests)),
        )
        for mix in (list(MIXES)[:1] if quick else MIXES)
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
    figs.append(_fig12(runs, requests))
    figs.append(_fig14(runs, requests))
    return figs


def _fig12(runs: list[Run], requests: int) -> Figure:
    """Fig. 12: mean-latency speedup over the baseline on the mixes we can rebuild."""
    mine = [r for r in runs if r.point.figure == "fig12"]
    index = {(r.point.workload, r.point.configuration): r for r in mine}
    mixes = list(dict.fromkeys(r.point.workload for r in mine))
    shown = DESIGNS[1:]

    def speedup(mix: str, design: str) -> float | None:
        base = get(index[(mix, "shared_bus")].summary, "latency_us.all.mean")
        ours = get(index[(mix, design)].summary, "latency_us.all.mean")
        return base / ours if base and ours else None

    per_mix = {m: [speedup(m, d) for d in shown] for m in mixes}
    overall = {d: _geomean([v for m in mixes if (v := speedup(m, d)) is not None]) for d in shown}
    constituents = "; ".join(f"{m} = {' + '.join(MIXES[m])}" for m in mixes)
    return Figure(
        PAPER,
        "fig12",
        "Fig. 12: mixed workloads, speedup over the shared-bus baseline (venice-perf)",
        f"Preset venice-perf, 8 x 8 array, first {requests} requests over all stand-ins of a "
        f"mix ({constituents}; synthetic stand-ins, each in its own equal share of the "
        "logical space). Only mix1 and mix3 of the paper's six keep their constituents in our "
        "copy of Table 3. Speedup = baseline mean latency / design mean latency; the paper's "
        "bars are its means over six mixes (Sec. 6.2).",
        "bars",
        "design",
        "speedup over baseline (ratio)",
        [NAMES[d] for d in shown],
        per_mix,
        paper_series={"mean of six mixes": [PAPER_MIX_SPEEDUP.get(d) for d in shown]},
        claims=[
            Claim(
                f"{NAMES[d]} speedup over the baseline on mixes (venice-perf), as a change",
                100 * (PAPER_MIX_SPEEDUP[d] - 1),
                100 * (PAPER_MIX_SPEEDUP[d] - 1),
                None if overall[d] is None else 100 * (overall[d] - 1),
            )
            for d in shown
            if d in PAPER_MIX_SPEEDUP
        ],
        points=[r.point for r in mine],
    )


def _fig14(runs: list[Run], requests: int) -> Figure:
    """Fig. 14: energy and average power over the baseline's, from the Fig. 9 venice-perf
    runs (no runs of its own)."""
    mine = [r for r in runs if r.point.figure == "fig9-venice-perf"]
    index = {(r.point.workload, r.point.configuration): r for r in mine}
    workloads = list(dict.fromkeys(r.point.workload for r in mine))

    def over_baseline(design: str, path: str) -> float | None:
        values = []
        for w in workloads:
            base = get(index[(w, "shared_bus")].summary, path)
            ours = get(index[(w, design)].summary, path)
            if base and ours is not None:
                values.append(ours / base)
        return _geomean(values)

    energy = {d: over_baseline(d, "energy.total_j") for d in DESIGNS}
    power = {d: over_baseline(d, "energy.average_power_w") for d in DESIGNS}
    claims = [
        Claim(
            f"{NAMES[d]} energy vs the baseline's (venice-perf)",
            100 * (PAPER_ENERGY[d] - 1),
            100 * (PAPER_ENERGY[d] - 1),
            None if energy[d] is None else 100 * (energy[d] - 1),
        )
        for d in DESIGNS
        if d in PAPER_ENERGY
    ] + [
        Claim(
            f"{NAMES[d]} average power vs the baseline's (venice-perf)",
            100 * (PAPER_POWER[d] - 1),
            100 * (PAPER_POWER[d] - 1),
            None if power[d] is None else 100 * (power[d] - 1),
        )
        for d in DESIGNS
        if d in PAPER_POWER
    ]
    return Figure(
        PAPER,
        "fig14",
        "Fig. 14: SSD energy and average power over the shared-bus baseline (venice-perf)",
        f"Preset venice-perf, 8 x 8 array, the Fig. 9 runs (first {requests} requests of each "
        f"of: {', '.join(workloads)}). Geometric means over workloads of energy.total_j and "
        "energy.average_power_w over the baseline's on the same workload (docs/summary.md). "
        "The paper's pSSD/pnSSD/NoSSD energies derive from Venice's 61/54/53/46 % reductions "
        "(Sec. 6.4); it gives power for Venice only.",
        "bars",
        "design",
        "energy or power / baseline's (ratio)",
        [NAMES[d] for d in DESIGNS],
        {
            "energy": [energy[d] for d in DESIGNS],
            "average power": [power[d] for d in DESIGNS],
        },
        paper_series={
            "energy": [PAPER_ENERGY.get(d) for d in DESIGNS],
            "average power": [PAPER_POWER.get(d) for d in DESIGNS],
        },
        claims=claims,
        points=[r.point for r in mine],
    )


def _mean_percent(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return 100 * sum(present) / len(present) if present else None
