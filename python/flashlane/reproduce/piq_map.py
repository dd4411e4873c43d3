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
"""

from __future__ import annotations

from flashlane.reproduce import _maps
from flashlane.reproduce._core import Claim, Figure, Point, Run

PAPER = "piq"
FIGURE = "map"
PRESET = "ssdsim-platform"
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
#: The paper's means over workloads (abstract), as ratios to NOOP.
PAPER_READ = 1 - 0.156
PAPER_WRITE = 1 - 0.286


def grid(quick: bool) -> _maps.Grid:
    return _maps.Grid(
        "hot_chips",
        QUICK_HOT_CHIPS if quick else HOT_CHIPS,
        "offered_load",
        QUICK_LOADS if quick else LOADS,
        lambda hot: f"{hot} hot chip{'s' if hot > 1 else ''}" + (" (even)" if hot == CHIPS else ""),
        "load",
    )


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
    # piq.py imports this module for its sets; importing it back at call time keeps one
    # definition of the schemes without an import cycle at load time.
    from flashlane.reproduce import piq

    return [a for s in piq.scheme_settings(piq.MAIN_PLATFORM, scheme) for a in ("--set", s)]


def points(quick: bool) -> list[Point]:
    g = grid(quick)
    result = []
    for hot in g.lines:
        for load in g.xs:
            name = f"piq-map-hot{hot}-load{load}.toml"
            text = spec_text(hot, load, requests(quick), "PIQ map")
            for scheme in SCHEMES:
                result.append(
                    Point(
                        PAPER,
                        FIGURE,
                        f"hot{hot}",
                        scheme,
                        (
                            "--preset",
                            PRESET,
                            *scheme_args(scheme),
                            "--synthetic",
                            f"{{work}}/{name}",
                        ),
                        (("hot_chips", hot), ("offered_load", load)),
                        ((name, text),),
                    )
                )
    return result


def span_ns(quick: bool):
    return lambda _hot, load: requests(quick) * gap_ns(load)


def _found(runs: list[Run], quick: bool, kind: str, base: str) -> _maps.Cells:
    metric = _maps.ratio_of(f"latency_us.{kind}.mean", "piq", base)
    return _maps.cells(runs, FIGURE, grid(quick), metric, base, span_ns(quick))


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


def sentences(runs: list[Run], quick: bool) -> dict[tuple[str, str], str]:
    """(read/write, baseline) -> where ours reaches the paper's value."""
    return {
        (kind, base): _maps.where_sentence(
            "PIQ", grid(quick), _found(runs, quick, kind, base), _target(kind, base)
        )
        for kind, base in CLAIMS
    }


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    mine = [r for r in runs if r.point.figure == FIGURE]
    if not mine:
        return []
    g = grid(quick)
    said = sentences(mine, quick)
    result = []
    for kind, paper in (("read", PAPER_READ), ("write", PAPER_WRITE)):
        series, dashed = _maps.series_against(
            g, {base: _found(mine, quick, kind, base) for base in ("noop", "noop_d")}, SCHEMES
        )
        top = _maps.best(g, _found(mine, quick, kind, "noop"), _target(kind, "noop"))
        result.append(
            Figure(
                PAPER,
                f"map-{kind}",
                f"Where PIQ's {kind} latency gain appears: hot chips x offered load",
                f"{said[(kind, 'noop')]} Against NOOP-D (dashed): {said[(kind, 'noop_d')]} "
                f"Preset {PRESET}; synthetic, {READ_FRACTION:.0%} reads of 8-10 KiB with "
                f"{HOT_FRACTION:.0%} of pages on the hot chips (spec key hot_units), Poisson "
                f"arrivals, {requests(quick)} requests; ratio = PIQ's mean {kind} latency / the "
                "baseline's. The paper's value is its mean over Table I's workloads, whose skew "
                "and load it does not give.",
                "lines",
                "offered load (fraction of the drive's channel bandwidth)",
                f"PIQ {kind} latency / baseline's (1 = baseline)",
                [str(x) for x in g.xs],
                series,
                paper_levels={f"{100 * (paper - 1):+.1f} % vs NOOP (abstract)": paper},
                baseline="baseline",
                dashed=dashed,
                gaps="Where the effect appears",
                claims=[
                    Claim(
                        f"PIQ {kind} latency vs NOOP, best point of the map (hot chips x load; "
                        f"`piq-map-{kind}`)",
                        100 * (paper - 1),
                        100 * (paper - 1),
                        None if top is None else 100 * (top[0] - 1),
                        where=said[(kind, "noop")],
                    )
                ],
                points=[r.point for r in mine],
                log_x=True,
                where={CLAIMS[(kind, base)]: said[(kind, base)] for base in ("noop", "noop_d")},
            )
        )
    return result


def markdown(runs: list[Run], quick: bool) -> list[str]:
    """docs/results/piq.md's "Where the effect appears", from the map's runs."""
    mine = [r for r in runs if r.point.figure == FIGURE]
    if not mine:
        return []
    g = grid(quick)
    said = sentences(mine, quick)
    lines = [
        "## Where the effect appears",
        "",
        "The paper's headline (PIQ -15.6 % read and -28.6 % write latency against NOOP, on "
        "average over Table I's workloads) is mapped over the two conditions a conflict "
        "scheduler depends on: how many of the 64 chips carry the load and how hard it is "
        "offered (figures `piq-map-read` and `piq-map-write`, "
        "python/flashlane/reproduce/piq_map.py). Each point replays "
        f"{requests(quick)} synthetic requests on `{PRESET}` ({READ_FRACTION:.0%} reads of 8-10 "
        f"KiB, {HOT_FRACTION:.0%} of pages on the hot chips, spec key `hot_units`; Poisson "
        "arrivals at a load given as a fraction of the drive's channel bandwidth, its "
        "bottleneck). Cells: PIQ's mean latency over the baseline's.",
        "",
    ]
    for kind in ("read", "write"):
        for base in ("noop", "noop_d"):
            lines += [
                f"**{kind.capitalize()} latency, PIQ / {SCHEMES[base]}** (load across):",
                "",
                *_maps.markdown_table(g, _found(mine, quick, kind, base), "hot chips", 3),
                "",
                f"Computed from the data: *{said[(kind, base)]}*",
                "",
            ]
    lines += [_maps.BEHIND_NOTE, ""]
    return lines
