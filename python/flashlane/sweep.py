"""Many simulations at once: on a local process pool, or on a Dask cluster.

Two entry points share one engine:

* :func:`run_points` runs a list of fully described runs ("points") and returns one summary
  per point, in the order given. ``flashlane reproduce`` builds on it.
* :func:`sweep` (also reachable as ``flashlane.sweep``) runs the cartesian product of a grid of
  config values over a list of traces and returns a ``polars.DataFrame``, one row per run.

Both run on a local process pool by default, or on a Dask cluster when given a
``distributed.Client`` (``pip install flashlane[dask]``); the caller's code is the same, and
so are the results: a run depends only on its inputs and seed, never on where it runs.
Every point is checked (config keys and values, trace files) before the first run starts.
Usage, columns and the Dask setup are described in ``docs/sweeps.md``.
"""

from __future__ import annotations

import ast
import itertools
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from flashlane import _native
from flashlane._inputs import (
    cache_dir,
    reading_options,
    workload_labels,
    workload_list,
    workloads_json,
)

__all__ = [
    "POINT_KEYS",
    "RUN_OPTION_KEYS",
    "SNAPSHOT_COLUMNS",
    "WALL_CLOCK_COLUMNS",
    "flatten_summary",
    "run_points",
    "sweep",
    "validate_points",
]

#: Keys a point may carry (see :func:`run_points`). ``preset`` or ``config`` is required,
#: and ``trace`` or ``workload`` (or both).
POINT_KEYS = (
    "preset",
    "config",
    "overrides",
    "trace",
    "trace_format",
    "workload",
    "max_bad_lines",
    "device",
    "csv_columns",
    "queue_events",
    "seed",
    "max_requests",
    "warmup_requests",
    "check_integrity",
    "time_scale",
    "closed_loop_requests",
    "as_fast_as_possible",
    "addresses",
    "tags",
)

#: Grid keys of :func:`sweep` that are run options rather than config keys.
RUN_OPTION_KEYS = (
    "seed",
    "max_requests",
    "warmup_requests",
    "check_integrity",
    "trace_format",
    "max_bad_lines",
    "device",
    "csv_columns",
    "queue_events",
    "time_scale",
    "closed_loop_requests",
    "as_fast_as_possible",
    "addresses",
)

#: Values of a point's ``addresses``: as ``flashlane run`` (strict), ``--fold-addresses``,
#: ``--remap-addresses``.
ADDRESS_POLICIES = ("strict", "fold", "remap")

#: Summary columns measured on the wall clock: the only ones two runs of the same point may
#: disagree on. :func:`sweep` leaves them out unless asked (``wall_clock=True``).
WALL_CLOCK_COLUMNS = ("engine.wall_s", "engine.requests_per_s", "precondition.wall_s")

#: Summary columns of a run with a precondition cache (``docs/summary.md``): which snapshot
#: file, and whether this run wrote it or loaded it, which depends on the order the runs took.
#: :func:`sweep` leaves them out with the wall-clock columns, so a frame is the same with and
#: without a cache.
SNAPSHOT_COLUMNS = (
    "precondition.snapshot.key",
    "precondition.snapshot.file",
    "precondition.snapshot.loaded",
    "precondition.snapshot.write_wall_s",
)

Progress = Callable[[int, int], None]
#: ``point_progress(done, total, index)``: as :data:`Progress`, with the index of the point
#: that just finished.
PointProgress = Callable[[int, int, int], None]


# ---------------------------------------------------------------------------------------------
# Points: checking them, running one.


def _point_error(index: int, point: Mapping[str, Any], message: str) -> ValueError:
    tags = point.get("tags") if isinstance(point, Mapping) else None
    label = f" (tags {tags})" if tags else ""
    return ValueError(f"point {index}{label}: {message}")


def _normalize(index: int, point: Any) -> dict[str, Any]:
    """The point with every key present and of the right type, or ValueError/TypeError."""
    if not isinstance(point, Mapping):
        raise TypeError(f"point {index}: expected a dict, got {type(point).__name__}")
    unknown = sorted(set(point) - set(POINT_KEYS))
    if unknown:
        raise _point_error(
            index,
            point,
            f"unknown key(s) {', '.join(unknown)}; a point has {', '.join(POINT_KEYS)}",
        )
    preset, config = point.get("preset"), point.get("config")
    if (preset is None) == (config is None):
        raise _point_error(index, point, "give exactly one of 'preset' and 'config'")
    trace, workload = point.get("trace"), point.get("workload")
    if trace is None and workload is None:
        raise _point_error(
            index, point, "'trace' is required (a block trace path), or 'workload', or both"
        )
    try:
        workloads = workload_list(workload)
    except TypeError as error:
        raise _point_error(index, point, str(error)) from None
    overrides = point.get("overrides") or {}
    if not isinstance(overrides, Mapping):
        raise _point_error(index, point, "'overrides' must be a dict of config key to value")
    seed = point.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise _point_error(index, point, f"'seed' must be a non-negative int, not {seed!r}")
    for key in ("max_requests", "warmup_requests"):
        value = point.get(key)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 0
        ):
            raise _point_error(index, point, f"'{key}' must be a non-negative int or None")
    closed_loop = point.get("closed_loop_requests")
    if closed_loop is not None and (
        isinstance(closed_loop, bool) or not isinstance(closed_loop, int) or closed_loop < 1
    ):
        raise _point_error(index, point, "'closed_loop_requests' must be a positive int or None")
    time_scale = point.get("time_scale", 1.0)
    if (
        isinstance(time_scale, bool)
        or not isinstance(time_scale, (int, float))
        or not 0 < time_scale < float("inf")
    ):
        raise _point_error(
            index, point, f"'time_scale' must be a positive number, not {time_scale!r}"
        )
    addresses = point.get("addresses", "strict")
    if addresses not in ADDRESS_POLICIES:
        raise _point_error(
            index,
            point,
            f"'addresses' must be one of {', '.join(ADDRESS_POLICIES)}, not {addresses!r}",
        )
    tags = point.get("tags") or {}
    if not isinstance(tags, Mapping):
        raise _point_error(index, point, "'tags' must be a dict")
    try:
        reading = reading_options(
            point.get("max_bad_lines", 0),
            point.get("device"),
            point.get("csv_columns"),
            point.get("queue_events", False),
        )
    except (TypeError, ValueError) as error:
        raise _point_error(index, point, str(error)) from None
    return {
        "preset": preset,
        "config": None if config is None else os.fspath(config),
        "overrides": dict(overrides),
        "trace": None if trace is None else os.fspath(trace),
        "trace_format": point.get("trace_format"),
        "workload": workloads or None,
        "seed": seed,
        "max_requests": point.get("max_requests"),
        "warmup_requests": point.get("warmup_requests") or 0,
        "check_integrity": bool(point.get("check_integrity", False)),
        "time_scale": float(time_scale),
        "closed_loop_requests": closed_loop,
        "as_fast_as_possible": bool(point.get("as_fast_as_possible", False)),
        "addresses": addresses,
        **reading,
        "tags": dict(tags),
    }


def _check_trace(
    path: str,
    trace_format: str | None,
    max_bad_lines: int,
    queue_events: bool,
    csv_columns: str | None,
) -> None:
    """Open the trace and read its first record, so a missing, unreadable or malformed file
    fails here, naming the file (and line), before any run starts."""
    if not os.path.exists(path):
        raise ValueError(f"trace {path}: no such file or directory")
    reader = _native.open_trace(path, trace_format, max_bad_lines, queue_events, csv_columns, 1)
    next(reader, None)


def _known_sections(preset: str | None, config: str | None) -> list[str]:
    try:
        resolved = json.loads(_native.resolve_config(preset, config, {}))
    except ValueError:
        return []
    return [key for key, value in resolved.items() if isinstance(value, dict)]


def validate_points(points: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Check every point without running it; return them normalized (every key present).

    Raises ``ValueError`` naming the point, and the config key (with the config's sections)
    or the trace file (and line) at fault; ``TypeError`` for a value of the wrong type.
    """
    normalized = [_normalize(i, point) for i, point in enumerate(points)]
    configs_checked: set[str] = set()
    traces_checked: set[tuple[Any, ...]] = set()
    workloads_checked: set[str] = set()
    for index, point in enumerate(normalized):
        config_key = json.dumps(
            [point["preset"], point["config"], sorted(point["overrides"].items(), key=str)],
            default=str,
        )
        if config_key not in configs_checked:
            try:
                _native.resolve_config(point["preset"], point["config"], point["overrides"])
            except ValueError as error:
                sections = _known_sections(point["preset"], point["config"])
                known = f"; the config's sections are {', '.join(sections)}" if sections else ""
                raise _point_error(index, point, f"{error}{known}") from None
            configs_checked.add(config_key)
        if point["workload"] is not None:
            workload_key = json.dumps(point["workload"], sort_keys=True, default=str)
            if workload_key not in workloads_checked:
                try:
                    _native.resolve_workloads(workloads_json(point["workload"]) or "[]")
                except (ValueError, TypeError) as error:
                    raise _point_error(index, point, str(error)) from None
                workloads_checked.add(workload_key)
        trace_key = (
            point["trace"],
            point["trace_format"],
            point["max_bad_lines"],
            point["queue_events"],
            point["csv_columns"],
        )
        if point["trace"] is not None and trace_key not in traces_checked:
            try:
                _check_trace(*trace_key)
            except (ValueError, OSError) as error:
                raise _point_error(index, point, str(error)) from None
            traces_checked.add(trace_key)
    return normalized


def _run_point(point: dict[str, Any], precondition_cache: str | None = None) -> dict[str, Any]:
    """Run one normalized point; the summary of ``flashlane.run`` plus ``tags``. Runs in the
    worker (a pool process or a Dask worker), which only needs flashlane importable (and the
    precondition cache's directory, if any, at the same path)."""
    text, _ = _native.run_json(
        point["preset"],
        point["config"],
        [] if point["trace"] is None else [point["trace"]],
        [] if point["trace_format"] is None else [point["trace_format"]],
        point["overrides"],
        point["warmup_requests"],
        point["max_requests"],
        point["seed"],
        point["check_integrity"],
        workloads_json(point["workload"]),
        point["time_scale"],
        point["closed_loop_requests"],
        point["as_fast_as_possible"],
        point["addresses"],
        max_bad_lines=point["max_bad_lines"],
        queue_events=point["queue_events"],
        csv_columns=point["csv_columns"],
        device=point["device"],
        precondition_cache=precondition_cache,
    )
    summary: dict[str, Any] = json.loads(text)
    summary["tags"] = point["tags"]
    return summary


# ---------------------------------------------------------------------------------------------
# Executors.


def _run_serial(
    points: list[dict[str, Any]], progress: PointProgress | None, cache: str | None
) -> list[dict[str, Any]]:
    results = []
    for index, point in enumerate(points):
        try:
            results.append(_run_point(point, cache))
        except Exception as error:
            error.add_note(f"in sweep point {index}: {_describe(point)}")
            raise
        if progress is not None:
            progress(index + 1, len(points), index)
    return results


def _run_pool(
    points: list[dict[str, Any]], jobs: int, progress: PointProgress | None, cache: str | None
) -> list[dict[str, Any]]:
    results: list[dict[str, Any] | None] = [None] * len(points)
    # spawn, not fork: the caller may hold threads (polars, a Dask client) that fork would
    # copy mid-lock. Workers import flashlane afresh, and the caller's main module too.
    context = multiprocessing.get_context("spawn")
    done_count = 0
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            futures = {pool.submit(_run_point, point, cache): i for i, point in enumerate(points)}
            pending = set(futures)
            while pending:
                # FIRST_COMPLETED, not FIRST_EXCEPTION: the latter returns only once every run
                # has finished when none fails, so progress would come all at once at the end.
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    index = futures[future]
                    error = future.exception()
                    if error is not None:
                        for other in pending:
                            other.cancel()
                        error.add_note(f"in sweep point {index}: {_describe(points[index])}")
                        raise error
                    results[index] = future.result()
                    done_count += 1
                    if progress is not None:
                        progress(done_count, len(points), index)
    except BrokenProcessPool:
        script = _unguarded_main_script() if done_count == 0 else None
        if script is None:
            raise
        raise RuntimeError(
            f"flashlane.sweep: the worker processes could not start: {script} runs the sweep"
            " at its top level, and every worker (started with spawn) imports it again; put"
            ' that code under `if __name__ == "__main__":` (docs/sweeps.md), or pass jobs=1'
        ) from None
    return [r for r in results if r is not None]


def _is_main_guard(test: ast.expr) -> bool:
    """``__name__ == "__main__"``, either way round."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.Eq)
        and len(test.comparators) == 1
    ):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    mains = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(mains) == 1


def _unguarded_main_script() -> str | None:
    """The main script's path when this call runs from its top-level code outside an
    ``if __name__ == "__main__":`` block: code that every spawned worker runs again as it
    imports the script. ``None`` when that is not so or cannot be told (no script file, an
    unreadable one, a call from another thread)."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str):
        return None
    frame = sys._getframe()
    while frame is not None and not (
        frame.f_code.co_name == "<module>" and frame.f_globals is vars(main)
    ):
        frame = frame.f_back
    if frame is None:
        return None
    try:
        with open(path, encoding="utf-8") as source:
            tree = ast.parse(source.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    line = frame.f_lineno
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_main_guard(node.test):
            end = node.end_lineno if node.end_lineno is not None else node.lineno
            if node.lineno <= line <= end:
                return None
    return path


def _in_starting_worker() -> bool:
    """True in a pool worker that spawn is still starting: it is importing the caller's main
    module, whose top level (unguarded) called the sweep again."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def _run_dask(
    points: list[dict[str, Any]], client: Any, progress: PointProgress | None, cache: str | None
) -> list[dict[str, Any]]:
    try:
        from distributed import as_completed
    except ImportError as error:  # a client was given, so distributed should be there
        raise ImportError(
            "running on a Dask client needs the dask extra: pip install flashlane[dask]"
        ) from error
    # pure=False: each point is its own task even when two points are equal.
    futures = client.map(_run_point, points, precondition_cache=cache, pure=False)
    index_of = {future.key: i for i, future in enumerate(futures)}
    results: list[dict[str, Any] | None] = [None] * len(points)
    try:
        for done_count, future in enumerate(as_completed(futures), start=1):
            index = index_of[future.key]
            try:
                results[index] = future.result()
            except Exception as error:
                error.add_note(f"in sweep point {index}: {_describe(points[index])}")
                raise
            if progress is not None:
                progress(done_count, len(points), index)
    except BaseException:
        client.cancel(futures)
        raise
    return [r for r in results if r is not None]


def _describe(point: Mapping[str, Any]) -> str:
    base = point["preset"] if point["preset"] is not None else point["config"]
    inputs = _input_label(point)
    return f"{base} overrides={point['overrides']} inputs={inputs} seed={point['seed']}" + (
        f" tags={point['tags']}" if point["tags"] else ""
    )


def _input_label(point: Mapping[str, Any]) -> str:
    """The trace path as given, the workload as the summary names it (``profile NAME``,
    ``workload LABEL``), or both joined by `` + `` (a mix)."""
    parts = []
    if point.get("trace") is not None:
        parts.append(os.fspath(point["trace"]))
    parts += workload_labels(point.get("workload"))
    return " + ".join(parts)


def run_points(
    points: Sequence[Mapping[str, Any]],
    *,
    client: Any = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    point_progress: PointProgress | None = None,
    precondition_cache: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """Run every point; return one result per point, in the order of ``points``.

    A point is a dict with the arguments of :func:`flashlane.run`:

    ``preset`` (str) or ``config`` (a config file path)
        The SSD; exactly one of them.
    ``overrides`` (dict, optional)
        Config key to value, e.g. ``{"ftl.overprovisioning_fraction": 0.2}``.
    ``trace`` (str or path, or None)
        The block trace, opened as given on the machine that runs the point.
    ``trace_format`` (str or None)
        The trace layout; ``None`` detects it.
    ``max_bad_lines`` (int, default 0), ``device`` (int or None), ``csv_columns`` (str or
    None), ``queue_events`` (bool, default False)
        How the trace is read, as in :func:`flashlane.run` (``--max-bad-lines``,
        ``--device``, ``--csv-columns``, ``--queue-events``).
    ``workload`` (str, dict, a list of them, or None)
        A synthetic workload generated on the fly: a profile name (``flashlane gen --list``)
        or a spec dict with the keys of a ``--synthetic`` TOML file (``docs/workloads.md``);
        a list is a mix. A point needs a trace, a workload, or both (replayed as a mix, the
        trace first, as ``flashlane run --trace T --profile P``).
    ``seed`` (int, default 1), ``max_requests`` (int or None), ``warmup_requests`` (int or
    None, meaning 0), ``check_integrity`` (bool, default False)
        As in :func:`flashlane.run`.
    ``time_scale`` (float, default 1.0), ``closed_loop_requests`` (int or None),
    ``as_fast_as_possible`` (bool, default False), ``addresses`` (``"strict"``, ``"fold"``
    or ``"remap"``)
        The replay and address policy, as in :func:`flashlane.run` (``--time-scale``,
        ``--closed-loop``, ``--afap``, ``--fold-addresses`` / ``--remap-addresses``).
    ``tags`` (dict, optional)
        Anything JSON-like the caller wants back with the result (figure, series, ...).

    Each result is the summary dict :func:`flashlane.run` returns for the point (keys defined
    in ``docs/summary.md``) with one more key, ``tags``: the point's tags.

    client
        ``None``: run on a local process pool. A ``distributed.Client``: submit every point to
        that Dask cluster (its workers need flashlane installed and the traces readable at the
        same paths; see ``docs/sweeps.md``).
    jobs
        Pool size (local pool only); ``None`` means ``os.cpu_count()``. ``jobs=1`` runs the
        points one after another in this process, without a pool.
    progress
        ``None`` or a callable ``progress(done, total)`` called as runs finish.
    point_progress
        ``None`` or a callable ``point_progress(done, total, index)``, called as each run
        finishes with the index (in ``points``) of that run; ``flashlane reproduce`` names
        the run in its progress lines with it.
    precondition_cache
        ``None``, or a directory of drive snapshots (created if missing; on Dask, at the same
        path on every worker, e.g. a shared file system): points that share a drive (same
        geometry, ``[ftl]``, ``[precondition]``, ``[variation]``, seed and trace footprint;
        schedulers, interconnect, timing and replay may differ) precondition it once, the
        first to need it, and the others load its snapshot, with the same results
        (``docs/sweeps.md``, "Precondition cache"). A worker that needs a drive another one is
        preconditioning waits for it.

    Every point is checked before the first run starts (:func:`validate_points`): an unknown
    key, a bad override or an unreadable trace raises ``ValueError`` naming the point and the
    key or file. A run that fails later raises its own error with a note naming the point, and
    the runs not yet started are cancelled. Results do not depend on ``client`` or ``jobs``.
    """
    if _in_starting_worker():
        # The main script runs the sweep at import, outside `if __name__ == "__main__":`.
        # This worker cannot run anything: end it quietly (no spawn traceback per worker) and
        # let the parent, whose pool now breaks, say what to do in one line (_run_pool).
        raise SystemExit(1)
    try:
        cache = cache_dir(precondition_cache)
    except TypeError as error:
        raise TypeError(f"run_points: {error}") from None
    normalized = validate_points(points)
    if not normalized:
        return []

    def report(done: int, total: int, index: int) -> None:
        if progress is not None:
            progress(done, total)
        if point_progress is not None:
            point_progress(done, total, index)

    if client is not None:
        return _run_dask(normalized, client, report, cache)
    if jobs is None:
        jobs = os.cpu_count() or 1
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive int or None, not {jobs!r}")
    jobs = min(jobs, len(normalized))
    if jobs == 1:
        return _run_serial(normalized, report, cache)
    return _run_pool(normalized, jobs, report, cache)


# ---------------------------------------------------------------------------------------------
# Grids and frames.


def flatten_summary(summary: Mapping[str, Any]) -> dict[str, Any]:
    """One flat dict of a summary: nested keys joined with dots (``flash.reads``), in the
    summary's own order. The ``config`` section (the sweep's grid columns say what varied),
    ``tags`` and ``seed`` (a column of its own) are left out. A list (per-chip figures, the
    per-source reports) becomes its compact JSON text so the frame stays flat and CSV-ready."""
    flat: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), item)
        elif isinstance(value, list):
            flat[prefix] = json.dumps(value, separators=(",", ":"))
        else:
            flat[prefix] = value

    for key, value in summary.items():
        if key in ("config", "tags", "seed"):
            continue
        walk(key, value)
    return flat


def _base_point(base: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(base, str):
        return {"preset": base, "config": None, "overrides": {}}
    if not isinstance(base, Mapping):
        raise TypeError(
            "base must be a preset name or a dict like {'preset': ..., 'overrides': ...}"
        )
    allowed = {"preset", "config", "overrides"}
    unknown = sorted(set(base) - allowed)
    if unknown:
        raise ValueError(
            f"base: unknown key(s) {', '.join(unknown)}; base takes {', '.join(sorted(allowed))}"
        )
    return {
        "preset": base.get("preset"),
        "config": base.get("config"),
        "overrides": dict(base.get("overrides") or {}),
    }


def sweep(
    base: str | Mapping[str, Any],
    grid: Mapping[str, Sequence[Any]],
    traces: Sequence[str | os.PathLike[str] | Mapping[str, Any]],
    *,
    client: Any = None,
    seed: int = 1,
    jobs: int | None = None,
    progress: Progress | None = None,
    wall_clock: bool = False,
    trace_format: str | None = None,
    max_requests: int | None = None,
    warmup_requests: int | None = None,
    check_integrity: bool = False,
    time_scale: float = 1.0,
    closed_loop_requests: int | None = None,
    as_fast_as_possible: bool = False,
    addresses: str = "strict",
    max_bad_lines: int = 0,
    device: int | None = None,
    csv_columns: str | None = None,
    queue_events: bool = False,
    precondition_cache: str | os.PathLike[str] | None = None,
) -> Any:
    """Run the cartesian product of ``grid`` over ``traces``; one ``polars.DataFrame`` row per run.

    base
        A preset name, or a dict ``{"preset": NAME}`` / ``{"config": PATH}`` with optional
        ``"overrides"`` that every run starts from.
    grid
        Key to list of values. A config key (``"ftl.overprovisioning_fraction"``) is an
        override; one of :data:`RUN_OPTION_KEYS` (``seed``, ``max_requests``,
        ``time_scale``, ``addresses``, ...) sets that run option instead
        (``"seed": [1, 2, 3]`` repeats each run with three seeds).
    traces
        The inputs; each grid combination runs on each. An entry is a block trace path, or a
        dict with ``trace`` (a path), ``trace_format``, ``csv_columns`` and/or ``workload`` (a
        profile name, a spec dict or a spec file, see :func:`run_points`):
        ``{"workload": "hm_0"}`` is a synthetic stand-in, ``{"trace": PATH, "trace_format":
        "spc"}`` a trace of a given layout.
    client, jobs, progress, precondition_cache
        As in :func:`run_points`: a local process pool by default, a Dask cluster given a
        ``distributed.Client``; with a ``precondition_cache`` directory the runs that share a
        drive precondition it once (a grid over schedulers, loads or timing on one aged drive
        preconditions it once in all).
    seed, trace_format, max_requests, warmup_requests, check_integrity, time_scale,
    closed_loop_requests, as_fast_as_possible, addresses, max_bad_lines, device, csv_columns,
    queue_events
        Run options for every run, as in :func:`run_points` (a grid key of the same name wins;
        an entry of ``traces`` gives its own ``trace_format`` and ``csv_columns``).
    wall_clock
        Keep the wall-clock columns (:data:`WALL_CLOCK_COLUMNS`) and, with a precondition
        cache, the snapshot's (:data:`SNAPSHOT_COLUMNS`). Off by default so that the same grid
        and seed give an identical frame wherever it runs, with or without a cache.

    Rows come in a fixed order: traces outermost, then the grid keys in the order given, the
    last varying fastest. Columns: the grid keys (their values), ``trace`` (the path as given;
    a workload as the summary names it, ``profile NAME`` or ``workload LABEL``), ``seed``,
    then every summary figure flattened by :func:`flatten_summary` (``requests.completed``,
    ``latency_us.read.p99``, ``flash.reads``, ...), in the summary's order; ``docs/summary.md``
    defines each. Unknown grid keys and unreadable traces raise ``ValueError`` before any run.
    """
    import polars as pl

    start = _base_point(base)
    if not isinstance(grid, Mapping):
        raise TypeError("grid must be a dict of key to list of values")
    for key, values in grid.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise ValueError(f"grid key {key!r}: expected a non-empty list of values")
    if isinstance(traces, (str, bytes, os.PathLike)):
        traces = [traces]
    if not traces:
        raise ValueError("traces: give at least one trace path or workload")
    inputs = [_sweep_input(i, entry, trace_format, csv_columns) for i, entry in enumerate(traces)]
    for key in ("trace", "tags"):
        if key in grid:
            raise ValueError(f"grid key {key!r} is reserved; give traces in the traces argument")

    keys = list(grid)
    points: list[dict[str, Any]] = []
    for source in inputs:
        for values in itertools.product(*(grid[key] for key in keys)):
            point: dict[str, Any] = {
                "preset": start["preset"],
                "config": start["config"],
                "overrides": dict(start["overrides"]),
                "seed": seed,
                "max_requests": max_requests,
                "warmup_requests": warmup_requests,
                "check_integrity": check_integrity,
                "time_scale": time_scale,
                "closed_loop_requests": closed_loop_requests,
                "as_fast_as_possible": as_fast_as_possible,
                "addresses": addresses,
                "max_bad_lines": max_bad_lines,
                "device": device,
                "queue_events": queue_events,
                **source,
            }
            for key, value in zip(keys, values, strict=True):
                if key in RUN_OPTION_KEYS:
                    point[key] = value
                else:
                    point["overrides"][key] = value
            point["tags"] = {"grid": dict(zip(keys, values, strict=True))}
            points.append(point)

    results = run_points(
        points,
        client=client,
        jobs=jobs,
        progress=progress,
        precondition_cache=precondition_cache,
    )
    dropped = () if wall_clock else (*WALL_CLOCK_COLUMNS, *SNAPSHOT_COLUMNS)

    rows: list[dict[str, Any]] = []
    for point, summary in zip(points, results, strict=True):
        row: dict[str, Any] = {}
        for key in keys:
            row[key] = point["tags"]["grid"][key]
        row["trace"] = _input_label(point)
        row["seed"] = point["seed"]
        for name, value in flatten_summary(summary).items():
            if name in dropped:
                continue
            row.setdefault(name, value)
        rows.append(row)
    # Columns in first-seen order over the rows, so a figure only some runs report (another
    # scheduler's counters) still has one stable place; missing values are null.
    columns: dict[str, list[Any]] = {}
    for row in rows:
        for name in row:
            columns.setdefault(name, [])
    for row in rows:
        for name, values in columns.items():
            values.append(row.get(name))
    return pl.DataFrame(columns, strict=False, infer_schema_length=None)


def _sweep_input(
    index: int,
    entry: str | os.PathLike[str] | Mapping[str, Any],
    trace_format: str | None,
    csv_columns: str | None,
) -> dict[str, Any]:
    """One entry of sweep's ``traces`` as point keys (trace, trace_format, csv_columns,
    workload)."""
    if isinstance(entry, (str, os.PathLike)):
        return {
            "trace": os.fspath(entry),
            "trace_format": trace_format,
            "csv_columns": csv_columns,
            "workload": None,
        }
    if not isinstance(entry, Mapping):
        raise TypeError(f"traces[{index}]: expected a path or a dict, not {type(entry).__name__}")
    allowed = ("trace", "trace_format", "csv_columns", "workload")
    unknown = sorted(set(entry) - set(allowed))
    if unknown or ("trace" not in entry and "workload" not in entry):
        raise ValueError(
            f"traces[{index}]: a dict entry takes {', '.join(allowed)} (a trace, a workload or"
            f" both); got {', '.join(map(str, entry)) or 'nothing'}"
        )
    trace = entry.get("trace")
    return {
        "trace": None if trace is None else os.fspath(trace),
        "trace_format": entry.get("trace_format", trace_format),
        "csv_columns": entry.get("csv_columns", csv_columns),
        "workload": entry.get("workload"),
    }


class _CallableModule(type(os)):  # type: ignore[misc]
    """``flashlane.sweep`` is both this module (``flashlane.sweep.run_points``) and the
    function :func:`sweep` (``flashlane.sweep(base, grid, traces)``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
