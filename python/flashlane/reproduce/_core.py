"""The pieces every paper module shares: a run point, a figure, a claim and its verdict rule,
the runner, and the CSV of every run."""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
import sys
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

#: Summary keys measured on the wall clock, and the precondition cache's report (which file,
#: and whether this run wrote or loaded it: it depends on the order the runs took): left out of
#: runs.csv so that two runs of the same set write byte-identical CSVs, with or without a
#: cache (they stay in the JSON summaries).
WALL_CLOCK_KEYS = ("engine.", "precondition.wall_s", "memory.", "precondition.snapshot.")

#: The shipped traces every paper module names; found in the repository's traces/ folder.
TRACE_PROBE = "tpcc-small.mqsim"


class ReproduceError(Exception):
    """A problem found before any run starts (unknown paper, unusable --out, no simulator)."""


@dataclass(frozen=True)
class Point:
    """One simulation: `flashlane run ARGS` where ARGS may name `{traces}/FILE`.

    paper, figure, workload and configuration identify the run in runs.csv and the report;
    tags are extra columns (e.g. the swept value ``queue_length_requests``)."""

    paper: str
    figure: str
    workload: str
    configuration: str
    args: tuple[str, ...]
    tags: tuple[tuple[str, Any], ...] = ()
    #: Files the run reads (name, text), e.g. workload specs: ARGS name them `{work}/NAME`;
    #: the runner writes them in its scratch folder, reproduce() into OUT/specs/.
    files: tuple[tuple[str, str], ...] = ()

    def key(self) -> tuple:
        return (self.paper, self.figure, self.workload, self.configuration, self.tags)

    def tag(self, name: str) -> Any:
        return dict(self.tags)[name]

    def command(self) -> str:
        """The command that reproduces this one point, run from the repository's root ($OUT:
        the output folder, which holds the spec files a point reads)."""
        args = [a.replace("{traces}", "traces").replace("{work}", "$OUT/specs") for a in self.args]
        # $OUT stays unquoted so that a shell expands it.
        quoted = [
            a if a.startswith("$OUT/") and shlex.quote(a[1:]) == a[1:] else shlex.quote(a)
            for a in args
        ]
        return "flashlane run " + " ".join(quoted)

    def file_stem(self) -> str:
        parts = [self.figure, self.workload, self.configuration]
        parts += [f"{k}{v}" for k, v in self.tags]
        safe = "-".join(parts)
        return "".join(c if c.isalnum() or c in "-_" else "_" for c in safe)


@dataclass
class Run:
    point: Point
    summary: dict[str, Any]


@dataclass(frozen=True)
class Option:
    """One option of a paper's results set (``RESULTS_OPTIONS`` of its module): the keyword
    ``NAME`` of ``reproduce(..., options={NAME: value})`` and ``--NAME`` on the command line
    (underscores written as dashes). `parse` reads the command line's text into the value; an
    option without `parse` is a switch (``--NAME`` sets it True). Unset options are absent
    from the mapping the module gets (its own default applies, which may differ with --quick).
    """

    name: str
    help: str
    parse: Callable[[str], Any] | None = None

    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def comma_list(text: str) -> list[str]:
    """``a,b,c`` -> ``["a", "b", "c"]`` (an option's value)."""
    return [part for part in text.split(",") if part]


def comma_ints(text: str) -> list[int]:
    """``6000,12000`` -> ``[6000, 12000]`` (an option's value)."""
    return [int(part) for part in comma_list(text)]


def choose(option: str, given: Sequence[str] | None, known: Sequence[str], default) -> list[str]:
    """The values of a list option: `default` when unset, else `given`, each checked against
    `known` (a ReproduceError names the unknown one before any run starts)."""
    if given is None:
        return list(default)
    for value in given:
        if value not in known:
            raise ReproduceError(f"{option}: unknown value {value!r} (known: {', '.join(known)})")
    return list(given)


@dataclass(frozen=True)
class Claim:
    """One number the paper states, beside ours.

    kind "value": the paper gives a number in ``unit`` (mostly a relative change in percent;
    ``paper_low`` .. ``paper_high``, equal for a single number). Verdict rule: **agree** when
    ours has the paper's sign and lies between half the lower bound and twice the upper
    bound (in magnitude); **direction**
    when only the sign agrees; **disagree** when the sign differs or ours is zero.
    kind "at_most": the paper gives an upper bound; **agree** when ours <= the bound, else
    **disagree**. No number of ours (a run without the statistic): **no data**."""

    text: str
    paper_low: float
    paper_high: float
    ours: float | None
    unit: str = "%"
    kind: str = "value"
    #: Where on an effect map of the paper's conditions ours reaches the paper's value (a
    #: sentence computed from the map's data, ``_maps.where_sentence``); "" when no map covers
    #: the claim.
    where: str = ""

    def paper_text(self) -> str:
        if self.kind == "at_most":
            return f"<= {self.paper_high:.3g} {self.unit}"
        if self.paper_low == self.paper_high:
            return f"{self.paper_low:+.3g} {self.unit}"
        return f"{self.paper_low:+.3g} .. {self.paper_high:+.3g} {self.unit}"

    def ours_text(self) -> str:
        if self.ours is None:
            return "-"
        if self.kind == "at_most":
            return f"{self.ours:.2f} {self.unit}"
        return f"{self.ours:+.1f} {self.unit}"

    def verdict(self) -> str:
        if self.ours is None:
            return "no data"
        if self.kind == "at_most":
            return "agree" if self.ours <= self.paper_high else "disagree"
        sign = 1.0 if self.paper_high > 0 or self.paper_low > 0 else -1.0
        # Zero as shown (one decimal): a change too small to print has no direction.
        if round(self.ours, 1) * sign <= 0:
            return "disagree"
        low, high = sorted((abs(self.paper_low), abs(self.paper_high)))
        if low / 2 <= abs(self.ours) <= 2 * high:
            return "agree"
        return "direction"


VERDICT_RULE = (
    "A number (a relative change or a value) agrees when ours has the paper's sign and lies "
    "between half the paper's lower bound and twice its upper bound in magnitude; "
    "'direction' when only the sign agrees; 'disagree' when the sign differs or ours is zero "
    "(below 0.05 in the claim's unit). "
    "An upper bound agrees when ours is at most the bound."
)


@dataclass
class Figure:
    """One paper figure redrawn: our series (and the paper's, where it gives numbers).

    kind "bars": ``categories`` on x, one bar per series and category; kind "lines": numeric
    ``x``, one line per series; kind "matrix": a row per series, a column per category, each
    cell coloured by its ratio to ``baseline`` (``overloaded``: hatched cells). A value None
    is a missing point (drawn as a gap).

    ``paper_series``: the paper's values, drawn as black diamonds; in a bar figure a paper
    series named as one of ours sits on that series' bars (so does any paper series when we
    have a single series), any other spans its category's group of bars. ``paper_levels``: the
    paper's bounds or levels, name -> value, drawn as dotted horizontal lines.
    ``paper_note``: which of the paper's numbers are not drawn, and why (the caption says
    so; a figure with nothing of the paper's drawn says so even without a note).

    ``baseline``: the series are ratios to this (e.g. ``"NOOP"``): bars start at 1.0, the
    axis spans the values and 1.0 with room either side, a second axis gives the change in
    percent, and ``ylabel`` names it (``"... (1 = NOOP)"``).

    ``gaps``: the heading of the section of docs/results/PAPER.md that gives the reasons for
    this figure's gaps (None: the page as a whole); report.html links to it.

    ``dashed``: series of a line figure drawn dashed, each in the colour of the series it
    names (e.g. the same condition against a second baseline). ``where``: an effect map's
    sentences for claims of other figures of its paper, by claim text (:func:`annotate`).

    ``overloaded``: per series of a line figure, which points are an open-loop overload (the
    baseline falls behind its arrivals, ``_maps.fell_behind``): drawn as hollow markers, with
    their own legend entry. ``note``: a sentence drawn inside the axes, for
    what the figure shows that would otherwise look wrong (e.g. bars that are exactly equal).
    ``paper_labels``: the legend text of each paper series (default "paper: NAME"); every paper
    value drawn is also labelled with its number beside its marker."""

    paper: str
    id: str
    title: str
    caption: str
    kind: str
    xlabel: str
    ylabel: str
    categories: list[str]
    series: dict[str, list[float | None]]
    paper_series: dict[str, list[float | None]] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    points: list[Point] = field(default_factory=list)
    log_x: bool = False
    baseline: str | None = None
    paper_levels: dict[str, float] = field(default_factory=dict)
    paper_note: str = ""
    gaps: str | None = None
    dashed: dict[str, str] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)
    overloaded: dict[str, list[bool]] = field(default_factory=dict)
    note: str = ""
    paper_labels: dict[str, str] = field(default_factory=dict)

    def draws_paper(self) -> bool:
        """True when the figure draws at least one of the paper's numbers."""
        return bool(self.paper_levels) or any(
            v is not None for values in self.paper_series.values() for v in values
        )

    def full_caption(self) -> str:
        """The caption with what the figure shows of the paper's numbers."""
        if not self.draws_paper():
            why = self.paper_note or "the paper prints no numbers for this figure."
            return f"{self.caption} No paper values drawn: {why}"
        marks = any(v is not None for values in self.paper_series.values() for v in values)
        drawn = {
            (True, False): "Black diamonds",
            (False, True): "Dotted lines",
            (True, True): "Black diamonds and dotted lines",
        }[(marks, bool(self.paper_levels))]
        return " ".join(p for p in (self.caption, f"{drawn}: the paper's.", self.paper_note) if p)


def annotate(figures: Sequence[Figure]) -> list[Figure]:
    """`figures` with each claim's ``where`` filled from the effect maps among them (a map's
    ``where``, by claim text). A map that names a claim no figure has is an error: a renamed
    claim must not lose its map silently."""
    where: dict[str, str] = {}
    for figure in figures:
        where.update(figure.where)
    texts = {claim.text for figure in figures for claim in figure.claims}
    missing = sorted(set(where) - texts)
    if missing:
        raise ReproduceError(f"an effect map names claims no figure has: {missing}")
    for figure in figures:
        figure.claims = [
            replace(c, where=where[c.text]) if c.text in where and not c.where else c
            for c in figure.claims
        ]
    return list(figures)


MEAN_LABEL = "mean over workloads"


def with_mean(
    categories: list[str], series: dict[str, list[float | None]], label: str = MEAN_LABEL
) -> tuple[list[str], dict[str, list[float | None]]]:
    """`categories` and `series` with one more category, `label`: each series' mean over the
    others (the paper's "on average" over workloads, beside which its numbers are drawn)."""
    return [*categories, label], {name: [*v, mean(v)] for name, v in series.items()}


def spread(series: dict[str, list[float | None]]) -> float | None:
    """The largest difference between a figure's series (two or more) at any category, as a
    share of the smallest there; None with fewer series or a missing value. Near-equal bars
    look like a bug unless the figure says why (``Figure.note``)."""
    rows = list(series.values())
    columns = list(zip(*rows, strict=True))
    if len(rows) < 2 or not columns or any(None in c or min(c) <= 0 for c in columns):
        return None
    return max((max(c) - min(c)) / min(c) for c in columns)


def within_text(share: float) -> str:
    """A spread as the note says it: "within 0.1 %" below that, else "within 1.3 %"."""
    return "within 0.1 %" if share < 0.001 else f"within {100 * share:.1f} %"


def at_last(count: int, values: dict[str, float]) -> dict[str, list[float | None]]:
    """Paper series with a value only in the last of `count` categories (the mean's)."""
    return {name: [None] * (count - 1) + [value] for name, value in values.items()}


def percent_change(ours: float | None, base: float | None) -> float | None:
    """100 * (ours / base - 1); None when either is missing or base is not positive."""
    if ours is None or base is None or base <= 0:
        return None
    return 100.0 * (ours / base - 1.0)


def ratio(ours: float | None, base: float | None) -> float | None:
    if ours is None or base is None or base <= 0:
        return None
    return ours / base


def mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def get(summary: dict[str, Any], dotted: str) -> float | None:
    """A number from the summary by dotted path; None where the path is absent."""
    node: Any = summary
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return float(node) if isinstance(node, int | float) else None


# --- locating the traces -----------------------------------------------------------------------


def find_traces(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The repository's traces/ folder: the given one, $FLASHLANE_TRACES, or traces/ in the
    current directory or one of its parents."""
    candidates: list[Path] = []
    given = explicit or os.environ.get("FLASHLANE_TRACES")
    if given:
        candidates.append(Path(given))
    else:
        here = Path.cwd().resolve()
        candidates += [p / "traces" for p in (here, *here.parents)]
    for folder in candidates:
        if (folder / TRACE_PROBE).is_file():
            return folder
    where = candidates[0] if given else Path.cwd()
    raise ReproduceError(
        f"no traces folder with {TRACE_PROBE} at {where}: run from the repository's root or "
        "pass --traces DIR (or set FLASHLANE_TRACES)"
    )


# --- from a point's `flashlane run` arguments to a sweep point ---------------------------------

#: `flashlane run` flags a Point may use that take a value, and those that do not. Anything
#: else in ``Point.args`` is an error (engine_point), never silently dropped.
VALUE_FLAGS = (
    "--preset",
    "--config",
    "--set",
    "--trace",
    "--format",
    "--profile",
    "--synthetic",
    "--closed-loop",
    "--time-scale",
    "--max-requests",
    "--warmup-requests",
    "--seed",
)
SWITCH_FLAGS = ("--remap-addresses", "--fold-addresses", "--afap", "--check-integrity")
INT_FLAGS = {
    "--closed-loop": "closed_loop_requests",
    "--max-requests": "max_requests",
    "--warmup-requests": "warmup_requests",
    "--seed": "seed",
}


def engine_point(point: Point, traces: Path) -> dict[str, Any]:
    """The point of :func:`flashlane.sweep.run_points` that runs what ``flashlane run
    ARGS`` runs for ``point.args`` (``{traces}`` read as `traces`, ``--synthetic {work}/NAME``
    as the spec text of ``point.files``).

    Same config (``--set`` values go through the same TOML reading), same inputs in the CLI's
    order (the trace, then ``--profile`` workloads, then ``--synthetic`` specs), same replay,
    address policy, request limits and seed: the summaries are equal, except that a
    ``--synthetic`` workload is named ``workload LABEL`` (``trace.path``, ``sources[].path``)
    instead of by its file's path. An unknown flag, a missing value or a flag the engine
    cannot take twice raises :class:`ReproduceError` naming the point."""

    def fail(message: str) -> ReproduceError:
        return ReproduceError(
            f"{point.paper} {point.figure} {point.workload} {point.configuration}: {message}"
        )

    def expand(text: str) -> str:
        return text.replace("{traces}", str(traces))

    files = dict(point.files)
    result: dict[str, Any] = {"overrides": {}}
    profiles: list[str] = []
    specs: list[dict[str, Any]] = []
    args = list(point.args)
    i = 0
    while i < len(args):
        flag = args[i]
        if flag in SWITCH_FLAGS:
            if flag in ("--remap-addresses", "--fold-addresses"):
                if "addresses" in result:
                    raise fail("give at most one of --remap-addresses and --fold-addresses")
                result["addresses"] = "remap" if flag == "--remap-addresses" else "fold"
            elif flag == "--afap":
                result["as_fast_as_possible"] = True
            else:
                result["check_integrity"] = True
            i += 1
            continue
        if flag not in VALUE_FLAGS:
            known = ", ".join([*VALUE_FLAGS, *SWITCH_FLAGS])
            raise fail(f"flag {flag!r} is not one the engine takes ({known})")
        if i + 1 >= len(args):
            raise fail(f"{flag} needs a value")
        value = args[i + 1]
        i += 2
        if flag == "--set":
            key, sep, text = value.partition("=")
            if not sep or not key:
                raise fail(f"--set {value!r}: expected KEY=VALUE")
            # A later --set of the same key wins, as on the command line.
            result["overrides"][key] = text
        elif flag == "--profile":
            profiles.append(value)
        elif flag == "--synthetic":
            name = value.removeprefix("{work}/")
            if name == value or name not in files:
                raise fail(f"--synthetic {value}: not one of the point's files {{work}}/NAME")
            try:
                specs.append(tomllib.loads(files[name]))
            except tomllib.TOMLDecodeError as error:
                raise fail(f"spec {name}: {error}") from None
        else:
            single = {
                "--preset": "preset",
                "--config": "config",
                "--trace": "trace",
                "--format": "trace_format",
                "--time-scale": "time_scale",
                **INT_FLAGS,
            }[flag]
            if single in result:
                raise fail(f"{flag} given twice; the engine takes one")
            if flag in INT_FLAGS:
                try:
                    result[single] = int(value)
                except ValueError:
                    raise fail(f"{flag} {value!r}: expected a whole number") from None
            elif flag == "--time-scale":
                try:
                    result[single] = float(value)
                except ValueError:
                    raise fail(f"{flag} {value!r}: expected a number") from None
            else:
                result[single] = expand(value)
    workloads = [*profiles, *specs]
    if workloads:
        result["workload"] = workloads
    return result


# --- running ----------------------------------------------------------------------------------

Progress = Callable[[int, int, Point], None]


def run_key(point: Point) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    """What makes a point's simulation: its arguments and the files they read. Points with the
    same key (e.g. a sweep's default value, also a bar of another figure) share one run: the
    simulator is deterministic."""
    return (point.args, point.files)


def distinct_runs(points: Sequence[Point]) -> list[int]:
    """The index of the first point of each distinct run (:func:`run_key`), in order: the
    simulations :func:`run_points` makes for `points`, and the count its progress goes to."""
    first: dict[tuple, int] = {}
    for index, point in enumerate(points):
        first.setdefault(run_key(point), index)
    return sorted(first.values())


def run_points(
    points: Sequence[Point],
    *,
    traces: Path,
    jobs: int,
    client: Any = None,
    progress: Progress | None = None,
    precondition_cache: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """Run every point and return the summaries in the order of `points`, through
    :func:`flashlane.sweep.run_points`, the engine ``flashlane.sweep`` uses: a local process
    pool of `jobs` workers (``jobs=1``: in this process), or the Dask cluster of `client`;
    `precondition_cache` as there.
    Every point is translated (:func:`engine_point`) and checked before the first run."""
    from flashlane.sweep import run_points as run_engine_points

    # Points with the same arguments are simulated once (distinct_runs); progress counts
    # those simulations, as reproduce() does.
    unique = distinct_runs(points)
    engine = []
    for index in unique:
        described = engine_point(points[index], traces)
        # The tags name the run in the engine's error note: its command, to rerun it alone.
        described["tags"] = {"command": points[index].command()}
        engine.append(described)

    def report(done: int, total: int, position: int) -> None:
        if progress is not None:
            progress(done, total, points[unique[position]])

    try:
        results = run_engine_points(
            engine,
            client=client,
            jobs=min(jobs, len(engine)) or 1,
            point_progress=report,
            precondition_cache=precondition_cache,
        )
    except ValueError as error:
        # The engine's note names the failing run (its tags: the command to rerun it alone).
        raise ReproduceError("\n".join([str(error), *getattr(error, "__notes__", [])])) from None
    by_index = {}
    for index, summary in zip(unique, results, strict=True):
        summary.pop("tags", None)
        by_index[index] = summary
    first = {run_key(points[index]): index for index in unique}
    return [by_index[first[run_key(p)]] for p in points]


# --- runs.csv ---------------------------------------------------------------------------------


def flatten(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every number, string and bool of the summary under its dotted path; lists as JSON (keys
    sorted: a summary read back from its JSON file flattens to the same text)."""
    flat: dict[str, Any] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        elif isinstance(value, list):
            flat[name] = json.dumps(value, separators=(",", ":"), sort_keys=True)
        else:
            flat[name] = value
    return flat


LEAD_COLUMNS = ["paper", "figure", "workload", "configuration", "tags", "command"]


def runs_csv(runs: Sequence[Run]) -> str:
    """One row per run: the lead columns, then every summary figure (sorted by name; wall-clock
    measurements left out); rows sorted by paper, figure, workload, configuration, tags."""
    rows = []
    columns: set[str] = set()
    for run in runs:
        flat = {k: v for k, v in flatten(run.summary).items() if not k.startswith(WALL_CLOCK_KEYS)}
        columns.update(flat)
        p = run.point
        lead = {
            "paper": p.paper,
            "figure": p.figure,
            "workload": p.workload,
            "configuration": p.configuration,
            "tags": ";".join(f"{k}={v}" for k, v in p.tags),
            "command": p.command(),
        }
        rows.append((p.key(), {**lead, **flat}))
    rows.sort(key=lambda item: repr(item[0]))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=LEAD_COLUMNS + sorted(columns), lineterminator="\n")
    writer.writeheader()
    for _, row in rows:
        writer.writerow(row)
    return out.getvalue()


def point_name(point: Point) -> str:
    """Every coordinate of a point: paper, figure, workload, configuration and its tags
    (``piq map hot64 noop hot_chips=64 offered_load=0.2``), as the progress shows it."""
    tags = " ".join(f"{k}={v}" for k, v in point.tags)
    return " ".join(
        p for p in (point.paper, point.figure, point.workload, point.configuration, tags) if p
    )


def plain_progress(done: int, total: int, point: Point) -> None:
    print(f"[{done}/{total}] {point_name(point)}", file=sys.stderr, flush=True)
