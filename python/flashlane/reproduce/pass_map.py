"""Where PASS's headline appears: its throughput over the best of the other four schedulers
(Fig. 9, sysbench random file I/O: +36.6 % at 16 threads, +41.6 % at 32; Table 2: +16.1 %)
mapped over the two things it depends on: how many threads keep requests outstanding, and the
drive behaviour PASS rests on, in two readings (docs/models/pass.md): a region that slows once
too many requests are outstanding to it (its Fig. 2; ``device.region_contention``), here by
where the slowdown starts (issue 20), or one that slows with the requests sent to it in a row
(its Sec. 3.2-3.3; ``device.region_runs``, issue 30).

Each point replays the sysbench-fileio stand-in of the Fig. 9 set (pass_.py: 16 KiB requests,
60 % reads, uniform over 20 GiB, one outstanding request per thread) on ``pass-ssd1`` at NCQ
depth 31, striped, for the five schedulers, with the behaviour off, its slowdown starting past
N requests outstanding in a 4 GiB region, or past the Nth request sent to a 4 GiB region in a
row (x1.25 at 2N, x2 at 8N either way). Throughput = completed requests x 16 KiB / simulated
time.
"""

from __future__ import annotations

from flashlane.reproduce import _maps
from flashlane.reproduce._core import Claim, Figure, Point, Run, get
from flashlane.reproduce.pass_platform import (
    FILEIO,
    SCHEDULERS,
    contention_args,
    region_runs_args,
    workload_point,
)

PAPER = "pass"
FIGURE = "map"
#: The drive behaviours of the map's lines: "off", "outstanding-N" (device.region_contention
#: slowing past N outstanding) or "in-a-row-N" (device.region_runs slowing past the Nth request
#: in a row; 16 is PASS's batch threshold, 8 the best Qdep of a 4 GB region in its Fig. 2).
BEHAVIOURS = [
    "off",
    "outstanding-8",
    "outstanding-4",
    "outstanding-2",
    "outstanding-1",
    "in-a-row-16",
    "in-a-row-8",
    "in-a-row-2",
]
QUICK_BEHAVIOURS = ["off", "outstanding-8", "outstanding-1", "in-a-row-8"]
THREADS = [4, 8, 16, 32, 64]
QUICK_THREADS = [4, 16, 64]
QUICK_REQUESTS = 2000
SIZE_BYTES = 16384
#: The paper's gains of PASS over the best other scheduler, as throughput ratios.
PAPER_FIG9 = {16: 1.366, 32: 1.416}
PAPER_TABLE2 = 1.161
#: The claims of pass_.py each map sentence covers, and the paper's ratio for it.
CLAIMS = {
    "PASS throughput vs the best other scheduler at 16 threads": PAPER_FIG9[16],
    "PASS throughput vs the best other scheduler at 32 threads": PAPER_FIG9[32],
    "PASS throughput vs the best other scheduler": PAPER_TABLE2,
}


def _split(behaviour: str) -> tuple[str, int]:
    kind, onset = behaviour.rsplit("-", 1)
    return kind, int(onset)


def behaviour_name(behaviour: str) -> str:
    if behaviour == "off":
        return "behaviour off"
    kind, onset = _split(behaviour)
    if kind == "outstanding":
        return f"slows past {onset} outstanding"
    return f"slows past {onset} in a row"


def grid(quick: bool) -> _maps.Grid:
    return _maps.Grid(
        "drive_behaviour",
        QUICK_BEHAVIOURS if quick else BEHAVIOURS,
        "threads",
        QUICK_THREADS if quick else THREADS,
        behaviour_name,
        "threads",
    )


def points(quick: bool) -> list[Point]:
    requests = QUICK_REQUESTS if quick else FILEIO.requests
    g = grid(quick)
    result = []
    for behaviour in g.lines:
        extra: tuple[str, ...] = ()
        if behaviour != "off":
            kind, onset = _split(behaviour)
            args = contention_args if kind == "outstanding" else region_runs_args
            extra = args(onset)
        for threads in g.xs:
            for scheduler in SCHEDULERS:
                result.append(
                    workload_point(
                        FIGURE,
                        FILEIO,
                        scheduler,
                        "pass-ssd1",
                        threads,
                        31,
                        requests,
                        extra,
                        # Fig. 9's spec files: with the behaviour off, a point is Fig. 9's run.
                        stem=f"fig9-{FILEIO.key}-{scheduler}-t{threads}",
                        tags=(("drive_behaviour", behaviour),),
                    )
                )
    return result


def _gain(configs: dict[str, Run]) -> float | None:
    """PASS's throughput over the best of the other schedulers at one grid point."""
    mb = {
        name: get(run.summary, "requests.completed") / get(run.summary, "sim_time_ns")
        for name, run in configs.items()
        if get(run.summary, "sim_time_ns")
    }
    others = [v for name, v in mb.items() if name != "pass"]
    if "pass" not in mb or not others:
        return None
    return mb["pass"] / max(others)


def _found(runs: list[Run], quick: bool) -> _maps.Cells:
    # Closed loop: no arrivals to fall behind.
    return _maps.cells(runs, FIGURE, grid(quick), _gain)


def _target(paper: float, what: str) -> _maps.Target:
    return _maps.Target(paper, "higher", f"the paper's {100 * (paper - 1):+.1f} % ({what})")


def sentences(runs: list[Run], quick: bool) -> dict[str, str]:
    found = _found(runs, quick)
    return {
        text: _maps.where_sentence(
            "PASS", grid(quick), found, _target(paper, text.removeprefix("PASS throughput vs "))
        )
        for text, paper in CLAIMS.items()
    }


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    mine = [r for r in runs if r.point.figure == FIGURE]
    if not mine:
        return []
    g = grid(quick)
    found = _found(mine, quick)
    said = sentences(mine, quick)
    fig9 = CLAIMS["PASS throughput vs the best other scheduler at 16 threads"]
    top = _maps.best(g, found, _target(fig9, "Fig. 9"))
    return [
        Figure(
            PAPER,
            "map-gain",
            "Where PASS's gain appears: threads x the drive's region slowdown",
            " ".join(said.values())
            + " Preset pass-ssd1, NCQ depth 31, striped; the sysbench-fileio stand-in "
            "(16 KiB, 60 % reads, 20 GiB: five 4 GiB regions), closed loop; the drive behaviour "
            "off, slowing past N requests outstanding in a region (device.region_contention) or "
            "past the Nth request sent to a region in a row (device.region_runs), x1.25 at 2N, "
            "x2 at 8N. Gain = PASS's throughput / the best other scheduler's.",
            "lines",
            "threads (one outstanding request each)",
            "PASS throughput / best other's (1 = best other)",
            [str(x) for x in g.xs],
            _maps.series(g, found),
            paper_levels={
                "+36.6 % (Fig. 9, 16 threads)": PAPER_FIG9[16],
                "+41.6 % (Fig. 9, 32 threads)": PAPER_FIG9[32],
                "+16.1 % (Table 2)": PAPER_TABLE2,
            },
            baseline="best other",
            gaps="Where the effect appears: the drive behaviour on (`device.region_contention`)",
            claims=[
                Claim(
                    "PASS throughput vs the best other scheduler, best point of the map "
                    "(threads x region slowdown; `pass-map-gain`)",
                    100 * (fig9 - 1),
                    100 * (fig9 - 1),
                    None if top is None else 100 * (top[0] - 1),
                    where=said["PASS throughput vs the best other scheduler at 16 threads"],
                )
            ],
            points=[r.point for r in mine],
            log_x=True,
            where=said,
        )
    ]


def _over(baseline: str):
    """PASS's throughput over `baseline`'s at one grid point."""

    def metric(configs: dict[str, Run]) -> float | None:
        ours, base = configs.get("pass"), configs.get(baseline)
        if ours is None or base is None:
            return None
        t_ours, t_base = get(ours.summary, "sim_time_ns"), get(base.summary, "sim_time_ns")
        if not t_ours or not t_base:
            return None
        done = get(ours.summary, "requests.completed") / t_ours
        return done / (get(base.summary, "requests.completed") / t_base)

    return metric


def markdown(runs: list[Run], quick: bool) -> list[str]:
    """docs/results/pass.md's map: PASS's gain over threads x the region slowdown, then PASS
    over Noop and over Deadline (the schedulers the paper beats) under each behaviour."""
    mine = [r for r in runs if r.point.figure == FIGURE]
    if not mine:
        return []
    g = grid(quick)
    said = sentences(mine, quick)
    against: list[str] = []
    for baseline, name in (("noop", "Noop"), ("deadline", "Deadline")):
        found = _maps.cells(mine, FIGURE, g, _over(baseline))
        against += [*_maps.markdown_table(g, found, f"PASS / {name}", 3), ""]
    return [
        "### The map: threads x the drive's region slowdown",
        "",
        "PASS's throughput over the best of the other four (figure `pass-map-gain`, "
        "python/flashlane/reproduce/pass_map.py) on the sysbench-fileio stand-in, `pass-ssd1` "
        "at NCQ depth 31, striped, the drive behaviour off, slowing past N requests "
        "outstanding in a 4 GiB region (`device.region_contention`) or past the Nth request "
        "sent to a 4 GiB region in a row (`device.region_runs`), x1.25 at 2N, x2 at 8N either "
        "way (assumed curves); threads across:",
        "",
        *_maps.markdown_table(g, _found(mine, quick), "drive behaviour", 3),
        "",
        *[f"Computed from the data: *{s}*" for s in said.values()],
        "",
        "PASS's throughput over Noop's and over Deadline's (Deadline is the best other "
        "scheduler of the paper's Table 2) at the same points:",
        "",
        *against,
    ]
