"""Where VIOS's headline appears: its read and write latency against NOOP (-17.7 % and -22.9 %
on average over the paper's workloads) and its write latency against PIQ (-7.71 % at 12K P/E)
mapped over hot chips x offered load (issue 20).

The same grid and workloads as PIQ's map (piq_map.py: the paper's platform ``ssdsim-platform``,
half reads of 8-10 KiB, 90 % of the accesses on the hot chips, Poisson arrivals at a fraction of
the channel bandwidth), with VIOS's settings as its main set runs them (vios.py: the paper's
timings, program 600 us; process variation on at 12,000 P/E cycles; the drive filled) for NOOP
(SSDsim's FIFO), PIQ (the SSDsim fork's) and VIOS (chip and channel batches, conflicting writes
to faster blocks, the fork's hand-over). At 600 us a bus's 16 dies program 16 pages in 600 us,
27 pages per ms against the bus's 20: the buses stay the bottleneck the load is measured on.

GC pressure is the third condition, as on PIQ's map (piq_map.GC_STATES): the drive as the paper
warms it up (no GC in a run) or aged to steady-state GC (figures ``map-read-gc``,
``map-write-gc``, at piq_map's lower loads). VIOS's allocation picks among the plane's free
blocks, which GC keeps few.
"""

from __future__ import annotations

from flashlane.reproduce import _maps, piq_map
from flashlane.reproduce._core import Claim, Figure, Point, Run
from flashlane.reproduce.vios_platform import PRESET, settings

PAPER = "vios"
FIGURE = "map"
STAGE = 12000
SCHEMES = {"noop": "NOOP", "piq": "PIQ", "vios": "VIOS"}
#: The paper's averages as ratios: VIOS vs NOOP (read, write), VIOS vs PIQ (write, 12K P/E).
PAPER_VS_NOOP = {"read": 1 - 0.1766, "write": 1 - 0.2293}
PAPER_WRITE_VS_PIQ = 1 - 0.0771
#: The claims of Figs. 5-7 (vios.py) each map says where ours reaches.
CLAIMS = {
    ("read", "noop"): "VIOS read latency vs NOOP, mean over workloads",
    ("write", "noop"): "VIOS write latency vs NOOP, mean over workloads",
    ("write", "piq"): f"VIOS write latency vs PIQ at {STAGE} P/E",
}


def grid(quick: bool, gc: str = "none") -> _maps.Grid:
    return piq_map.grid(quick, gc)


def points(quick: bool) -> list[Point]:
    def args_of(scheme: str) -> list[str]:
        return [a for s in settings(STAGE, scheme) for a in ("--set", s)]

    return piq_map.hot_load_points(PAPER, "VIOS map", quick, grid, SCHEMES, args_of)


def _found(runs: list[Run], quick: bool, kind: str, base: str, gc: str = "none") -> _maps.Cells:
    metric = _maps.ratio_of(f"latency_us.{kind}.mean", "vios", base)
    return _maps.cells(
        runs, piq_map.figure_of(gc), grid(quick, gc), metric, base, piq_map.span_ns(quick)
    )


def _target(kind: str, base: str) -> _maps.Target:
    paper = PAPER_VS_NOOP[kind] if base == "noop" else PAPER_WRITE_VS_PIQ
    return _maps.Target(
        paper,
        "lower",
        f"the paper's {100 * (paper - 1):+.1f} % {kind} latency against {SCHEMES[base]}",
    )


def sentences(runs: list[Run], quick: bool, gc: str = "none") -> dict[tuple[str, str], str]:
    """(read/write, baseline) -> where ours reaches the paper's value, at one GC pressure."""
    return {
        (kind, base): _maps.where_sentence(
            "VIOS", grid(quick, gc), _found(runs, quick, kind, base, gc), _target(kind, base)
        )
        for kind, base in CLAIMS
    }


def _mine(runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.point.figure in (FIGURE, piq_map.GC_FIGURE)]


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    mine = _mine(runs)
    if not mine:
        return []
    said = {gc: sentences(mine, quick, gc) for gc in piq_map.GC_STATES}
    result = []
    for gc in piq_map.GC_STATES:
        g = grid(quick, gc)
        suffix = "" if gc == "none" else "-gc"
        for kind in ("read", "write"):
            bases = [b for b in ("noop", "piq") if (kind, b) in CLAIMS]
            found = {base: _found(mine, quick, kind, base, gc) for base in ("noop", "piq")}
            series, dashed = _maps.series_against(g, found, SCHEMES)
            levels = {f"{100 * (PAPER_VS_NOOP[kind] - 1):+.1f} % vs NOOP": PAPER_VS_NOOP[kind]}
            if kind == "write":
                levels[f"{100 * (PAPER_WRITE_VS_PIQ - 1):+.2f} % vs PIQ (12K)"] = PAPER_WRITE_VS_PIQ
            claims = []
            for base in bases:
                top = _maps.best(g, found[base], _target(kind, base))
                paper = _target(kind, base).value
                claims.append(
                    Claim(
                        f"VIOS {kind} latency vs {SCHEMES[base]}, best point of the map (hot "
                        f"chips x load, {piq_map.GC_NAMES[gc]}; `vios-map-{kind}{suffix}`)",
                        100 * (paper - 1),
                        100 * (paper - 1),
                        None if top is None else 100 * (top[0] - 1),
                        where=said[gc][(kind, base)],
                    )
                )
            text = " ".join(
                f"Against {SCHEMES[b]}{' (dashed)' if b == 'piq' else ''}: {said[gc][(kind, b)]}"
                for b in bases
            )
            # The paper's claims get the sentences of every GC state (the aged map comes last,
            # so its `where` is the one annotate() keeps).
            where = {
                CLAIMS[(kind, b)]: " ".join(
                    f"{_maps.upper_first(piq_map.GC_NAMES[state])}: {said[state][(kind, b)]}"
                    for state in piq_map.GC_STATES
                )
                for b in bases
            }
            result.append(
                Figure(
                    PAPER,
                    f"map-{kind}{suffix}",
                    f"Where VIOS's {kind} latency gain appears: hot chips x offered load, "
                    + ("no GC" if gc == "none" else "steady-state GC"),
                    f"{text} Preset {PRESET} with VIOS's settings at {STAGE} P/E (program 600 "
                    f"us, process variation), {piq_map.GC_NAMES[gc]}; the PIQ map's workloads "
                    "(50 % reads of 8-10 KiB, 90 % of pages on the hot chips, Poisson, "
                    f"{piq_map.requests(quick)} requests); ratio = VIOS's mean {kind} latency / "
                    "the baseline's. The paper's values are means over its Table 1 workloads, "
                    "whose skew, load and drive state it does not give.",
                    "lines",
                    "offered load (fraction of the drive's channel bandwidth)",
                    f"VIOS {kind} latency / baseline's (1 = baseline)",
                    [str(x) for x in g.xs],
                    series,
                    paper_levels=levels,
                    baseline="baseline",
                    dashed=dashed,
                    gaps="Where the effect appears",
                    claims=claims,
                    points=[r.point for r in mine if r.point.figure == piq_map.figure_of(gc)],
                    log_x=True,
                    where=where,
                    overloaded=_maps.behind_against(g, found, SCHEMES),
                )
            )
    return result


def markdown(runs: list[Run], quick: bool) -> list[str]:
    """docs/results/vios.md's "Where the effect appears", from the map's runs."""
    mine = _mine(runs)
    if not mine:
        return []
    lines = [
        "## Where the effect appears",
        "",
        "VIOS's headline (-17.7 % read and -22.9 % write latency against NOOP on average, "
        "-7.71 % write latency against PIQ at 12K P/E) mapped over hot chips x offered load x "
        "GC pressure (figures `vios-map-read`, `vios-map-write` without GC, `vios-map-read-gc`, "
        "`vios-map-write-gc` with it; python/flashlane/reproduce/vios_map.py): "
        f"PIQ's map workloads ({piq_map.requests(quick)} synthetic requests, half reads of 8-10 "
        "KiB, 90 % of pages on the hot chips, Poisson arrivals at a fraction of the channel "
        f"bandwidth) on `{PRESET}` with VIOS's settings at {STAGE} P/E. Cells: VIOS's mean "
        "latency over the baseline's.",
        "",
    ]
    for gc in piq_map.GC_STATES:
        g = grid(quick, gc)
        said = sentences(mine, quick, gc)
        lines += [f"### {_maps.upper_first(piq_map.GC_NAMES[gc])}", ""]
        for kind, base in CLAIMS:
            lines += [
                f"**{kind.capitalize()} latency, VIOS / {SCHEMES[base]}** (load across):",
                "",
                *_maps.markdown_table(g, _found(mine, quick, kind, base, gc), "hot chips", 3),
                "",
                f"Computed from the data: *{said[(kind, base)]}*",
                "",
            ]
    lines += [_maps.BEHIND_NOTE, ""]
    return lines
