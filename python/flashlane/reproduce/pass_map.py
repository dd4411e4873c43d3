"""Where PASS's headline appears: its throughput over the best of the other four schedulers
(Fig. 9, sysbench random file I/O: +36.6 % at 16 threads, +41.6 % at 32; Table 2: +16.1 %)
mapped over the two things it depends on: how many threads keep requests outstanding, and the
drive behaviour PASS rests on, a region that slows once too many requests are outstanding to
it (its Fig. 2; ``device.region_contention``, docs/models/pass.md), here by where the slowdown
starts (issue 20).

Each point replays the sysbench-fileio stand-in of the Fig. 9 set (pass_.py: 16 KiB requests,
60 % reads, uniform over 20 GiB, one outstanding request per thread) on ``pass-ssd1`` at NCQ
depth 31, striped, for the five schedulers, with the behaviour off or its slowdown starting past
``onset`` requests outstanding in a 4 GiB region (x1.25 at twice that, x2 at eight times).
Throughput = completed requests x 16 KiB / simulated time.
"""

from __future__ import annotations

from flashlane.reproduce import _maps
from flashlane.reproduce._core import Claim, Figure, Point, Run, get

PAPER = "pass"
FIGURE = "map"
#: 0: the behaviour off.
ONSETS = [0, 8, 4, 2, 1]
QUICK_ONSETS = [0, 8, 1]
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


def onset_name(onset: int) -> str:
    return "behaviour off" if onset == 0 else f"slows past {onset} outstanding"


def grid(quick: bool) -> _maps.Grid:
    return _maps.Grid(
        "contention_onset_requests",
        QUICK_ONSETS if quick else ONSETS,
        "threads",
        QUICK_THREADS if quick else THREADS,
        onset_name,
        "threads",
    )


def points(quick: bool) -> list[Point]:
    # pass_.py imports this module for its sets; importing it back at call time keeps one
    # definition of the workload and the runs without an import cycle at load time.
    from flashlane.reproduce import pass_

    requests = QUICK_REQUESTS if quick else pass_.FILEIO.requests
    g = grid(quick)
    result = []
    for onset in g.lines:
        extra = pass_.contention_args(onset) if onset else ()
        for threads in g.xs:
            for scheduler in pass_.SCHEDULERS:
                result.append(
                    pass_._point(
                        FIGURE,
                        pass_.FILEIO,
                        scheduler,
                        "pass-ssd1",
                        threads,
                        31,
                        requests,
                        extra,
                        # Fig. 9's spec files: with the behaviour off, a point is Fig. 9's run.
                        stem=f"fig9-{pass_.FILEIO.key}-{scheduler}-t{threads}",
                        tags=(("contention_onset_requests", onset),),
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
            "device.region_contention off or slowing past N requests outstanding in a region "
            "(x1.25 at 2N, x2 at 8N). Gain = PASS's throughput / the best other scheduler's.",
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


def markdown(runs: list[Run], quick: bool) -> list[str]:
    """docs/results/pass.md's map: PASS's gain over threads x the region slowdown."""
    mine = [r for r in runs if r.point.figure == FIGURE]
    if not mine:
        return []
    g = grid(quick)
    said = sentences(mine, quick)
    return [
        "### The map: threads x where the region slowdown starts",
        "",
        "PASS's throughput over the best of the other four (figure `pass-map-gain`, "
        "python/flashlane/reproduce/pass_map.py) on the sysbench-fileio stand-in, `pass-ssd1` "
        "at NCQ depth 31, striped, the drive behaviour off or slowing past N requests "
        "outstanding in a 4 GiB region (x1.25 at 2N, x2 at 8N); threads across:",
        "",
        *_maps.markdown_table(g, _found(mine, quick), "drive behaviour", 3),
        "",
        *[f"Computed from the data: *{s}*" for s in said.values()],
        "",
    ]
