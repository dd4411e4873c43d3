"""Effect maps (issue 20): a headline claim's metric over a grid of the two workload conditions
it depends on, one line per value of the first condition over the second, with the paper's
value drawn and one sentence, computed from the data, that says where ours reaches it.

A paper's map module (``piq_map.py``, ``vios_map.py``, ``sos_map.py``, ``pass_map.py``,
``venice_map.py``) builds its points (each tagged with the two conditions), and turns the runs
into :class:`Cells` (the metric at each grid point) with :func:`cells`; this module gives the
rest: the sentence (:func:`where_sentence`), the Markdown table (:func:`markdown_table`), the
figure's series and the "fell behind" mark of open-loop overload.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flashlane.reproduce._core import Run, get

#: A baseline "falls behind" its arrivals when it needs more than this multiple of the arrival
#: span to finish (execution time, first arrival to last completion, over the span the spec
#: asks for), or when its host queue is full for more than BEHIND_FULL_FRACTION of the run
#: (``host_queue.full_fraction``: arrivals wait for room): the open-loop queue then grows for
#: the whole run, and a ratio of mean latencies grows with the run's length rather than
#: measuring a steady state.
BEHIND_FACTOR = 1.25
BEHIND_FULL_FRACTION = 0.1


@dataclass(frozen=True)
class Grid:
    """The two conditions of a map: one line per value of ``line_tag`` over ``x_tag``.

    ``line_name(value)`` names a line in the legend and the sentence ("16 hot chips");
    ``x_name`` names the x condition in the sentence ("load")."""

    line_tag: str
    lines: Sequence[Any]
    x_tag: str
    xs: Sequence[Any]
    line_name: Callable[[Any], str]
    x_name: str


@dataclass(frozen=True)
class Target:
    """The paper's value of the claim a map draws, as a value of the map's metric.

    ``better`` is ``"lower"`` (a latency ratio: ours reaches the paper's when at or below
    ``value``) or ``"higher"`` (a speedup or a throughput gain). ``text`` says the claim in the
    sentence ("the paper's -15.6 % read latency against NOOP")."""

    value: float
    better: str
    text: str

    def reached(self, ours: float) -> bool:
        return ours <= self.value if self.better == "lower" else ours >= self.value


@dataclass
class Cells:
    """The metric at each grid point (None: no data), and the points where the baseline fell
    behind its arrivals (:data:`BEHIND_FACTOR`)."""

    values: dict[tuple[Any, Any], float | None]
    behind: set[tuple[Any, Any]] = field(default_factory=set)


def group(runs: Sequence[Run], figure: str, grid: Grid) -> dict[tuple[Any, Any], dict[str, Run]]:
    """The runs of one map figure by grid point, then by configuration."""
    result: dict[tuple[Any, Any], dict[str, Run]] = {}
    for run in runs:
        if run.point.figure == figure:
            key = (run.point.tag(grid.line_tag), run.point.tag(grid.x_tag))
            result.setdefault(key, {})[run.point.configuration] = run
    return result


def cells(
    runs: Sequence[Run],
    figure: str,
    grid: Grid,
    metric: Callable[[dict[str, Run]], float | None],
    baseline: str | None = None,
    span_ns: Callable[[Any, Any], float] | None = None,
) -> Cells:
    """`metric` of each grid point's runs (by configuration). With `baseline` and `span_ns`
    (the arrival span of the point's workload, in ns), the points where that configuration's
    execution time exceeds :data:`BEHIND_FACTOR` times the span are marked as behind."""
    by_point = group(runs, figure, grid)
    result = Cells({key: metric(configs) for key, configs in by_point.items()})
    if baseline is not None and span_ns is not None:
        for (line, x), configs in by_point.items():
            run = configs.get(baseline)
            if run is not None and fell_behind(run.summary, span_ns(line, x)):
                result.behind.add((line, x))
    return result


def fell_behind(summary: dict[str, Any], span_ns: float) -> bool:
    """Whether a run fell behind its arrivals (BEHIND_FACTOR, BEHIND_FULL_FRACTION)."""
    took = get(summary, "sim_time_ns")
    full = get(summary, "host_queue.full_fraction")
    return (took is not None and took > BEHIND_FACTOR * span_ns) or (
        full is not None and full > BEHIND_FULL_FRACTION
    )


def ratio_of(key: str, ours: str, base: str) -> Callable[[dict[str, Run]], float | None]:
    """A metric: summary `key` of configuration `ours` over that of `base` at a grid point."""

    def metric(configs: dict[str, Run]) -> float | None:
        a, b = configs.get(ours), configs.get(base)
        if a is None or b is None:
            return None
        x, y = get(a.summary, key), get(b.summary, key)
        return x / y if x is not None and y else None

    return metric


def series(grid: Grid, found: Cells) -> dict[str, list[float | None]]:
    """One line per value of the line condition, over the x values."""
    return {
        grid.line_name(line): [found.values.get((line, x)) for x in grid.xs] for line in grid.lines
    }


def series_against(
    grid: Grid, found: dict[str, Cells], names: dict[str, str]
) -> tuple[dict[str, list[float | None]], dict[str, str]]:
    """The map's lines against each baseline of `found` (baseline key -> cells), labelled
    "LINE vs BASELINE" (`names`: the baselines' display names), and the dashed ones: the lines
    against the second and later baselines, each drawn in the colour of the same line against
    the first (``Figure.dashed``)."""
    lines: dict[str, list[float | None]] = {}
    dashed: dict[str, str] = {}
    first = next(iter(found))
    for base, cells in found.items():
        for name, values in series(grid, cells).items():
            label = f"{name} vs {names[base]}"
            lines[label] = values
            if base != first:
                dashed[label] = f"{name} vs {names[first]}"
    return lines, dashed


def upper_first(text: str) -> str:
    """`text` with its first letter in upper case and the rest as it is ("no GC" -> "No GC",
    where str.capitalize gives "No gc")."""
    return text[:1].upper() + text[1:]


def behind_series(grid: Grid, found: Cells) -> dict[str, list[bool]]:
    """Per line of :func:`series`, which of its points have a baseline that fell behind its
    arrivals (drawn hollow, ``Figure.overloaded``)."""
    return {
        grid.line_name(line): [(line, x) in found.behind for x in grid.xs] for line in grid.lines
    }


def behind_against(
    grid: Grid, found: dict[str, Cells], names: dict[str, str]
) -> dict[str, list[bool]]:
    """:func:`behind_series` for the lines of :func:`series_against`, by their labels."""
    return {
        f"{name} vs {names[base]}": flags
        for base, cells in found.items()
        for name, flags in behind_series(grid, cells).items()
    }


def _spans(xs: Sequence[Any], chosen: set[Any]) -> str:
    """The chosen x values as runs of neighbours on the grid: "0.1-0.4, 0.8"."""
    parts: list[str] = []
    run: list[Any] = []
    for x in [*xs, None]:
        if x is not None and x in chosen:
            run.append(x)
            continue
        if run:
            parts.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
            run = []
    return ", ".join(parts)


def best(grid: Grid, found: Cells, target: Target) -> tuple[float, Any, Any] | None:
    """The grid point with the largest effect in the target's direction, (value, line, x),
    among the points whose baseline keeps up with its arrivals when there are any: an
    overload's ratio grows with the run's length and says nothing of a steady state."""
    present = [(v, line, x) for (line, x), v in found.values.items() if v is not None]
    steady = [p for p in present if (p[1], p[2]) not in found.behind]
    if not present:
        return None
    pick = min if target.better == "lower" else max
    return pick(steady or present, key=lambda item: item[0])


def where_sentence(subject: str, grid: Grid, found: Cells, target: Target) -> str:
    """Where on the grid `subject` reaches the paper's value, computed from the data: the x
    ranges per line, how many of those points have a baseline that fell behind its arrivals,
    and the best point (:func:`best`)."""
    top = best(grid, found, target)
    if top is None:
        return "No data."
    value, line, x = top
    where = "" if not found.behind else " where the baseline keeps up"
    if (line, x) in found.behind:
        where = " (every point's baseline falls behind)"
    best_text = f"its best{where} is {value:.2f} ({grid.line_name(line)}, {grid.x_name} {x})"
    reached = {key for key, v in found.values.items() if v is not None and target.reached(v)}
    if not reached:
        return f"Nowhere on the grid does {subject} reach {target.text}: {best_text}."
    parts = []
    for line in grid.lines:
        xs = {x for (ln, x) in reached if ln == line}
        if xs:
            parts.append(f"{grid.line_name(line)} at {grid.x_name} {_spans(grid.xs, xs)}")
    behind = len(reached & found.behind)
    note = ""
    if behind:
        which = (
            "it is a point" if len(reached) == 1 else f"{behind} of these {len(reached)} are points"
        )
        note = (
            f" ({which} where the baseline falls behind its arrivals: an overload whose ratio "
            "grows with the run's length)"
        )
    return f"{subject} reaches {target.text} with " + "; ".join(parts) + f"{note}; {best_text}."


def markdown_table(grid: Grid, found: Cells, line_header: str, digits: int = 2) -> list[str]:
    """The map as a Markdown table: a row per line, a column per x; a dagger marks a point whose
    baseline fell behind its arrivals."""
    lines = [
        f"| {line_header} | " + " | ".join(str(x) for x in grid.xs) + " |",
        "|---|" + "---|" * len(grid.xs),
    ]
    for line in grid.lines:
        row = []
        for x in grid.xs:
            v = found.values.get((line, x))
            mark = " \u2020" if (line, x) in found.behind else ""
            row.append("-" if v is None else f"{v:.{digits}f}{mark}")
        lines.append(f"| {grid.line_name(line)} | " + " | ".join(row) + " |")
    return lines


BEHIND_NOTE = (
    "\u2020: the baseline falls behind its arrivals there (its execution time is more than "
    f"{BEHIND_FACTOR}x the arrival span, or its host queue is full more than "
    f"{BEHIND_FULL_FRACTION:.0%} of the time): an open-loop overload, whose ratios grow with "
    "the run's length."
)
