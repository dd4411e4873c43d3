"""Where PIQ's headline appears: its read and write latency against NOOP (the paper's abstract:
-15.6 % and -28.6 % on average) mapped over the two conditions a host-side conflict scheduler
depends on, how the load falls on the chips and how hard it is offered (issue 20;
docs/workloads.md, "Conditions").

Each point replays a synthetic workload on the paper's platform (``ssdsim-platform``: SSDsim's
request queue of 64, hand-over and per-chip order, the drive filled): half reads, half writes,
the PIQ stand-ins' default size (8 or 10 KiB, 9.6 KiB on average: 4-5 pages of 2 KiB), with
90 % of the accesses on ``hot`` of the 64 chips (spec key ``hot_units``: one page per piece,
dealt to the 64 chips in turn as the preset's channel-first static allocation deals pages;
64 = even), and Poisson arrivals at a load given as a fraction of the drive's channel bandwidth
(``offered_load_channel_fraction`` of ``flashlane trace stats``; the 8 buses of 40 MB/s are this
drive's bottleneck: a page takes 51 us on its bus, and a bus's 16 dies program 16 pages in
200 us). Schemes: NOOP (SSDsim's FIFO), NOOP-D (SSDsim's NOOP with PIQ's hand-over rule) and PIQ
as the SSDsim fork runs it. Metric: PIQ's mean read (write) latency over the baseline's.

The address stream does not depend on the arrival rate (the generator's streams are
independent), so every load of one skew touches the same pages: its points share one drive
state, which a precondition cache (``flashlane.sweep``) makes once.

GC pressure is the map's third condition (issue 30): the drive as the paper warms it up (filled
to its logical capacity; a run of these workloads never reaches the GC threshold) or the same
drive aged to steady-state garbage collection (``precondition.age=true``: random overwrites of
the full drive until its write amplification settles; every host write then costs a
collection's page moves, which hold their channel as SSDsim's GC does). The aged drive's
bandwidth for host writes is several times lower, so its map (figures ``map-read-gc``,
``map-write-gc``) runs lower loads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from flashlane.reproduce import _maps
from flashlane.reproduce._core import Claim, Figure, Point, Run, get
from flashlane.reproduce.piq_platform import MAIN_PLATFORM, PRESET, scheme_settings

PAPER = "piq"
FIGURE = "map"
#: ssdsim-platform: 8 buses of 0.04 B/ns (timing.channel_bytes_per_ns), 64 chips, 2 KiB pages.
CHANNELS = 8
CHANNEL_BYTES_PER_NS = 0.04
CHIPS = 64
PAGE_BYTES = 2048
#: The PIQ stand-ins' size (profiles.rs: two whole-page sizes around the 9.6 KiB default).
SIZES_BYTES = (8192, 10240)
SIZE_WEIGHTS = (0.2, 0.8)
MEAN_SIZE_BYTES = sum(s * w for s, w in zip(SIZES_BYTES, SIZE_WEIGHTS, strict=True))
READ_FRACTION = 0.5
HOT_FRACTION = 0.9
HOT_CHIPS = [64, 16, 4, 1]
QUICK_HOT_CHIPS = [64, 4]
LOADS = [0.02, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8]
QUICK_LOADS = [0.05, 0.2, 0.6]
REQUESTS = 6000
QUICK_REQUESTS = 2000
SCHEMES = {"noop": "NOOP", "noop_d": "NOOP-D", "piq": "PIQ"}
#: GC pressure (the map's third condition): the drive state and its --set's. "none": the
#: paper's warm-up (the preset); "aged": the same full drive aged to steady-state GC.
GC_STATES = {"none": (), "aged": ("precondition.age=true",)}
GC_NAMES = {
    "none": "no GC (the paper's warm-up: filled, not aged)",
    "aged": "steady-state GC (filled and aged)",
}
#: The aged drive's map: its own figure id and loads (its host bandwidth is a fraction of the
#: fresh drive's: at load 0.05 NOOP already falls behind on an even spread).
GC_FIGURE = "map_gc"
GC_LOADS = [0.002, 0.005, 0.01, 0.02, 0.05]
QUICK_GC_LOADS = [0.005, 0.02]
QUICK_GC_HOT_CHIPS = [64]
#: The paper's means over workloads (abstract), as ratios to NOOP.
PAPER_READ = 1 - 0.156
PAPER_WRITE = 1 - 0.286


def hot_name(hot: int) -> str:
    return f"{hot} hot chip{'s' if hot > 1 else ''}" + (" (even)" if hot == CHIPS else "")


def grid(quick: bool, gc: str = "none") -> _maps.Grid:
    """The map's grid at one GC pressure (GC_STATES)."""
    if gc == "none":
        lines, xs = (QUICK_HOT_CHIPS, QUICK_LOADS) if quick else (HOT_CHIPS, LOADS)
    else:
        lines, xs = (QUICK_GC_HOT_CHIPS, QUICK_GC_LOADS) if quick else (HOT_CHIPS, GC_LOADS)
    return _maps.Grid("hot_chips", lines, "offered_load", xs, hot_name, "load")


def figure_of(gc: str) -> str:
    """The Point.figure of the map's runs at one GC pressure."""
    return FIGURE if gc == "none" else GC_FIGURE


def gap_ns(load: float) -> float:
    """Mean gap between arrivals that offers `load` of the drive's channel bandwidth."""
    return MEAN_SIZE_BYTES / (load * CHANNELS * CHANNEL_BYTES_PER_NS)


def requests(quick: bool) -> int:
    return QUICK_REQUESTS if quick else REQUESTS


def spec_text(hot: int, load: float, count: int, label: str) -> str:
    """The workload of one map point (a synthetic spec, docs/workloads.md)."""
    if hot < CHIPS:
        address = (
            '[address]\nkind = "hot_units"\nspan_bytes = 4294967296\n'
            f"align_bytes = {PAGE_BYTES}\nunit_bytes = {PAGE_BYTES}\nunits = {CHIPS}\n"
            f"hot_units = {hot}\nhot_fraction_of_accesses = {HOT_FRACTION}\n"
        )
    else:
        address = (
            f'[address]\nkind = "uniform"\nspan_bytes = 4294967296\nalign_bytes = {PAGE_BYTES}\n'
        )
    sizes = ", ".join(str(s) for s in SIZES_BYTES)
    weights = ", ".join(str(w) for w in SIZE_WEIGHTS)
    return (
        f'label = "{label}: {hot} hot of {CHIPS} chips at load {load}"\n'
        f"requests = {count}\nread_fraction = {READ_FRACTION}\n"
        f'[arrival]\nkind = "poisson"\nmean_interarrival_ns = {gap_ns(load):.3f}\n'
        f'[size]\nkind = "empirical"\nsizes_bytes = [{sizes}]\nweights = [{weights}]\n' + address
    )


def scheme_args(scheme: str) -> list[str]:
    """The `--set`s of one scheme on the paper's platform (as the main set runs it)."""
    return [a for s in scheme_settings(MAIN_PLATFORM, scheme) for a in ("--set", s)]


def gc_args(gc: str) -> list[str]:
    return [a for s in GC_STATES[gc] for a in ("--set", s)]


def points(quick: bool) -> list[Point]:
    return hot_load_points(PAPER, "PIQ map", quick, grid, SCHEMES, scheme_args)


def hot_load_points(
    paper: str,
    label: str,
    quick: bool,
    grid_of: Callable[[bool, str], _maps.Grid],
    schemes: Iterable[str],
    args_of: Callable[[str], list[str]],
) -> list[Point]:
    """The points of a hot chips x offered load map (PIQ's, and VIOS's on the same
    workloads) on `PRESET`, per GC state: one synthetic spec per cell, each scheme's `--set`s
    from `args_of`."""
    result = []
    for gc in GC_STATES:
        g = grid_of(quick, gc)
        for hot in g.lines:
            for load in g.xs:
                name = f"{paper}-map-hot{hot}-load{load}.toml"
                text = spec_text(hot, load, requests(quick), label)
                tags: tuple = (("hot_chips", hot), ("offered_load", load))
                if gc != "none":
                    tags += (("gc", gc),)
                for scheme in schemes:
                    result.append(
                        Point(
                            paper,
                            figure_of(gc),
                            f"hot{hot}",
                            scheme,
                            (
                                "--preset",
                                PRESET,
                                *args_of(scheme),
                                *gc_args(gc),
                                "--synthetic",
                                f"{{work}}/{name}",
                            ),
                            tags,
                            ((name, text),),
                        )
                    )
    return result


def span_ns(quick: bool):
    return lambda _hot, load: requests(quick) * gap_ns(load)


def _found(runs: list[Run], quick: bool, kind: str, base: str, gc: str = "none") -> _maps.Cells:
    metric = _maps.ratio_of(f"latency_us.{kind}.mean", "piq", base)
    return _maps.cells(runs, figure_of(gc), grid(quick, gc), metric, base, span_ns(quick))


#: The claims of Figs. 8(a) and 8(b) (piq.py) each map says where ours reaches.
CLAIMS = {
    ("read", "noop"): "PIQ read latency vs NOOP, mean over workloads (abstract)",
    ("read", "noop_d"): "PIQ read latency vs NOOP-D (SSDsim's NOOP under PIQ's hand-over rule)",
    ("write", "noop"): "PIQ write latency vs NOOP, mean over workloads (abstract)",
    ("write", "noop_d"): "PIQ write latency vs NOOP-D (SSDsim's NOOP under PIQ's hand-over rule)",
}


def _target(kind: str, base: str) -> _maps.Target:
    paper = PAPER_READ if kind == "read" else PAPER_WRITE
    return _maps.Target(
        paper,
        "lower",
        f"the paper's {100 * (paper - 1):+.1f} % {kind} latency against {SCHEMES[base]}",
    )


def sentences(runs: list[Run], quick: bool, gc: str = "none") -> dict[tuple[str, str], str]:
    """(read/write, baseline) -> where ours reaches the paper's value, at one GC pressure."""
    return {
        (kind, base): _maps.where_sentence(
            "PIQ", grid(quick, gc), _found(runs, quick, kind, base, gc), _target(kind, base)
        )
        for kind, base in CLAIMS
    }


def _mine(runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.point.figure in (FIGURE, GC_FIGURE)]


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    mine = _mine(runs)
    if not mine:
        return []
    said = {gc: sentences(mine, quick, gc) for gc in GC_STATES}
    result = []
    for gc in GC_STATES:
        g = grid(quick, gc)
        for kind, paper in (("read", PAPER_READ), ("write", PAPER_WRITE)):
            found = {base: _found(mine, quick, kind, base, gc) for base in ("noop", "noop_d")}
            series, dashed = _maps.series_against(g, found, SCHEMES)
            claims = []
            for base in ("noop", "noop_d"):
                top = _maps.best(g, found[base], _target(kind, base))
                claims.append(
                    Claim(
                        f"PIQ {kind} latency vs {SCHEMES[base]}, best point of the map (hot "
                        f"chips x load, {GC_NAMES[gc]}; `piq-map-{kind}{_suffix(gc)}`)",
                        100 * (paper - 1),
                        100 * (paper - 1),
                        None if top is None else 100 * (top[0] - 1),
                        where=said[gc][(kind, base)],
                    )
                )
            # The paper's claims get the sentences of every GC state (the aged map comes last,
            # so its `where` is the one annotate() keeps).
            where = {
                CLAIMS[(kind, base)]: " ".join(
                    f"{_maps.upper_first(GC_NAMES[state])}: {said[state][(kind, base)]}"
                    for state in GC_STATES
                )
                for base in ("noop", "noop_d")
            }
            result.append(
                Figure(
                    PAPER,
                    f"map-{kind}{_suffix(gc)}",
                    f"Where PIQ's {kind} latency gain appears: hot chips x offered load, "
                    + ("no GC" if gc == "none" else "steady-state GC"),
                    f"{said[gc][(kind, 'noop')]} Against NOOP-D (dashed): "
                    f"{said[gc][(kind, 'noop_d')]} Preset {PRESET}, {GC_NAMES[gc]}; synthetic, "
                    f"{READ_FRACTION:.0%} reads of 8-10 KiB with {HOT_FRACTION:.0%} of pages on "
                    f"the hot chips (spec key hot_units), Poisson arrivals, {requests(quick)} "
                    f"requests; ratio = PIQ's mean {kind} latency / the baseline's. The paper's "
                    "value is its mean over Table I's workloads, whose skew, load and drive "
                    "state it does not give.",
                    "lines",
                    "offered load (fraction of the drive's channel bandwidth)",
                    f"PIQ {kind} latency / baseline's (1 = baseline)",
                    [str(x) for x in g.xs],
                    series,
                    paper_levels={f"{100 * (paper - 1):+.1f} % vs NOOP (abstract)": paper},
                    baseline="baseline",
                    dashed=dashed,
                    gaps="Where the effect appears",
                    claims=claims,
                    points=[r.point for r in mine if r.point.figure == figure_of(gc)],
                    log_x=True,
                    where=where,
                    overloaded=_maps.behind_against(g, found, SCHEMES),
                )
            )
    return result


def _suffix(gc: str) -> str:
    return "" if gc == "none" else "-gc"


def markdown(runs: list[Run], quick: bool) -> list[str]:
    """docs/results/piq.md's "Where the effect appears", from the map's runs."""
    mine = _mine(runs)
    if not mine:
        return []
    lines = [
        "## Where the effect appears",
        "",
        "The paper's headline (PIQ -15.6 % read and -28.6 % write latency against NOOP, on "
        "average over Table I's workloads) is mapped over three conditions a conflict "
        "scheduler depends on: how many of the 64 chips carry the load, how hard it is "
        "offered, and how much garbage collection the drive does (figures `piq-map-read`, "
        "`piq-map-write` without GC, `piq-map-read-gc`, `piq-map-write-gc` with it; "
        "python/flashlane/reproduce/piq_map.py). Each point replays "
        f"{requests(quick)} synthetic requests on `{PRESET}` ({READ_FRACTION:.0%} reads of 8-10 "
        f"KiB, {HOT_FRACTION:.0%} of pages on the hot chips, spec key `hot_units`; Poisson "
        "arrivals at a load given as a fraction of the drive's channel bandwidth, its "
        "bottleneck). Cells: PIQ's mean latency over the baseline's.",
        "",
    ]
    for gc in GC_STATES:
        g = grid(quick, gc)
        said = sentences(mine, quick, gc)
        lines += [f"### {_maps.upper_first(GC_NAMES[gc])}", ""]
        if gc == "aged":
            lines += [_gc_note(mine, quick), ""]
        for kind in ("read", "write"):
            for base in ("noop", "noop_d"):
                lines += [
                    f"**{kind.capitalize()} latency, PIQ / {SCHEMES[base]}** (load across):",
                    "",
                    *_maps.markdown_table(g, _found(mine, quick, kind, base, gc), "hot chips", 3),
                    "",
                    f"Computed from the data: *{said[(kind, base)]}*",
                    "",
                ]
    lines += [_maps.BEHIND_NOTE, ""]
    return lines


def _gc_note(runs: list[Run], quick: bool) -> str:
    """What the aged drive does: its write amplification and GC runs under NOOP, per skew."""
    parts = []
    for hot in grid(quick, "aged").lines:
        noop = [
            r
            for r in runs
            if r.point.figure == GC_FIGURE
            and r.point.configuration == "noop"
            and r.point.tag("hot_chips") == hot
        ]
        if not noop:
            continue
        moved = get(noop[0].summary, "gc.pages_moved") or 0.0
        programs = get(noop[0].summary, "flash.programs") or 0.0
        waf = (programs + moved) / programs if programs else float("nan")
        parts.append(
            f"{hot_name(hot)}: {get(noop[0].summary, 'gc.runs'):.0f} GC runs, "
            f"write amplification {waf:.1f}"
        )
    return (
        "The drive is `precondition.age=true` on the preset's full drive (aging stops when two "
        "rounds' write amplification agree within 2 %). In one run of the map's workload "
        "(NOOP, any load: the address stream is the same): " + "; ".join(parts) + "."
    )
