"""The pieces every paper module shares: a run point, a figure, a claim and its verdict rule,
the runner, and the CSV of every run."""

from __future__ import annotations

import csv
import io
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: Summary keys measured on the wall clock: left out of runs.csv so that two runs of the same
#: set write byte-identical CSVs (they stay in the JSON summaries).
WALL_CLOCK_KEYS = ("engine.", "precondition.wall_s", "memory.")

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
    ``x``, one line per series. A value None is a missing point (drawn as a gap)."""

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


# --- locating the simulator and the traces ---------------------------------------------------


def find_flashlane() -> str:
    """The `flashlane` binary: $FLASHLANE_BIN, else `flashlane` on PATH."""
    explicit = os.environ.get("FLASHLANE_BIN")
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise ReproduceError(f"FLASHLANE_BIN={explicit} is not an executable file")
        return explicit
    found = shutil.which("flashlane")
    if found is None:
        raise ReproduceError(
            "cannot find the flashlane binary: set FLASHLANE_BIN or put it on PATH "
            "(cargo build --release -p flashlane-cli builds target/release/flashlane)"
        )
    return found


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


# --- running ----------------------------------------------------------------------------------

Progress = Callable[[int, int, Point], None]


def run_points(
    points: Sequence[Point],
    *,
    flashlane: str,
    traces: Path,
    jobs: int,
    progress: Progress | None = None,
) -> list[dict[str, Any]]:
    """Run every point (in parallel, `jobs` at a time) and return the summaries in the order
    of `points`. The one function that runs simulations: a process pool of `flashlane run`
    children (the threads only wait on them). The Python API cannot replay `--profile`
    stand-ins nor `--remap-addresses` yet, so this does not go through `flashlane.run`."""
    # Points with the same arguments (e.g. a sweep's default value, also a bar of another
    # figure) are simulated once: the simulator is deterministic.
    first: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], int] = {}
    for index, point in enumerate(points):
        first.setdefault((point.args, point.files), index)
    unique = sorted(first.values())
    total = len(unique)
    done = 0
    results: list[dict[str, Any] | None] = [None] * len(points)

    def one(index: int) -> int:
        point = points[index]
        with tempfile.TemporaryDirectory(prefix="flashlane-reproduce-") as tmp:
            for name, text in point.files:
                (Path(tmp) / name).write_text(text)
            args = [a.replace("{traces}", str(traces)).replace("{work}", tmp) for a in point.args]
            path = Path(tmp) / "summary.json"
            done_process = subprocess.run(
                [flashlane, "run", *args, "--json", str(path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
            )
            if done_process.returncode != 0:
                raise RuntimeError(
                    f"{point.command()} failed (exit {done_process.returncode}):\n"
                    f"{done_process.stderr.strip()}"
                )
            results[index] = json.loads(path.read_text())
        return index

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for index in pool.map(one, unique):
            done += 1
            if progress is not None:
                progress(done, total, points[index])
    summaries = [results[first[(p.args, p.files)]] for p in points]
    return [s for s in summaries if s is not None]


# --- runs.csv ---------------------------------------------------------------------------------


def flatten(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every number, string and bool of the summary under its dotted path; lists as JSON."""
    flat: dict[str, Any] = {}
    for key, value in summary.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        elif isinstance(value, list):
            flat[name] = json.dumps(value, separators=(",", ":"))
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


def plain_progress(done: int, total: int, point: Point) -> None:
    print(
        f"[{done}/{total}] {point.paper} {point.figure} {point.workload} {point.configuration}",
        file=sys.stderr,
        flush=True,
    )
