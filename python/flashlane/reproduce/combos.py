"""The combinations study (issue 32): every technique of the five papers alone, every pair
that can coexist, and all together, on one drive (``combined-8x8``, docs/models/combined.md)
under the conditions of the effect maps, with each combination's gain over the baseline and
its **interaction**.

Definitions (docs/results/combinations.md says them beside the tables):

* **ratio** of a combination at a point: its mean latency of all requests
  (``latency_us.all.mean``) over the baseline's at the same point; < 1 is a gain.
* **interaction** of a combination of two or three techniques: its ratio over the product of
  its techniques' single ratios. 1 = they act independently; < 1 = they compound (together
  they gain more than the product); > 1 = they cancel. Within :data:`INDEPENDENT_BAND` of 1
  we call them independent.

Every run, the baseline included, has the drive behaviours the techniques rest on switched on
(the ``drive`` switches: process variation and PASS's crowded regions), so that each
combination is compared with the same drive. A condition is a synthetic workload
(docs/workloads.md) at loads given as a fraction of the drive's channel bandwidth; a point
where the baseline falls behind its arrivals is marked (``_maps.fell_behind``) and the
interaction table uses, per condition, the highest load where every run keeps up.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from flashlane import _native
from flashlane.reproduce import _maps, sos
from flashlane.reproduce._core import Claim, Figure, Point, Run, get, ratio

PAPER = "combos"
TITLE = "Combinations: the five papers' techniques alone and together (combined-8x8)"
PRESET = "combined-8x8"
#: The page of docs/results/ its results set writes (OUT/combos.md is copied there).
RESULTS_PAGE = "combinations"
#: The figures `--results` draws into OUT/figures/ for docs/results/combinations.md (those of
#: the quick set too, which has no `gc` condition: its table is on the page).
KEY_FIGURES = (
    "interaction",
    "ratios-even",
    "ratios-skewed",
    "ratios-bursty",
    "ratios-rewrite",
)

#: combined-8x8: 8 buses of 0.04 B/ns (timing.channel_bytes_per_ns).
CHANNELS = 8
CHANNEL_BYTES_PER_NS = 0.04
#: Request size: 4 pages of 2 KiB, near the PIQ stand-ins' 9.6 KiB mean.
REQUEST_BYTES = 8192
#: Span: four of PASS's 4 GiB regions.
REGION_BYTES = 4 << 30
SPAN_BYTES = 4 * REGION_BYTES
READ_FRACTION = 0.7
LOADS = [0.1, 0.3, 0.5, 0.7]
QUICK_LOADS = [0.3]
REQUESTS = 4000
QUICK_REQUESTS = 800
#: |interaction - 1| at most this: the techniques act independently.
INDEPENDENT_BAND = 0.03
#: Our reading of "orthogonal" / "can be used concurrently" / "benefits maintained": the
#: combination keeps its parts' gains, an interaction of at most 1 + INDEPENDENT_BAND.
ORTHOGONAL_AT_MOST = 1.0 + INDEPENDENT_BAND

#: The conditions: name -> (what it is, in a phrase).
CONDITIONS = {
    "even": "uniform random addresses, Poisson arrivals",
    "skewed": "90 % of the requests on 16 of the 64 chips, on 4 of the 8 channels (hot_units)",
    "bursty": "arrivals on for 1 ms at five times the mean rate, off for 4 ms (on_off)",
    "rewrite": "30 % reads; half of the writes rewrite one of the last 64 writes (rewrite)",
    "region_bursts": "30 % reads; bursts of 64 requests to one 4 GiB region at a time, "
    "arriving in clumps of 64 (region_bursts, on_off): PASS's condition on this drive",
    "gc": "uniform, 30 % reads, on the drive aged to steady-state GC (precondition.age)",
}
#: The conditions of the quick set: GC's aged drive costs most of a quick budget to prepare.
QUICK_CONDITIONS = ("even", "skewed", "bursty", "rewrite", "region_bursts")

#: Each technique's own statistic (docs/models/combined.md, "Each technique moves its own
#: statistic"): summary path or the name of a computed one, its phrase, and whether lower is
#: the technique acting.
STATISTICS = {
    "piq": ("conflicts.read_chip_wait_us", "reads' wait for a busy chip (us)"),
    "vios": ("variation.mean_host_program_us", "mean program time of host writes (us)"),
    "pass": ("region_slowdown.array_time_factor", "array time added by crowded regions (x)"),
    "venice": ("request_paths.conflict_free_fraction", "share of requests conflict-free"),
    "sos": ("queue_spread", "spread of the chips' mean queue lengths"),
}

#: SOS's claim that its two mechanisms keep their benefits together (Sec. IV): judged on the
#: paper's own platform (sos.py), Financial1 at the load where HOS's queues are long.
SOS_WORKLOAD = "Financial1"
SOS_LOAD = 256
SOS_CONFIGS = ("HOS", "SOS(QSL)", "SOS(WHM)", "SOS")


def switches() -> list[tuple[str, str, str, list[str], list[str]]]:
    return _native.combined_switches()


def techniques() -> list[str]:
    """The techniques (switches that are not drive behaviours), in the preset's order."""
    return [name for name, _, slot, _, _ in switches() if slot != "drive"]


def drive_switches() -> list[str]:
    return [name for name, _, slot, _, _ in switches() if slot == "drive"]


def combinations() -> list[tuple[str, ...]]:
    """Every combination of techniques that can coexist (one per slot), singles first, then
    pairs, then the largest."""
    slot = {name: s for name, _, s, _, _ in switches()}
    names = techniques()
    found = []
    for size in range(1, len({slot[n] for n in names}) + 1):
        for combo in itertools.combinations(names, size):
            if len({slot[n] for n in combo}) == size:
                found.append(combo)
    return found


def combo_name(combo: Sequence[str]) -> str:
    return "+".join(combo) if combo else "baseline"


def combo_label(combo: Sequence[str]) -> str:
    return " + ".join(PAPER_NAMES[n] for n in combo) if combo else "baseline"


PAPER_NAMES = {"piq": "PIQ", "vios": "VIOS", "pass": "PASS", "venice": "Venice", "sos": "SOS"}


def mean_gap_ns(load: float) -> float:
    return REQUEST_BYTES / (load * CHANNELS * CHANNEL_BYTES_PER_NS)


def spec_text(condition: str, load: float, requests: int) -> str:
    """The workload of one condition at one load (a synthetic spec, docs/workloads.md)."""
    gap = mean_gap_ns(load)
    read_fraction = 0.3 if condition in ("rewrite", "region_bursts", "gc") else READ_FRACTION
    arrival = f'[arrival]\nkind = "poisson"\nmean_interarrival_ns = {gap:.3f}\n'
    if condition == "bursty":
        # On 1 ms, off 4 ms: five times the mean rate while on, the same mean.
        arrival = (
            f'[arrival]\nkind = "on_off"\non_interarrival_ns = {gap / 5:.3f}\n'
            "on_duration_ns = 1000000\noff_duration_ns = 4000000\n"
        )
    address = (
        f'[address]\nkind = "uniform"\nspan_bytes = {SPAN_BYTES}\nalign_bytes = {REQUEST_BYTES}\n'
    )
    if condition == "region_bursts":
        # Clumps of 64 requests 1 ns apart, one clump per the mean gap of 64 requests: the
        # same mean load (docs/models/combined.md, "PASS on `combined-8x8`").
        arrival = (
            '[arrival]\nkind = "on_off"\non_interarrival_ns = 1\non_duration_ns = 64\n'
            f"off_duration_ns = {round(64 * gap) - 64}\n"
        )
        address = (
            f'[address]\nkind = "region_bursts"\nspan_bytes = {SPAN_BYTES}\n'
            f"align_bytes = {REQUEST_BYTES}\nregion_bytes = {REGION_BYTES}\n"
            "burst_requests = 64\n"
        )
    if condition == "skewed":
        # 8 KiB pieces dealt to 4 units: piece i holds pages 4i..4i+3, which the channel-first
        # static order puts on channels 0-3 (i even) or 4-7 (i odd), way 4i / 8 mod 8: unit 0
        # (i = 0 mod 4) is channels 0-3 at even ways, 16 of the 64 chips.
        address = (
            f'[address]\nkind = "hot_units"\nspan_bytes = {SPAN_BYTES}\n'
            f"align_bytes = {REQUEST_BYTES}\nunit_bytes = {REQUEST_BYTES}\nunits = 4\n"
            "hot_units = 1\nhot_fraction_of_accesses = 0.9\n"
        )
    rewrite = ""
    if condition == "rewrite":
        rewrite = "[rewrite]\ndistance_upper_writes = [8, 64]\nfraction_of_writes = [0.3, 0.2]\n"
    return (
        f'label = "combinations: {condition} at load {load}"\nrequests = {requests}\n'
        f"read_fraction = {read_fraction}\n{arrival}"
        f'[size]\nkind = "fixed"\nbytes = {REQUEST_BYTES}\n{address}{rewrite}'
    )


def span_ns(load: float, requests: int) -> float:
    return requests * mean_gap_ns(load)


def run_args(condition: str, spec_name: str, combo: Sequence[str]) -> tuple[str, ...]:
    args = ["--preset", PRESET, "--synthetic", f"{{work}}/{spec_name}"]
    if condition == "gc":
        args += ["--set", "precondition.age=true"]
    for setting in _native.combined_settings([*combo, *drive_switches()]):
        args += ["--set", setting]
    return tuple(args)


def points(quick: bool) -> list[Point]:
    loads = QUICK_LOADS if quick else LOADS
    requests = QUICK_REQUESTS if quick else REQUESTS
    conditions = QUICK_CONDITIONS if quick else tuple(CONDITIONS)
    result = []
    for condition in conditions:
        for load in loads:
            name = f"combos-{condition}-load{load}.toml"
            files = ((name, spec_text(condition, load, requests)),)
            for combo in [(), *combinations()]:
                result.append(
                    Point(
                        PAPER,
                        "combinations",
                        condition,
                        combo_name(combo),
                        run_args(condition, name, combo),
                        (("offered_load", load),),
                        files,
                    )
                )
    limit = sos.QUICK_REQUESTS if quick else None
    for config in SOS_CONFIGS:
        extra = sos.load_args(SOS_WORKLOAD, SOS_LOAD)
        result.append(
            Point(
                PAPER,
                "sos-mechanisms",
                SOS_WORKLOAD,
                config,
                tuple(sos.run_args(SOS_WORKLOAD, config, limit, extra=extra)),
                (("load_factor", SOS_LOAD),),
            )
        )
    return result


def results_points(quick: bool, options: Mapping[str, Any]) -> list[Point]:
    return points(quick)


# --- from runs to tables ----------------------------------------------------------------------


class Study:
    """The runs of the combinations figure, by (condition, load, configuration)."""

    def __init__(self, runs: Sequence[Run], quick: bool):
        self.quick = quick
        self.requests = QUICK_REQUESTS if quick else REQUESTS
        self.runs: dict[tuple[str, float, str], Run] = {
            (r.point.workload, r.point.tag("offered_load"), r.point.configuration): r
            for r in runs
            if r.point.figure == "combinations"
        }
        self.conditions = [c for c in CONDITIONS if any(k[0] == c for k in self.runs)]
        self.loads = sorted({k[1] for k in self.runs})
        self.combos = combinations()

    def summary(self, condition: str, load: float, combo: Sequence[str]) -> dict | None:
        run = self.runs.get((condition, load, combo_name(combo)))
        return None if run is None else run.summary

    def latency(self, condition: str, load: float, combo: Sequence[str]) -> float | None:
        s = self.summary(condition, load, combo)
        return None if s is None else get(s, "latency_us.all.mean")

    def ratio(self, condition: str, load: float, combo: Sequence[str]) -> float | None:
        return ratio(self.latency(condition, load, combo), self.latency(condition, load, ()))

    def interaction(self, condition: str, load: float, combo: Sequence[str]) -> float | None:
        singles = [self.ratio(condition, load, (t,)) for t in combo]
        return interaction(self.ratio(condition, load, combo), singles)

    def behind(self, condition: str, load: float, combo: Sequence[str] = ()) -> bool:
        """Whether `combo`'s run (the baseline's by default) fell behind its arrivals."""
        s = self.summary(condition, load, combo)
        return s is not None and _maps.fell_behind(s, span_ns(load, self.requests))

    def steady_load(self, condition: str) -> float | None:
        """The highest load where every run of the condition, the baseline's and every
        combination's, keeps up with its arrivals: past it a ratio (and so an interaction)
        measures how far an overload got in the run's length, not a steady state."""
        kept = [x for x in self.loads if (condition, x, "baseline") in self.runs]
        kept = [
            x for x in kept if not any(self.behind(condition, x, c) for c in [(), *self.combos])
        ]
        return max(kept) if kept else None

    def statistic(self, technique: str, condition: str, load: float, combo: Sequence[str]):
        s = self.summary(condition, load, combo)
        return None if s is None else statistic(s, STATISTICS[technique][0])


DAGGER = " \u2020"


def interaction(together: float | None, singles: Sequence[float | None]) -> float | None:
    """A combination's ratio over the product of its techniques' single ratios; None when any
    is missing (never a guess)."""
    if together is None or any(s is None for s in singles):
        return None
    return together / math.prod(singles)  # type: ignore[arg-type]


def statistic(summary: dict[str, Any], path: str) -> float | None:
    """A technique's own statistic (a STATISTICS path) from a run's summary; ``queue_spread``
    is the largest minus the smallest of the chips' mean queue lengths."""
    if path == "queue_spread":
        queues = (summary.get("device") or {}).get("per_chip_queue_length_mean") or []
        return max(queues) - min(queues) if queues else None
    return get(summary, path)


def kind_of(interaction: float) -> str:
    if interaction < 1.0 - INDEPENDENT_BAND:
        return "compound"
    if interaction > 1.0 + INDEPENDENT_BAND:
        return "cancel"
    return "independent"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


#: A technique's own statistic within this share of the baseline's: it did not move.
STILL = 0.01


def mechanism(study: Study, condition: str, load: float, combo: Sequence[str]) -> str:
    """Each technique's own statistic alone and in the combination, as a phrase; a statistic
    that did not move alone (within :data:`STILL`) is said so: the technique had nothing to act
    on there, whatever the latency ratio says."""
    parts = []
    for t in combo:
        alone = study.statistic(t, condition, load, (t,))
        both = study.statistic(t, condition, load, combo)
        base = study.statistic(t, condition, load, ())
        still = (
            alone is not None
            and base is not None
            and abs(alone - base) <= STILL * max(abs(base), 1e-12)
        )
        parts.append(
            f"{PAPER_NAMES[t]}'s {STATISTICS[t][1]} {_num(base)} in the baseline, "
            f"{_num(alone)} alone, {_num(both)} together"
            + (" (it does not move alone: nothing to act on here)" if still else "")
        )
    return "; ".join(parts)


def fastest(study: Study) -> list[str]:
    """Per condition, the three fastest configurations at its steady load, computed."""
    lines = []
    for condition in study.conditions:
        load = study.steady_load(condition)
        if load is None:
            lines.append(f"- **{condition}**: every load has a run that falls behind.")
            continue
        ranked = sorted(
            (r, combo_label(c))
            for c in study.combos
            if (r := study.ratio(condition, load, c)) is not None
        )
        best = ", ".join(f"{name} {r:.3f}" for r, name in ranked[:3])
        none = "; nothing beats the baseline" if ranked and ranked[0][0] >= 1.0 else ""
        lines.append(f"- **{condition}** (load {load}): {best}{none}.")
    return lines


def findings(study: Study) -> list[str]:
    """One sentence per combination of two or more, computed from the runs: where it
    compounds, is independent, or cancels (at each condition's steady load), and why, from its
    techniques' own statistics at the condition where the interaction is furthest from 1."""
    lines = []
    for combo in (c for c in study.combos if len(c) > 1):
        by_kind: dict[str, list[str]] = {}
        furthest: tuple[float, str, float] | None = None
        for condition in study.conditions:
            load = study.steady_load(condition)
            if load is None:
                continue
            value = study.interaction(condition, load, combo)
            if value is None:
                continue
            by_kind.setdefault(kind_of(value), []).append(f"{condition} ({value:.2f})")
            if furthest is None or abs(value - 1) > abs(furthest[0] - 1):
                furthest = (value, condition, load)
        if furthest is None:
            continue
        verbs = {"compound": "compound", "independent": "act independently", "cancel": "cancel"}
        said = "; ".join(
            f"{verbs[k]} under {', '.join(by_kind[k])}"
            for k in ("compound", "independent", "cancel")
            if k in by_kind
        )
        value, condition, load = furthest
        lines.append(
            f"- **{combo_label(combo)}** {said}. At {condition}, load {load} "
            f"(interaction {value:.2f}): {mechanism(study, condition, load, combo)}."
        )
    return lines


# --- the papers' claims on combining ----------------------------------------------------------

#: (claim text, the paper's words, the combinations it speaks of), read as independence: the
#: interaction at most ORTHOGONAL_AT_MOST at every condition.
COMBINING_CLAIMS = (
    (
        "Venice: orthogonal to host I/O schedulers such as PIQ (interaction of PIQ + Venice, "
        "largest over conditions)",
        "Venice paper, Sec. 7 (Related Work): 'We believe Venice is orthogonal to these "
        "works' (I/O schedulers, PIQ among them)",
        (("piq", "venice"),),
    ),
    (
        "VIOS: usable concurrently with other techniques (interaction of VIOS + Venice and "
        "VIOS + SOS, largest over conditions)",
        "VIOS paper, Sec. 2.3: 'all these existing algorithms are somewhat orthogonal to our "
        "work, and can be used concurrently with the proposed VIOS'",
        (("vios", "venice"), ("vios", "sos")),
    ),
)


def combining_claims(study: Study) -> list[tuple[Claim, str, str]]:
    """(claim, the paper's words, where) of each combining claim: the largest interaction
    over the conditions (each at its steady load), and in how many conditions the combination
    is independent or compounds."""
    result = []
    for text, words, combos in COMBINING_CLAIMS:
        worst: tuple[float, str] | None = None
        held = measured = 0
        for combo in combos:
            for condition in study.conditions:
                load = study.steady_load(condition)
                value = None if load is None else study.interaction(condition, load, combo)
                if value is None:
                    continue
                measured += 1
                held += value <= ORTHOGONAL_AT_MOST
                if worst is None or value > worst[0]:
                    worst = (value, f"{combo_label(combo)} at {condition}, load {load}")
        claim = Claim(
            text, ORTHOGONAL_AT_MOST, ORTHOGONAL_AT_MOST, worst and worst[0], "x", "at_most"
        )
        where = "no data"
        if worst is not None:
            where = f"largest: {worst[1]}; independent or compounding in {held} of {measured}"
        result.append((claim, words, where))
    return result


def sos_claim(runs: Sequence[Run]) -> tuple[Claim, dict[str, float | None]]:
    """SOS's claim that QSL's and WHM's benefits are maintained together, read as: SOS (both)
    is at least as fast as the better of the two alone, against HOS on SOS's own platform.
    Returns the claim (ours: SOS's ratio over the better mechanism's) and the ratios to HOS,
    with the interaction under ``"interaction"``."""
    latency = {
        r.point.configuration: get(r.summary, "latency_us.all.mean")
        for r in runs
        if r.point.figure == "sos-mechanisms"
    }
    base = latency.get("HOS")
    ratios: dict[str, float | None] = {
        c: (latency[c] / base if latency.get(c) and base else None) for c in SOS_CONFIGS
    }
    both, qsl, whm = ratios["SOS"], ratios["SOS(QSL)"], ratios["SOS(WHM)"]
    ratios["interaction"] = interaction(both, [qsl, whm])
    kept = None if None in (both, qsl, whm) else both / min(qsl, whm)  # type: ignore[type-var]
    claim = Claim(
        "SOS: QSL's and WHM's benefits maintained when integrated (SOS's mean response time "
        f"over the better mechanism's alone, {SOS_WORKLOAD} at load factor {SOS_LOAD}, "
        "sos-4x4)",
        1.0,
        1.0,
        kept,
        "x",
        "at_most",
    )
    return claim, ratios


# --- figures ----------------------------------------------------------------------------------


def figures(runs: list[Run], quick: bool) -> list[Figure]:
    study = Study(runs, quick)
    if not study.runs:
        return []
    result = []
    for condition in study.conditions:
        series = {
            combo_label(c): [study.ratio(condition, x, c) for x in study.loads]
            for c in study.combos
        }

        result.append(
            Figure(
                PAPER,
                f"ratios-{condition}",
                f"Each combination's mean latency over the baseline's: {condition}",
                f"Condition {condition}: {CONDITIONS[condition]}. Preset {PRESET} with "
                "process variation and crowded regions on in every run; 8 KiB requests over "
                f"16 GiB, {study.requests} per point; load = offered bytes over the drive's "
                "channel bandwidth. A cell is the combination's mean latency of all requests "
                "over the baseline's (< 1: faster). A hatched cell: that combination's run falls "
                "behind its arrivals (an overload, whose ratio grows with the run's length).",
                "matrix",
                "offered load (fraction of the drive's channel bandwidth)",
                "combination",
                [str(x) for x in study.loads],
                series,
                baseline="baseline",
                overloaded={
                    combo_label(c): [study.behind(condition, x, c) for x in study.loads]
                    for c in study.combos
                },
                paper_note="no paper runs these combinations.",
            )
        )
    multi = [c for c in study.combos if len(c) > 1]
    steady = {c: study.steady_load(c) for c in study.conditions}
    series = {
        combo_label(c): [
            None if steady[cond] is None else study.interaction(cond, steady[cond], c)
            for cond in study.conditions
        ]
        for c in multi
    }
    claims = [claim for claim, _, _ in combining_claims(study)]
    sos_c, _ = sos_claim(runs)
    result.append(
        Figure(
            PAPER,
            "interaction",
            "Interaction of each combination per condition (1 = independent)",
            "The combination's latency ratio over the product of its techniques' single ratios, "
            "at each condition's highest load where every run keeps up: < 1 they compound, "
            f"> 1 they cancel, within {INDEPENDENT_BAND:.0%} of 1 independent. Preset {PRESET}, "
            f"{study.requests} requests per point.",
            "matrix",
            "condition (load)",
            "combination",
            [f"{c} ({steady[c]})" for c in study.conditions],
            series,
            baseline="independent",
            claims=[*claims, sos_c],
            paper_note="the papers give no number for a combination; their claims are words: "
            f"'orthogonal' and 'used concurrently' read as an interaction of at most "
            f"{ORTHOGONAL_AT_MOST}, 'maintained' (SOS's two mechanisms) as the two together at "
            "least as fast as the better alone.",
        )
    )
    return result


# --- docs/results/combinations.md -------------------------------------------------------------


def _ratio_table(study: Study, condition: str) -> list[str]:
    head = " | ".join(f"{x}{DAGGER if study.behind(condition, x) else ''}" for x in study.loads)
    lines = [
        "| combination | " + head + " |",
        "|---|" + "---:|" * len(study.loads),
    ]
    base = [study.latency(condition, x, ()) for x in study.loads]
    lines.append("| baseline (mean latency, us) | " + " | ".join(_num(v, 4) for v in base) + " |")
    for combo in study.combos:
        cells = [
            "-"
            if (v := study.ratio(condition, x, combo)) is None
            else f"{v:.3f}{DAGGER if study.behind(condition, x, combo) else ''}"
            for x in study.loads
        ]
        lines.append(f"| {combo_label(combo)} | " + " | ".join(cells) + " |")
    return lines


def _interaction_table(study: Study) -> list[str]:
    steady = {c: study.steady_load(c) for c in study.conditions}
    lines = [
        "| combination | " + " | ".join(f"{c} (load {steady[c]})" for c in study.conditions) + " |",
        "|---|" + "---:|" * len(study.conditions),
    ]
    for combo in (c for c in study.combos if len(c) > 1):
        cells = []
        for c in study.conditions:
            load = steady[c]
            value = None if load is None else study.interaction(c, load, combo)
            ratio = None if load is None else study.ratio(c, load, combo)
            cells.append("-" if value is None else f"{value:.3f} ({ratio:.3f})")
        lines.append(f"| {combo_label(combo)} | " + " | ".join(cells) + " |")
    return lines


def results_markdown(runs: list[Run], quick: bool, options: Mapping[str, Any], command: str) -> str:
    study = Study(runs, quick)
    drive = ", ".join(f"`{d}`" for d in drive_switches())
    lines = [
        "# Combinations of the five techniques",
        "",
        f"Generated by `{command}` (python/flashlane/reproduce/combos.py); every number below "
        "is computed from its runs, every sentence too. The drive is `combined-8x8` "
        "(docs/models/combined.md), each technique one switch (`config/switches.rs`), with "
        f"the drive behaviours the techniques rest on ({drive}) on in every run, the "
        "baseline's included, so that every combination is compared with the same drive.",
        "",
        "**Definitions.**",
        "",
        "- **ratio**: a combination's mean latency of all requests (`latency_us.all.mean`) "
        "over the baseline's at the same point; below 1 it is faster.",
        "- **interaction**: a combination's ratio over the product of its techniques' single "
        "ratios. 1: they act independently; below 1: they compound; above 1: they cancel. "
        f"Within {INDEPENDENT_BAND:.0%} of 1 we call them independent.",
        "- **load**: offered bytes over the drive's channel bandwidth (8 buses of 0.04 B/ns). "
        f"{study.requests} requests of 8 KiB per point over 16 GiB (four of PASS's 4 GiB "
        "regions).",
        "- **\u2020**: a run that falls behind its arrivals (its execution time is more than "
        f"{_maps.BEHIND_FACTOR}x the arrival span, or its host queue is full more than "
        f"{_maps.BEHIND_FULL_FRACTION:.0%} of the time): an open-loop overload, whose ratio "
        "grows with the run's length. On a load, the baseline's; on a cell, that combination's. "
        "The interaction table takes each condition's highest load where no run falls behind.",
        "- Every run is a row of `runs.csv` (figure `combinations`, workload = condition, "
        "configuration = the switches joined by `+`, tag `offered_load`), with the command "
        "that reruns it alone.",
        "",
        "## Conditions",
        "",
    ]
    lines += [f"- **{c}**: {CONDITIONS[c]}." for c in study.conditions]
    lines += [
        "",
        "## Interaction at each condition's highest steady load",
        "",
        "Interaction, with the combination's ratio in brackets:",
        "",
        *_interaction_table(study),
        "",
        "## The fastest per condition",
        "",
        "At each condition's highest steady load, the three fastest configurations (ratio to "
        "the baseline):",
        "",
        *fastest(study),
        "",
        "## Findings",
        "",
        "Per combination: where it compounds, acts independently or cancels, and, at the "
        "condition where its interaction is furthest from 1, each technique's own statistic "
        "(docs/models/combined.md) in the baseline, alone and together:",
        "",
        *findings(study),
        "",
        "## Reading the findings",
        "",
        "- **PIQ and VIOS are the public SSDsim fork's rules** (`host.handover_per_pass=all`, "
        "`host.handover_needs_idle_channels=true`: docs/models/piq.md): they hand requests "
        "over only while every channel is idle, which alone costs latency at most points "
        "of the ratio tables below (docs/models/combined.md measures the same on tpcc: reads "
        "wait less for chips, more in the queue).",
        "- **VIOS's block choice acts when a write opens a block**, and runs of these lengths "
        "on a full drive open few or none: where its statistic does not move, VIOS here is "
        "its chip and channel batches only (docs/models/combined.md runs 20,000 write-heavy "
        "requests to show the choice act).",
        "- **Venice's links run at the bus's rate** (docs/models/combined.md): a transfer "
        "holds every link of its path, so under even and bursty load its mesh is slower than "
        "the buses and under channel skew faster, as its own effect map says "
        "(docs/results/venice.md). Its scouts retry at once when anything changes "
        "(docs/models/venice.md, item 6): under contention that is hundreds of retries per "
        "transfer, which is what makes its runs here the slow ones to simulate.",
        "- **PASS acts where bursts by region arrive in clumps** (`region_bursts`, "
        'docs/models/combined.md, "PASS on `combined-8x8`"); elsewhere its statistic does '
        "not move.",
        "- **A statistic that moves is not a faster drive**, and an interaction near 1 at a "
        "load where nothing acts says nothing: read each finding with its techniques' "
        "statistics beside it.",
        "",
        "## The papers' claims on combining",
        "",
        "| claim | the paper's words | ours | where | verdict |",
        "|---|---|---:|---|---|",
    ]
    for claim, words, where in combining_claims(study):
        lines.append(
            f"| {claim.text} | {words} | {claim.ours_text()} | {where} | {claim.verdict()} |"
        )
    sos_c, ratios = sos_claim(runs)
    lines += [
        f"| {sos_c.text} | SOS paper, Sec. IV: 'The benefits of two techniques were "
        "maintained when they were simply integrated' | "
        f"{sos_c.ours_text()} | ratios to HOS: QSL {_num(ratios['SOS(QSL)'])}, WHM "
        f"{_num(ratios['SOS(WHM)'])}, SOS {_num(ratios['SOS'])}; interaction "
        f"{_num(ratios['interaction'])} | {sos_c.verdict()} |",
        "",
        "Verdict rule. 'Orthogonal' and 'used concurrently' are read as independence: agree "
        f"when the interaction is at most {ORTHOGONAL_AT_MOST} at every condition (no "
        "combination loses part of what its parts gain), else disagree; the 'where' column "
        "says in how many it holds. 'Maintained' is read as: the two together at least as "
        "fast as the better one alone (ours at most 1); their interaction is shown beside it.",
        "",
        "## Ratios per condition",
        "",
    ]
    for condition in study.conditions:
        lines += [f"### {condition}", "", *_ratio_table(study, condition), ""]
    return "\n".join(lines)
