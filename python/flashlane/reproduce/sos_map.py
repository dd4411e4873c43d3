"""Where SOS's headline appears: its response time against in-order scheduling ("up to 56 %
lower", Financial1) and its two parts against hardware out-of-order scheduling (queue-size
levelling 16-42 % lower, write-hit cancelling 5-17 % lower), mapped over the two conditions they
depend on: how hard the load is offered and how soon a written address is written again
(issue 20; docs/workloads.md, "Rewrite locality").

Each point replays a synthetic workload on the paper's platform (``sos-4x4``: BlueSSD's 4 buses
x 4 SLC chips): Financial1's read share (41 % of the shipped head's requests) and sizes (its 12
commonest, as the Financial2 stand-in has them: 5.5 KiB on average), addresses uniform over
4 GiB, Poisson arrivals at a load given as a fraction of the drive's channel bandwidth (4 buses
of 50 MB/s; ``offered_load_channel_fraction`` of ``flashlane trace stats``: the shipped
Financial1 head offers 0.001 at trace time), and half of the writes rewriting the address of a
write ``d`` writes back, ``d`` uniform in one bucket (spec key ``[rewrite]``), or none. Response
time = mean ``latency_us.all``.

GC pressure is a third condition because it changes the answer (issue 30): the preset's drive
holds only each workload's footprint, so no run collects garbage; aged (``fill 0.9`` of the
logical space and ``precondition.age=true``, steady-state GC) every write costs a collection's
page moves, and in-order scheduling waits behind them. The aged maps (``map-sos-gc``,
``map-qsl-gc``, ``map-whm-gc``) run lower loads: the aged drive falls behind from load 0.05 on.
"""

from __future__ import annotations

from flashlane.reproduce import _maps
from flashlane.reproduce._core import Claim, Figure, Point, Run
from flashlane.reproduce.sos_platform import CONFIGS, PRESET

PAPER = "sos"
FIGURE = "map"
#: sos-4x4: 4 buses of 0.05 B/ns (timing.channel_bytes_per_ns).
CHANNELS = 4
CHANNEL_BYTES_PER_NS = 0.05
READ_FRACTION = 0.41
#: Financial1 head's 12 commonest request sizes and their counts (the Financial2 stand-in's,
#: workload/sos_profiles.rs).
SIZES_BYTES = (512, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 6656, 8192, 12288, 49152)
SIZE_WEIGHTS = (1381, 1211, 199, 137, 286, 1996, 758, 140, 83, 3175, 84, 220)
MEAN_SIZE_BYTES = sum(s * w for s, w in zip(SIZES_BYTES, SIZE_WEIGHTS, strict=True)) / sum(
    SIZE_WEIGHTS
)
REWRITE_FRACTION = 0.5
#: Rewrite-distance buckets (lower, upper] in writes back; (0, 0): no rewrites.
DISTANCES = [(0, 0), (0, 4), (4, 32), (32, 256), (256, 2048)]
QUICK_DISTANCES = [(0, 0), (0, 4), (32, 256)]
LOADS = [0.02, 0.05, 0.1, 0.2, 0.3, 0.4]
QUICK_LOADS = [0.05, 0.2, 0.4]
REQUESTS = 6000
QUICK_REQUESTS = 2000
#: GC pressure: the drive state and its --set's (see the module's text).
GC_STATES = {
    "none": (),
    "aged": ("precondition.fill_fraction=0.9", "precondition.age=true"),
}
GC_NAMES = {
    "none": "no GC (the preset: the footprint only)",
    "aged": "steady-state GC (filled to 0.9 and aged)",
}
GC_FIGURE = "map_gc"
GC_LOADS = [0.002, 0.005, 0.01, 0.02, 0.05]
QUICK_GC_LOADS = [0.005, 0.02]
QUICK_GC_DISTANCES = [(0, 0), (0, 4)]
#: The paper's claims as ratios (ours reaches them at or below): SOS vs IOS "up to 56 %
#: lower"; SOS(QSL) vs HOS 16-42 % lower and SOS(WHM) vs HOS 5-17 % lower (the smaller end).
MAPS = {
    # figure id: (scheme, baseline, paper ratio, claim text in the sentence)
    "map-sos": ("SOS", "IOS", 0.44, "the paper's 56 % lower response time than IOS"),
    "map-qsl": ("SOS(QSL)", "HOS", 0.84, "the paper's 16-42 % lower response time than HOS"),
    "map-whm": ("SOS(WHM)", "HOS", 0.95, "the paper's 5-17 % lower response time than HOS"),
}
#: The paper's bounds drawn on each figure.
LEVELS = {
    "map-sos": {"56 % lower (up to, Financial1)": 0.44},
    "map-qsl": {"16 % lower": 0.84, "42 % lower": 0.58},
    "map-whm": {"5 % lower": 0.95, "17 % lower": 0.83},
}


def distance_name(bucket: tuple[int, int]) -> str:
    low, high = bucket
    if high == 0:
        return "no rewrites"
    return f"rewrites {low + 1}-{high} writes back"


def distances(quick: bool, gc: str = "none") -> list[tuple[int, int]]:
    if gc == "none":
        return QUICK_DISTANCES if quick else DISTANCES
    return QUICK_GC_DISTANCES if quick else DISTANCES


def loads(quick: bool, gc: str = "none") -> list[float]:
    if gc == "none":
        return QUICK_LOADS if quick else LOADS
    return QUICK_GC_LOADS if quick else GC_LOADS


def grid(quick: bool, gc: str = "none") -> _maps.Grid:
    return _maps.Grid(
        "rewrite_distance_writes",
        [high for _, high in distances(quick, gc)],
        "offered_load",
        loads(quick, gc),
        lambda high: distance_name(next(b for b in DISTANCES if b[1] == high)),
        "load",
    )


def figure_of(gc: str) -> str:
    return FIGURE if gc == "none" else GC_FIGURE


def gap_ns(load: float) -> float:
    """Mean gap between arrivals that offers `load` of the drive's channel bandwidth."""
    return MEAN_SIZE_BYTES / (load * CHANNELS * CHANNEL_BYTES_PER_NS)


def requests(quick: bool) -> int:
    return QUICK_REQUESTS if quick else REQUESTS


def spec_text(bucket: tuple[int, int], load: float, count: int) -> str:
    """The workload of one map point (a synthetic spec, docs/workloads.md)."""
    low, high = bucket
    rewrite = ""
    if high:
        # The bucket (low, high]: an empty first bucket up to `low` when low > 0.
        uppers = [low, high] if low else [high]
        shares = [0.0, REWRITE_FRACTION] if low else [REWRITE_FRACTION]
        rewrite = f"[rewrite]\ndistance_upper_writes = {uppers}\nfraction_of_writes = {shares}\n"
    sizes = ", ".join(str(s) for s in SIZES_BYTES)
    weights = ", ".join(str(w) for w in SIZE_WEIGHTS)
    return (
        f'label = "SOS map: {distance_name(bucket)} at load {load}"\n'
        f"requests = {count}\nread_fraction = {READ_FRACTION}\n"
        f'[arrival]\nkind = "poisson"\nmean_interarrival_ns = {gap_ns(load):.3f}\n'
        f'[size]\nkind = "empirical"\nsizes_bytes = [{sizes}]\nweights = [{weights}]\n'
        '[address]\nkind = "uniform"\nspan_bytes = 4294967296\nalign_bytes = 4096\n' + rewrite
    )


def points(quick: bool) -> list[Point]:
    result = []
    for gc, gc_sets in GC_STATES.items():
        for bucket in distances(quick, gc):
            for load in loads(quick, gc):
                name = f"sos-map-d{bucket[1]}-load{load}.toml"
                text = spec_text(bucket, load, requests(quick))
                tags: tuple = (("rewrite_distance_writes", bucket[1]), ("offered_load", load))
                if gc != "none":
                    tags += (("gc", gc),)
                for config in CONFIGS:
                    sets = [a for s in [*CONFIGS[config], *gc_sets] for a in ("--set", s)]
                    result.append(
                        Point(
                            PAPER,
                            figure_of(gc),
                            f"d{bucket[1]}",
                            config,
                            ("--preset", PRESET, *sets, "--synthetic", f"{{work}}/{name}"),
                            tags,
                            ((name, text),),
                        )
                    )
    return result


def _found(runs: list[Run], quick: bool, figure: str, gc: str = "none") -> _maps.Cells:
    scheme, base, _, _ = MAPS[figure]
    metric = _maps.ratio_of("latency_us.all.mean", scheme, base)
    return _maps.cells(
        runs,
        figure_of(gc),
        grid(quick, gc),
        metric,
        base,
        lambda _d, load: requests(quick) * gap_ns(load),
    )


def _target(figure: str) -> _maps.Target:
    _, _, paper, text = MAPS[figure]
    return _maps.Target(paper, "lower", text)


def sentences(runs: list[Run], quick: bool, gc: str = "none") -> dict[str, str]:
    return {
        figure: _maps.where_sentence(
            MAPS[figure][0], grid(quick, gc), _found(runs, quick, figure, gc), _target(figure)
        )
        for figure in MAPS
    }


def _claims_of(figure: str, claim_texts: list[str]) -> list[str]:
    """The texts of sos.py's claims a map covers: every workload's claim of its comparison."""
    scheme, base, _, _ = MAPS[figure]
    return [t for t in claim_texts if t.startswith(f"{scheme} vs {base} response time")]


def _mine(runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.point.figure in (FIGURE, GC_FIGURE)]


def figures(runs: list[Run], quick: bool, claim_texts: list[str]) -> list[Figure]:
    """The three maps at each GC pressure; `claim_texts` are the Fig. 6 claims of sos.py,
    whose ``where`` each map fills (with the sentences of both GC states)."""
    mine = _mine(runs)
    if not mine:
        return []
    said = {gc: sentences(mine, quick, gc) for gc in GC_STATES}
    result = []
    for gc in GC_STATES:
        g = grid(quick, gc)
        suffix = "" if gc == "none" else "-gc"
        for figure, (scheme, base, paper, _) in MAPS.items():
            found = _found(mine, quick, figure, gc)
            top = _maps.best(g, found, _target(figure))
            both = " ".join(
                f"{_maps.upper_first(GC_NAMES[state])}: {said[state][figure]}"
                for state in GC_STATES
            )
            result.append(
                Figure(
                    PAPER,
                    f"{figure}{suffix}",
                    f"Where {scheme}'s gain over {base} appears: rewrite distance x offered "
                    "load, " + ("no GC" if gc == "none" else "steady-state GC"),
                    f"{said[gc][figure]} Preset {PRESET}, {GC_NAMES[gc]}; synthetic, "
                    f"Financial1's read share and sizes, {REWRITE_FRACTION:.0%} of writes "
                    "rewriting a recent write's address (spec key [rewrite]), Poisson arrivals, "
                    f"{requests(quick)} requests; ratio = {scheme}'s mean response time / "
                    f"{base}'s. The paper does not give the load it replayed its traces at.",
                    "lines",
                    "offered load (fraction of the drive's channel bandwidth)",
                    f"{scheme} response time / {base}'s (1 = {base})",
                    [str(x) for x in g.xs],
                    _maps.series(g, found),
                    paper_levels=LEVELS[figure],
                    baseline=base,
                    gaps="Where the effect appears",
                    claims=[
                        Claim(
                            f"{scheme} vs {base} response time, best point of the map (rewrite "
                            f"distance x load, {GC_NAMES[gc]}; `sos-{figure}{suffix}`)",
                            100 * (paper - 1),
                            100 * (paper - 1),
                            None if top is None else 100 * (top[0] - 1),
                            where=said[gc][figure],
                        )
                    ],
                    points=[r.point for r in mine if r.point.figure == figure_of(gc)],
                    log_x=True,
                    # The aged map comes last: its `where` (both states) is the one kept.
                    where={text: both for text in _claims_of(figure, claim_texts)},
                    overloaded=_maps.behind_series(g, found),
                )
            )
    return result


def markdown(runs: list[Run], quick: bool) -> list[str]:
    """docs/results/sos.md's "Where the effect appears", from the map's runs."""
    mine = _mine(runs)
    if not mine:
        return []
    lines = [
        "## Where the effect appears",
        "",
        "SOS's claims mapped over offered load x rewrite distance x GC pressure (figures "
        "`sos-map-sos`, `sos-map-qsl`, `sos-map-whm` without GC, the same with `-gc` on an "
        "aged drive; python/flashlane/reproduce/sos_map.py): "
        f"{requests(quick)} synthetic requests per point on `{PRESET}` with Financial1's read "
        f"share and sizes, {REWRITE_FRACTION:.0%} of writes rewriting the address of a write "
        "1-4, 5-32, 33-256 or 257-2048 writes back (or none), Poisson arrivals at a fraction "
        "of the drive's channel bandwidth (the shipped Financial1 head offers 0.001 at trace "
        "time). Cells: the scheme's mean response time over its baseline's.",
        "",
    ]
    for gc in GC_STATES:
        g = grid(quick, gc)
        said = sentences(mine, quick, gc)
        lines += [f"### {_maps.upper_first(GC_NAMES[gc])}", ""]
        for figure, (scheme, base, _, _) in MAPS.items():
            lines += [
                f"**{scheme} / {base}** (load across):",
                "",
                *_maps.markdown_table(g, _found(mine, quick, figure, gc), "rewrite distance", 3),
                "",
                f"Computed from the data: *{said[figure]}*",
                "",
            ]
    lines += [_maps.BEHIND_NOTE, ""]
    return lines
