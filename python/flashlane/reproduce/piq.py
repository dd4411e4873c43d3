"""PIQ (Parallel Issue Queuing): Figures 8(a), 8(b), 11 and 12 on the paper's platform.

The experiment sets (``scripts/piq_experiment.py`` is a wrapper of the results set). The main
platform, ``ssdsim``,
is the ``ssdsim-platform`` preset: the paper's 8 x 8 MLC SSD with SSDsim's request path as the
public SSDsim fork with PIQ runs it (request queue of 64, hand-over at device events, reads first
per chip, write acknowledged at data transfer, read-modify-write), warmed up full. NOOP there is
SSDsim's FIFO (one request per pass), ``noop_d`` is SSDsim's NOOP-D (one per pass, only while
every channel is idle), and RWS / PIQ_R / PIQ_W / PIQ run as the fork's PIQ does: reordered into
conflict-free passes at every hand-over, never held, all handed over at once while every
channel is idle (docs/models/piq.md, "Two issue rules"). Two earlier readings on the plain
``ssdsim-mlc-8x8`` preset stay for comparison: ``host_queue`` (a host queue of 64 in front of
SSDsim's request queue of 64) and ``shared_queue`` (the I/O queue *is* SSDsim's request queue),
both with our batch lists, named (``host.scheduler.issue_rule=batch_lists``: the default is the
fork's passes). Workloads: shipped traces (addresses remapped) and the labelled
synthetic stand-ins of the paper's Table I.
"""

from __future__ import annotations

import io
import statistics
from collections.abc import Mapping
from typing import Any

from flashlane.reproduce import piq_map
from flashlane.reproduce._core import (
    Claim,
    Figure,
    Option,
    Point,
    Run,
    at_last,
    choose,
    comma_list,
    get,
    mean,
    percent_change,
    ratio,
    spread,
    with_mean,
    within_text,
)
from flashlane.reproduce.piq_platform import (
    BASE,
    MAIN_PLATFORM,
    PLATFORM_PRESETS,
    PLATFORM_SCHEMES,
    PLATFORMS,
    PRESET,
    scheme_settings,
)

PAPER = "piq"
TITLE = "PIQ: Parallel Issue Queuing for conflict-free reads and writes"
#: The figures `--results` draws into OUT/figures/ for docs/results/piq.md (docs/results/figures/).
KEY_FIGURES = ("fig8a", "fig8b", "map-read", "map-write", "map-read-gc", "map-write-gc")
TRACES = [
    ("tpcc-small.mqsim", "mqsim"),
    ("websearch-small.mqsim", "mqsim"),
    ("financial1-head.ssdsim", "ssdsim"),
    ("financial1-head.spc", "spc"),
    ("msnfs-30s.disksim.gz", "disksim"),
    ("msnfs-30s.msr.csv.gz", "msr"),
    ("ycsb-a-rocksdb.blkparse.gz", "blkparse"),
]
QUICK_TRACES = [("tpcc-small.mqsim", "mqsim"), ("msnfs-30s.msr.csv.gz", "msr")]
STAND_INS = [
    "piq_r129066_w370933",
    "piq_r484454_w15445",
    "piq_r75305_w424694",
    "piq_r346001_w153995",
    "piq_r419058_w80930",
    "piq_r15385_w484614",
    "piq_r97924_w402069",
    "piq_r99000_w400992",
]
QUICK_STAND_INS = ["piq_r484454_w15445", "piq_r15385_w484614"]
QUEUE_LENGTHS = [1, 4, 16, 64, 256, 512]
QUICK_QUEUE_LENGTHS = [1, 16, 64, 512]
SWEEP_SCHEMES = ["noop", "piq", "piq_cycles"]
SWEEP_WORKLOADS = ["tpcc-small.mqsim", "msnfs-30s.msr.csv.gz", "piq_r346001_w153995"]
QUICK_SWEEP_WORKLOADS = ["piq_r484454_w15445"]

# `flashlane reproduce piq --quick` runs the main platform and one stand-in only (the results
# set's --quick keeps every platform and whole traces).
FIGURE8_SCHEMES = ["rws", "piq_r", "piq_w", "piq"]


def stand_in_requests(quick: bool) -> tuple[int, int]:
    """(total, warm-up) requests of a stand-in: the paper replays 500,000 after 500,000 of
    warm-up; we keep the proportion at a size that runs in seconds."""
    return (6000, 1000) if quick else (120_000, 20_000)


def workload_args(workload: str, quick: bool, traces: str = "{traces}") -> list[str]:
    """`flashlane run` arguments that replay one workload (trace file or stand-in)."""
    for name, layout in TRACES:
        if name == workload:
            return ["--trace", f"{traces}/{name}", "--format", layout, "--remap-addresses"]
    total, warmup = stand_in_requests(quick)
    return ["--profile", workload, "--max-requests", str(total), "--warmup-requests", str(warmup)]


def run_args(
    platform: str, workload: str, scheme: str, queue: int, quick: bool, traces: str = "{traces}"
) -> list[str]:
    """Every `flashlane run` argument of one PIQ point (without --json)."""
    args = ["--preset", PLATFORM_PRESETS[platform], *workload_args(workload, quick, traces)]
    base = [] if PLATFORM_PRESETS[platform] == PRESET else BASE
    for setting in [*base, *PLATFORMS[platform], *scheme_settings(platform, scheme)]:
        args += ["--set", setting]
    args += ["--set", f"host.queue_length_requests={queue}"]
    return args


def _point(
    figure: str, platform: str, workload: str, scheme: str, queue: int, quick: bool
) -> Point:
    return Point(
        PAPER,
        figure,
        workload,
        f"{platform}/{scheme}",
        tuple(run_args(platform, workload, scheme, queue, quick)),
        (("queue_length_requests", queue),),
    )


def points(quick: bool) -> list[Point]:
    if quick:
        platforms = [MAIN_PLATFORM]
        # Each run fills the drive first (seconds): one stand-in keeps --quick short.
        workloads = QUICK_STAND_INS[:1]
        schemes = ["noop", "noop_d", *FIGURE8_SCHEMES]
        sweep_workloads, queues = QUICK_SWEEP_WORKLOADS, [1, 64]
    else:
        # The main platform and the paper's five schemes: the shared-queue reading and the
        # batch-cycle variants are in the results set (docs/results/piq.md).
        platforms = [MAIN_PLATFORM]
        workloads = [t for t, _ in TRACES] + STAND_INS
        schemes = ["noop", "noop_d", *FIGURE8_SCHEMES]
        sweep_workloads, queues = SWEEP_WORKLOADS, QUEUE_LENGTHS
    result = []
    for platform in platforms:
        for workload in workloads:
            for scheme in schemes:
                if scheme in PLATFORM_SCHEMES[platform]:
                    result.append(_point("fig8", platform, workload, scheme, 64, quick))
        for workload in sweep_workloads:
            for scheme in ["noop", "piq"]:
                for queue in queues:
                    result.append(_point("fig11", platform, workload, scheme, queue, quick))
    # Where the Fig. 8 headline appears: hot chips x offered load (piq_map.py).
    return result + piq_map.points(quick)


#: The paper's means over workloads as changes vs each figure's baseline (%), drawn beside our
#: means: Fig. 8(a) read latency vs NOOP (PIQ: abstract; PIQ_R: Sec. V-B), Fig. 8(b) write
#: latency vs NOOP, Fig. 12 chip utilization vs RWS (Sec. V-B).
PAPER_MEANS = {
    "fig8a": {"piq": -15.6, "piq_r": -19.6},
    "fig8b": {"piq": -28.6, "piq_w": -47.0},
    "fig12": {"piq": 24.2, "piq_r": 14.7, "piq_w": 11.9},
}
#: The claim each paper diamond draws (its legend entry).
PAPER_LABELS = {
    "fig8a": {
        "piq": "PIQ read latency vs NOOP, -15.6 % (abstract)",
        "piq_r": "PIQ_R read latency vs NOOP, -19.6 % (Sec. V-B)",
    },
    "fig8b": {
        "piq": "PIQ write latency vs NOOP, -28.6 % (abstract)",
        "piq_w": "PIQ_W write latency vs NOOP, -47.0 % (Sec. V-B)",
    },
    "fig12": {
        "piq": "PIQ chip utilization vs RWS, +24.2 % (Sec. V-B)",
        "piq_r": "PIQ_R chip utilization vs RWS, +14.7 %",
        "piq_w": "PIQ_W chip utilization vs RWS, +11.9 %",
    },
}
#: docs/results/piq.md's section with the reasons for the gaps on this platform.
GAPS = "Why, on this platform"
OTHER_BASELINES = (
    "The paper's PIQ vs NOOP-D and vs RWS are against other baselines: in the claims table."
)


def workload_label(workload: str) -> str:
    """A workload as an axis label: a trace without its layout suffix (the layout in brackets
    where one trace ships in two), a Table I stand-in by its read share."""
    if workload.startswith("piq_r"):
        reads, writes = (int(n) for n in workload.removeprefix("piq_r").split("_w"))
        return f"Table I, {100 * reads / (reads + writes):.1f} % reads"
    stem = workload.split(".")[0]
    twins = [t for t, _ in TRACES if t.split(".")[0] == stem]
    layout = dict(TRACES).get(workload, "")
    return f"{stem} ({layout})" if len(twins) > 1 else stem


#: Said on a Fig. 8 or 12 figure whose four schemes are this close at every workload (a share
#: of the smallest), with the largest difference: bars that look like a bug without it.
EQUAL_WITHIN = 0.02
EQUAL_BARS = (
    "RWS, PIQ_R, PIQ_W and PIQ are {within} of each other at every workload: on this platform "
    "each hands every waiting request over at once while every channel is idle, and each chip "
    "then serves its reads first whatever order they came in, so the four orders give (nearly) "
    "the same service (docs/results/piq.md, 'Why, on this platform', C)."
)


def _equal_note(series: dict[str, list[float | None]]) -> str:
    """EQUAL_BARS with the series' largest difference, when it is at most EQUAL_WITHIN."""
    share = spread(series)
    ok = share is not None and share <= EQUAL_WITHIN
    return EQUAL_BARS.format(within=within_text(share)) if ok else ""


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    fig8 = [r for r in runs if r.point.figure == "fig8"]
    index = {(r.point.configuration, r.point.workload): r for r in fig8}
    workloads = list(dict.fromkeys(r.point.workload for r in fig8))
    platform = MAIN_PLATFORM
    schemes = [s for s in FIGURE8_SCHEMES if (f"{platform}/{s}", workloads[0]) in index]

    def value(scheme: str, workload: str, path: str) -> float | None:
        run = index.get((f"{platform}/{scheme}", workload))
        return None if run is None else get(run.summary, path)

    def normalized(path: str, base: str = "noop") -> dict[str, list[float | None]]:
        return {
            s: [ratio(value(s, w, path), value(base, w, path)) for w in workloads] for s in schemes
        }

    def bars(figure: str, path: str, base: str = "noop") -> dict[str, Any]:
        """Categories, our series and the paper's means of a normalized figure: the workloads
        and their mean, the paper's numbers at the mean."""
        categories, series = with_mean(
            [workload_label(w) for w in workloads], normalized(path, base)
        )
        paper = {s: 1 + c / 100 for s, c in PAPER_MEANS[figure].items() if s in schemes}
        return {
            "categories": categories,
            "series": series,
            "paper_series": at_last(len(categories), paper),
            "paper_labels": {s: PAPER_LABELS[figure][s] for s in paper},
            "note": _equal_note(series),
        }

    def mean_change(scheme: str, path: str, base: str) -> float | None:
        return mean(
            [percent_change(value(scheme, w, path), value(base, w, path)) for w in workloads]
        )

    caption = (
        f"Preset {PRESET} (SSDsim's request queue of 64 and hand-over; NOOP = SSDsim's FIFO; "
        "RWS and PIQ kinds as the SSDsim fork's PIQ: reordered, never held, handed over with "
        f"idle channels), drive filled; workloads: "
        + ", ".join(f"{workload_label(w)} ({w})" if w.startswith("piq_r") else w for w in workloads)
        + "."
    )
    read, write = "latency_us.read.mean", "latency_us.write.mean"
    util = "chips.utilization"
    fig8_points = [r.point for r in fig8 if r.point.configuration.startswith(platform)]
    figs = [
        Figure(
            PAPER,
            "fig8a",
            "Fig. 8(a): mean read latency normalized to NOOP",
            caption,
            "bars",
            "workload",
            "read latency / NOOP's (1 = NOOP)",
            **bars("fig8a", read),
            baseline="NOOP",
            paper_note=OTHER_BASELINES,
            gaps=GAPS,
            claims=[
                Claim(
                    "PIQ read latency vs NOOP, mean over workloads (abstract)",
                    PAPER_MEANS["fig8a"]["piq"],
                    PAPER_MEANS["fig8a"]["piq"],
                    mean_change("piq", read, "noop"),
                ),
                Claim(
                    "PIQ read latency vs NOOP-D (SSDsim's NOOP under PIQ's hand-over rule)",
                    -15.6,
                    -15.6,
                    mean_change("piq", read, "noop_d"),
                ),
                Claim(
                    "PIQ_R read latency vs NOOP (Sec. V-B)",
                    PAPER_MEANS["fig8a"]["piq_r"],
                    PAPER_MEANS["fig8a"]["piq_r"],
                    mean_change("piq_r", read, "noop"),
                ),
                Claim(
                    "PIQ read latency vs RWS (Sec. V-B)",
                    -19.7,
                    -19.7,
                    mean_change("piq", read, "rws"),
                ),
            ],
            points=fig8_points,
        ),
        Figure(
            PAPER,
            "fig8b",
            "Fig. 8(b): mean write latency normalized to NOOP",
            caption,
            "bars",
            "workload",
            "write latency / NOOP's (1 = NOOP)",
            **bars("fig8b", write),
            baseline="NOOP",
            paper_note=OTHER_BASELINES,
            gaps=GAPS,
            claims=[
                Claim(
                    "PIQ write latency vs NOOP, mean over workloads (abstract)",
                    PAPER_MEANS["fig8b"]["piq"],
                    PAPER_MEANS["fig8b"]["piq"],
                    mean_change("piq", write, "noop"),
                ),
                Claim(
                    "PIQ write latency vs NOOP-D (SSDsim's NOOP under PIQ's hand-over rule)",
                    -28.6,
                    -28.6,
                    mean_change("piq", write, "noop_d"),
                ),
                Claim(
                    "PIQ_W write latency vs NOOP (Sec. V-B)",
                    PAPER_MEANS["fig8b"]["piq_w"],
                    PAPER_MEANS["fig8b"]["piq_w"],
                    mean_change("piq_w", write, "noop"),
                ),
                Claim(
                    "PIQ write latency vs RWS (Sec. V-B)",
                    -47.0,
                    -47.0,
                    mean_change("piq", write, "rws"),
                ),
            ],
            points=fig8_points,
        ),
        Figure(
            PAPER,
            "fig12",
            "Fig. 12: chip utilization normalized to RWS",
            caption,
            "bars",
            "workload",
            "chip utilization / RWS's (1 = RWS)",
            **bars("fig12", util, "rws"),
            baseline="RWS",
            gaps=GAPS,
            claims=[
                Claim(
                    f"{name} chip utilization vs RWS" + (" (Sec. V-B)" if s == "piq" else ""),
                    PAPER_MEANS["fig12"][s],
                    PAPER_MEANS["fig12"][s],
                    mean_change(s, util, "rws"),
                )
                for s, name in (("piq", "PIQ"), ("piq_r", "PIQ_R"), ("piq_w", "PIQ_W"))
            ],
            points=fig8_points,
        ),
    ]

    sweep = [
        r for r in runs if r.point.figure == "fig11" and r.point.configuration.startswith(platform)
    ]
    queues = sorted({r.point.tag("queue_length_requests") for r in sweep})
    series: dict[str, list[float | None]] = {}
    for r in sweep:
        for kind, path in (("read", read), ("write", write)):
            name = (
                f"{workload_label(r.point.workload)} {r.point.configuration.split('/')[1]} {kind}"
            )
            row = series.setdefault(name, [None] * len(queues))
            row[queues.index(r.point.tag("queue_length_requests"))] = get(r.summary, path)
    piq_sweep = {
        (r.point.workload, r.point.tag("queue_length_requests")): r
        for r in sweep
        if r.point.configuration.endswith("/piq")
    }
    sweep_workloads = list(dict.fromkeys(r.point.workload for r in sweep))

    def sweep_change(path: str) -> float | None:
        lo, hi = queues[0], queues[-1]
        return mean(
            [
                percent_change(
                    get(piq_sweep[(w, hi)].summary, path), get(piq_sweep[(w, lo)].summary, path)
                )
                for w in sweep_workloads
                if (w, lo) in piq_sweep and (w, hi) in piq_sweep
            ]
        )

    figs.append(
        Figure(
            PAPER,
            "fig11",
            f"Fig. 11: mean latency by queue length ({queues[0]} to {queues[-1]})",
            f"Preset {PRESET}, platform {platform}; workloads: {', '.join(sweep_workloads)}; "
            "the paper sweeps 1 to 512.",
            "lines",
            "I/O queue length (requests)",
            "mean latency (us)",
            [str(q) for q in queues],
            series,
            paper_note="the paper gives only the change from queue 1 to 512 (read -19 %, "
            "write -37 %), not latencies: in the claims table.",
            gaps=GAPS,
            claims=[
                Claim(
                    f"PIQ read latency, queue {queues[0]} -> {queues[-1]} (paper: 1 -> 512)",
                    -19.0,
                    -19.0,
                    sweep_change(read),
                ),
                Claim(
                    f"PIQ write latency, queue {queues[0]} -> {queues[-1]} (paper: 1 -> 512)",
                    -37.0,
                    -37.0,
                    sweep_change(write),
                ),
            ],
            points=[r.point for r in sweep],
            log_x=True,
        )
    )
    # Where the Fig. 8 headline appears (piq_map.py): its sentences go to Fig. 8's claims.
    return figs + piq_map.figures(runs, quick)


# --- the results set: docs/results/piq.md ----------------------------------------------------

RESULTS_OPTIONS = (
    Option(
        "platforms",
        f"comma-separated, of {', '.join(PLATFORMS)} (default: all)",
        comma_list,
    ),
)


def results_points(quick: bool, options: Mapping[str, Any]) -> list[Point]:
    """Every platform's schemes (PLATFORM_SCHEMES) at queue 64 on every trace and Table I
    stand-in (``--quick``: two of each, short stand-in runs), and Figure 11's queue-length
    sweep of SWEEP_SCHEMES on a subset."""
    platforms = choose("platforms", options.get("platforms"), list(PLATFORMS), PLATFORMS)
    traces = [t for t, _ in (QUICK_TRACES if quick else TRACES)]
    stand_ins = QUICK_STAND_INS if quick else STAND_INS
    workloads = traces + stand_ins
    if quick:
        sweep_workloads, queue_lengths = QUICK_SWEEP_WORKLOADS, QUICK_QUEUE_LENGTHS
    else:
        sweep_workloads, queue_lengths = SWEEP_WORKLOADS, QUEUE_LENGTHS
    result = [
        _point("fig8", p, w, s, 64, quick)
        for p in platforms
        for w in workloads
        for s in PLATFORM_SCHEMES[p]
    ]
    result += [
        _point("fig11", p, w, s, q, quick)
        for p in platforms
        for w in sweep_workloads
        for s in SWEEP_SCHEMES
        if s in PLATFORM_SCHEMES[p]
        for q in queue_lengths
        if q != 64
    ]
    # The effect map runs on the main platform (ssdsim-platform): with it.
    return result + (piq_map.points(quick) if MAIN_PLATFORM in platforms else [])


def _record(run: Run) -> dict:
    """The figures the tables use, from one run's summary."""
    s = run.summary
    platform, scheme = run.point.configuration.split("/")
    return {
        "platform": platform,
        "workload": run.point.workload,
        "scheme": scheme,
        "queue_length_requests": run.point.tag("queue_length_requests"),
        "read_latency_us": s["latency_us"]["read"]["mean"],
        "write_latency_us": s["latency_us"]["write"]["mean"],
        "read_conflicts": s["conflicts"]["read"],
        "write_conflicts": s["conflicts"]["write"],
        "read_chip_wait_us": s["conflicts"]["read_chip_wait_us"],
        "write_chip_wait_us": s["conflicts"]["write_chip_wait_us"],
        "host_queue_wait_us": s["time_split_us"]["host_queue"],
        "chip_utilization": s["chips"]["utilization"],
        "iops": s["throughput"]["iops"],
        "reads_prioritized_share": s["host_scheduler"]["reads_prioritized_share"],
    }


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{(x - 1) * 100:+.1f} %"


def results_markdown(runs: list[Run], quick: bool, options: Mapping[str, Any], command: str) -> str:
    """Per platform: every scheme normalized to NOOP, the means of per-workload ratios over
    the traces and over the stand-ins, and Figure 11's sweep (docs/results/piq.md, "Full
    tables of the earlier platforms")."""
    records = [
        _record(r) for r in runs if r.point.figure not in (piq_map.FIGURE, piq_map.GC_FIGURE)
    ]
    index = {
        (r["platform"], r["workload"], r["scheme"], r["queue_length_requests"]): r for r in records
    }
    platforms = list(dict.fromkeys(r["platform"] for r in records))
    traces = [t for t, _ in (QUICK_TRACES if quick else TRACES)]
    stand_ins = QUICK_STAND_INS if quick else STAND_INS
    sweep_workloads = QUICK_SWEEP_WORKLOADS if quick else SWEEP_WORKLOADS
    queue_lengths = QUICK_QUEUE_LENGTHS if quick else QUEUE_LENGTHS
    out = io.StringIO()

    def emit(*parts: object) -> None:
        print(*parts, file=out)

    emit(f"# PIQ: the results set's tables\n\nGenerated by `{command}`.")
    for platform in platforms:
        _figure8_table(emit, index, platform, traces + stand_ins)
        _averages_table(emit, index, platform, traces, "shipped traces")
        _averages_table(emit, index, platform, stand_ins, "Table I stand-ins (synthetic)")
        _sweep_table(emit, index, platform, sweep_workloads, queue_lengths)
    emit()
    emit("\n".join(piq_map.markdown(runs, quick)))
    return out.getvalue()


def _figure8_table(emit, index: dict, platform: str, workloads: list[str]) -> None:
    emit(f"\n### Platform `{platform}`: each scheme normalized to NOOP (queue 64)\n")
    emit(
        "| workload | scheme | read lat | write lat | read chip wait | write chip wait "
        "| host wait us | chip util | IOPS | read confl | write confl | reads prio % "
        "| read us | write us |"
    )
    emit("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for w in workloads:
        noop = index[(platform, w, "noop", 64)]
        for scheme in PLATFORM_SCHEMES[platform]:
            r = index[(platform, w, scheme, 64)]
            emit(
                f"| {w} | {scheme} "
                f"| {_fmt(ratio(r['read_latency_us'], noop['read_latency_us']))} "
                f"| {_fmt(ratio(r['write_latency_us'], noop['write_latency_us']))} "
                f"| {_fmt(ratio(r['read_chip_wait_us'], noop['read_chip_wait_us']))} "
                f"| {_fmt(ratio(r['write_chip_wait_us'], noop['write_chip_wait_us']))} "
                f"| {r['host_queue_wait_us']:.1f} "
                f"| {_fmt(ratio(r['chip_utilization'], noop['chip_utilization']))} "
                f"| {_fmt(ratio(r['iops'], noop['iops']))} "
                f"| {r['read_conflicts']} | {r['write_conflicts']} "
                f"| {100 * r['reads_prioritized_share']:.1f} "
                f"| {r['read_latency_us']:.1f} | {r['write_latency_us']:.1f} |"
            )


def _averages_table(emit, index: dict, platform: str, workloads: list[str], group: str) -> None:
    """Mean over workloads of per-workload ratios (the paper's "on average")."""
    emit(f"\n### Platform `{platform}`, {group}: mean of per-workload ratios\n")
    emit(
        "| scheme | read lat vs NOOP | write lat vs NOOP | read lat vs RWS | write lat vs RWS "
        "| chip util vs RWS | IOPS vs NOOP |"
    )
    emit("|---|---|---|---|---|---|---|")

    def avg(scheme: str, field: str, ref: str) -> float | None:
        values = [
            ratio(index[(platform, w, scheme, 64)][field], index[(platform, w, ref, 64)][field])
            for w in workloads
        ]
        values = [v for v in values if v is not None]
        return statistics.mean(values) if values else None

    for scheme in PLATFORM_SCHEMES[platform]:
        emit(
            f"| {scheme} | {_pct(avg(scheme, 'read_latency_us', 'noop'))} "
            f"| {_pct(avg(scheme, 'write_latency_us', 'noop'))} "
            f"| {_pct(avg(scheme, 'read_latency_us', 'rws'))} "
            f"| {_pct(avg(scheme, 'write_latency_us', 'rws'))} "
            f"| {_pct(avg(scheme, 'chip_utilization', 'rws'))} "
            f"| {_pct(avg(scheme, 'iops', 'noop'))} |"
        )


def _sweep_table(
    emit, index: dict, platform: str, workloads: list[str], queue_lengths: list[int]
) -> None:
    emit(f"\n### Figure 11, platform `{platform}`: mean latency (us) by queue length\n")
    emit("| workload | scheme | " + " | ".join(f"q={q} rd / wr" for q in queue_lengths) + " |")
    emit("|---|---|" + "---|" * len(queue_lengths))
    for w in workloads:
        for scheme in [s for s in SWEEP_SCHEMES if s in PLATFORM_SCHEMES[platform]]:
            cells = []
            for q in queue_lengths:
                r = index[(platform, w, scheme, q)]
                cells.append(f"{r['read_latency_us']:.0f} / {r['write_latency_us']:.0f}")
            emit(f"| {w} | {scheme} | " + " | ".join(cells) + " |")
