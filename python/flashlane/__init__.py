"""flashlane: a deterministic, trace-driven NAND-flash SSD simulator.

The simulation itself is the Rust core (``flashlane-core``); this package calls it in-process
through the native module :mod:`flashlane._native`. :func:`run` returns the same summary that
``flashlane run --json FILE`` writes, as a ``dict``. What each key of the summary means is
described in ``docs/summary.md`` in the repository.

Example::

    import flashlane

    summary = flashlane.run(
        "mqsim-ssd",
        "traces/tpcc-small.mqsim",
        {"ftl.overprovisioning_fraction": 0.2},
        format="mqsim",
    )
    print(summary["latency_us"]["all"])
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from flashlane import _native
from flashlane._inputs import Workload, cache_dir, reading_options, workloads_json

__all__ = ["FlashlaneWarning", "__version__", "advise", "presets", "read_trace", "run", "sweep"]

__version__: str = _native.version()
"""Version of the simulator core this package was built from."""

OverrideValue = str | int | float | bool


class FlashlaneWarning(UserWarning):
    """A warning of a run's summary (``summary["warnings"]``, docs/summary.md): the run
    completed, but a figure may not mean what it seems (e.g. ``open_loop_saturated``: the
    replay outran the SSD, so latencies depend on the trace's length). The message starts
    with the warning's code and count."""


def run(
    preset: str | None = None,
    trace: TracePath | Sequence[TracePath] | None = None,
    overrides: Mapping[str, OverrideValue] | None = None,
    *,
    config: str | os.PathLike[str] | None = None,
    format: str | Sequence[str] | None = None,
    warmup_requests: int = 0,
    max_requests: int | None = None,
    seed: int = 1,
    check_integrity: bool = False,
    workload: Workload | None = None,
    time_scale: float = 1.0,
    closed_loop_requests: int | None = None,
    as_fast_as_possible: bool = False,
    addresses: Literal["strict", "fold", "remap"] = "strict",
    max_bad_lines: int = 0,
    device: int | None = None,
    csv_columns: str | None = None,
    queue_events: bool = False,
    json_path: str | os.PathLike[str] | None = None,
    precondition_cache: str | os.PathLike[str] | None = None,
    dispatch_log_path: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Simulate block traces on one SSD configuration and return the summary.

    Arguments mirror ``flashlane run``; every option of that command has one here:

    preset
        A bundled SSD preset (see :func:`presets`); ``--preset``. Give this or ``config``.
    trace
        The block trace to replay (plain, gzip or zstd; a blktrace capture directory);
        ``--trace``. A list of traces is a mix, each in its own equal share of the logical
        space, as ``--trace`` repeated.
    overrides
        Config values to change, e.g. ``{"ftl.overprovisioning_fraction": 0.2}``; each item
        is one ``--set KEY=VALUE``. Values may be str, int, float or bool; a str is read as a
        TOML value when it parses as one, else as a string, as on the command line.
    config
        An SSD config file (TOML, same layout as the presets); ``--config``.
    format
        The trace layout (``"mqsim"``, ``"ssdsim"``, ``"disksim"``, ``"msr"``, ``"spc"``,
        ``"blkparse"``, ``"blktrace"``, ``"fio"``, ``"diskmon"``, ``"hp-srt"``,
        ``"generic-csv"``); ``--format``. ``None`` detects it from the content. With several
        traces, one layout for all or a list of one per trace.
    csv_columns
        The column spec of a ``"generic-csv"`` trace (``docs/traces.md``), e.g.
        ``"time=0:ms,op=3:Read/Write,offset=4:bytes,size=5:bytes"``; ``--csv-columns``.
    queue_events
        blkparse/blktrace traces: take the queue (``Q``) events instead of the issue (``D``)
        events as the requests; ``--queue-events``.
    max_bad_lines
        Skip and count up to N malformed lines per trace instead of stopping at the first
        (the summary's ``trace.bad_lines`` counts them); ``--max-bad-lines``.
    device
        Keep only the requests of this device / disk number; ``--device``.
    warmup_requests
        Simulate the first N requests but leave them out of every statistic;
        ``--warmup-requests``.
    max_requests
        Read at most N trace records over all traces (``None``: every one);
        ``--max-requests``.
    seed
        Seed of every random stream; equal inputs and seed give an equal summary; ``--seed``.
    check_integrity
        Track a version per page and count reads that miss the latest write (slower);
        ``--check-integrity``.
    workload
        A synthetic workload generated on the fly: a profile name (``--profile``, see
        ``flashlane gen --list``), a spec as a dict with the keys of a ``--synthetic`` TOML
        file (``docs/workloads.md``), such a TOML file as a ``pathlib.Path``
        (``--synthetic FILE``), or a list of them. Given with ``trace`` or as a list, they
        are replayed as a mix (the traces first), as on the command line; given alone,
        ``trace`` may be ``None``.
    time_scale
        Open-loop replay: multiply trace times by this factor (``--time-scale``).
    closed_loop_requests
        Closed-loop replay keeping this many requests in the system (``--closed-loop``); a
        workload spec with ``closed_loop`` arrivals asks for it at its own depth.
    as_fast_as_possible
        Ignore timestamps; a request arrives as soon as the host queue has room (``--afap``).
    addresses
        ``"strict"`` (a request past the capacity is an error), ``"fold"``
        (``--fold-addresses``) or ``"remap"`` (``--remap-addresses``).
    json_path
        Also write the summary to this file, as ``--json FILE`` writes it (pretty JSON,
        replaced atomically: a failed write leaves no partial file). Its directory is checked
        before the simulation starts.
    precondition_cache
        A directory of drive snapshots (created if missing); ``--precondition-cache``. The
        first run of a drive preconditions it and writes its snapshot there; every later run
        of the same drive (same geometry, ``[ftl]``, ``[precondition]``, ``[variation]``, seed
        and trace footprint) loads it instead, with the same results. The summary's
        ``precondition.snapshot`` says which happened (``docs/sweeps.md``, "Precondition
        cache").
    dispatch_log_path
        Also write the order in which the host scheduler handed requests to the device, as
        ``--dispatch-log FILE`` writes it (CSV ``command,seq,op,offset_bytes,size_bytes,
        dispatched_ns``, docs/summary.md), written as ``json_path`` is.

    Returns the summary as a ``dict`` with the layout of ``flashlane run --json``; its keys,
    their meaning and unit are defined in ``docs/summary.md`` (not listed here, where a list
    would go stale as statistics are added). Two runs
    of the same inputs give equal summaries except for the wall-clock measurements
    ``engine.wall_s``, ``engine.requests_per_s`` and ``precondition.wall_s`` (and, with a
    ``precondition_cache``, ``precondition.snapshot``).

    Each of the summary's ``warnings`` is also raised as a :class:`FlashlaneWarning` (Python
    prints it once per place; ``warnings.simplefilter("error", FlashlaneWarning)`` turns them
    into errors).

    Raises ``ValueError`` for an unusable preset, config file, override, trace format, column
    spec or trace (the message names the preset, the key, or the file and line at fault),
    ``TypeError`` for an argument of the wrong type (the message names the argument), and
    ``OSError`` when ``json_path``, ``dispatch_log_path`` or the ``precondition_cache``
    cannot be written (a damaged snapshot there raises ``ValueError`` naming it). The
    simulation releases the GIL, so runs in several threads proceed in parallel; it takes it
    back now and then (at most every 50 ms) to run Python's signal handlers, so Ctrl-C stops a
    long run at once with ``KeyboardInterrupt``.
    """
    traces = _trace_list(trace)
    if not traces and workload is None:
        raise TypeError("run() needs a trace or a workload: run(preset, trace, ...)")
    formats = _format_list(format, len(traces))
    reading = reading_options(max_bad_lines, device, csv_columns, queue_events)
    out = None if json_path is None else _check_writable(json_path, "json_path")
    log_out = (
        None
        if dispatch_log_path is None
        else _check_writable(dispatch_log_path, "dispatch_log_path")
    )
    values = {} if overrides is None else dict(overrides)
    text, log = _native.run_json(
        preset,
        None if config is None else os.fspath(config),
        traces,
        formats,
        values,
        warmup_requests,
        max_requests,
        seed,
        check_integrity,
        workloads_json=workloads_json(workload),
        time_scale=time_scale,
        closed_loop_requests=closed_loop_requests,
        as_fast_as_possible=as_fast_as_possible,
        addresses=addresses,
        pretty=out is not None,
        precondition_cache=cache_dir(precondition_cache),
        dispatch_log=log_out is not None,
        **reading,
    )
    summary: dict[str, Any] = json.loads(text)
    if out is not None:
        _write_atomically(out, text + "\n")
    if log_out is not None and log is not None:
        _write_atomically(log_out, log)
    # The CLI prints them; in Python they are warnings too, not only keys of the dict.
    for warning in summary.get("warnings", []):
        warnings.warn(
            f"[{warning['code']}, {warning['count']}] {warning['message']}",
            FlashlaneWarning,
            stacklevel=2,
        )
    return summary


TracePath = str | os.PathLike[str]


def _trace_list(trace: TracePath | Sequence[TracePath] | None) -> list[str]:
    """``trace`` as a list of paths (``[]`` for ``None``); a ``TypeError`` naming ``trace``."""
    if trace is None:
        return []
    if isinstance(trace, (str, os.PathLike)):
        return [os.fspath(trace)]
    if not isinstance(trace, Sequence) or not trace:
        raise TypeError(
            "trace must be a path (str or pathlib.Path) or a non-empty list of paths,"
            f" not {type(trace).__name__}"
        )
    paths = []
    for item in trace:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"trace: each item must be a path, not {type(item).__name__}")
        paths.append(os.fspath(item))
    return paths


def _format_list(format: str | Sequence[str] | None, traces: int) -> list[str]:
    """``format`` as a list: ``[]`` (detect), one layout for all, or one per trace."""
    if format is None:
        return []
    formats = [format] if isinstance(format, str) else format
    if not isinstance(formats, Sequence) or not all(isinstance(f, str) for f in formats):
        raise TypeError(f"format must be a layout name or a list of them, not {format!r}")
    if len(formats) > 1 and len(formats) != traces:
        raise ValueError(
            f"format: {len(formats)} layouts for {traces} traces; give one for all or one per trace"
        )
    return list(formats)


def _check_writable(path: str | os.PathLike[str], argument: str) -> str:
    """``path`` as a str once it is known that a file can be written there (before the run):
    its directory exists and it is not itself a directory. An ``OSError`` naming the
    ``argument`` and the path if not."""
    out = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(out))
    if os.path.isdir(out):
        raise IsADirectoryError(f"{argument} {out}: is a directory, not a file")
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"{argument} {out}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise PermissionError(f"{argument} {out}: directory {directory} is not writable")
    return out


def _write_atomically(path: str, text: str) -> None:
    """Write ``text`` to a temporary file next to ``path`` and rename it over ``path``."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".flashlane-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def presets() -> dict[str, str]:
    """The bundled SSD presets: name to one-line description (as ``flashlane presets``)."""
    return dict(_native.presets())


Backend = Literal["polars", "pandas", "dict"]

#: Columns of a trace frame: arrival time on the trace's own clock (ns), device number, stream
#: (process or device) id, byte offset, size in bytes, and "read" or "write".
TRACE_COLUMNS = ("time_ns", "device", "stream", "offset_bytes", "size_bytes", "op")


def _frame(columns: dict[str, list[Any]], backend: Backend) -> Any:
    if backend == "dict":
        return columns
    if backend == "polars":
        import polars as pl

        return pl.DataFrame(
            columns,
            schema={
                "time_ns": pl.UInt64,
                "device": pl.UInt32,
                "stream": pl.UInt32,
                "offset_bytes": pl.UInt64,
                "size_bytes": pl.UInt64,
                "op": pl.String,
            },
        )
    if backend == "pandas":
        import pandas as pd

        return pd.DataFrame(columns, columns=list(TRACE_COLUMNS))
    raise ValueError(f"backend must be 'polars', 'pandas' or 'dict', not {backend!r}")


def _chunks(
    path: str | os.PathLike[str],
    format: str | None,
    chunk_rows: int,
    max_bad_lines: int,
    queue_events: bool,
    csv_columns: str | None,
) -> Iterator[dict[str, list[Any]]]:
    reader = _native.open_trace(
        os.fspath(path), format, max_bad_lines, queue_events, csv_columns, chunk_rows
    )
    yield from reader


def read_trace(
    path: str | os.PathLike[str],
    format: str | None = None,
    *,
    backend: Backend = "polars",
    chunk_rows: int | None = None,
    max_bad_lines: int = 0,
    queue_events: bool = False,
    csv_columns: str | None = None,
) -> Any:
    """Read a block trace with the simulator's own readers.

    path
        The trace (plain, gzip or zstd; a blktrace directory or per-CPU prefix).
    format
        Its layout (``"msr"``, ``"spc"``, ``"blkparse"``, ``"blktrace"``, ``"fio"``,
        ``"mqsim"``, ``"ssdsim"``, ``"disksim"``, ``"diskmon"``, ``"hp-srt"``,
        ``"generic-csv"``); ``None`` detects it and raises ``ValueError`` if two layouts fit.
    backend
        ``"polars"`` (a ``polars.DataFrame``), ``"pandas"`` (a ``pandas.DataFrame``) or
        ``"dict"`` (a dict of equal-length lists). polars comes with flashlane; pandas with
        its extra (``pip install "flashlane[pandas]"``).
    chunk_rows
        ``None`` returns the whole trace as one frame. A number returns an iterator of frames
        of at most that many rows, read lazily: memory stays bounded for traces of any size.
    max_bad_lines, queue_events, csv_columns
        As ``--max-bad-lines``, ``--queue-events`` and ``--csv-columns`` of the command line.

    Columns (see ``TRACE_COLUMNS``): ``time_ns`` (on the trace's own clock, not rebased),
    ``device``, ``stream``, ``offset_bytes``, ``size_bytes``, ``op`` (``"read"`` or
    ``"write"``). A malformed line raises ``ValueError`` naming the file, the line and the
    text.
    """
    if backend not in ("polars", "pandas", "dict"):
        raise ValueError(f"backend must be 'polars', 'pandas' or 'dict', not {backend!r}")
    if chunk_rows is not None:
        chunks = _chunks(path, format, chunk_rows, max_bad_lines, queue_events, csv_columns)
        return (_frame(columns, backend) for columns in chunks)
    merged: dict[str, list[Any]] = {name: [] for name in TRACE_COLUMNS}
    for columns in _chunks(path, format, 1 << 16, max_bad_lines, queue_events, csv_columns):
        for name in TRACE_COLUMNS:
            merged[name].extend(columns[name])
    return _frame(merged, backend)


def advise(trace: str | os.PathLike[str], **options: Any) -> dict[str, Any]:
    """Which of the five papers' techniques, alone or together, helps this trace: its
    conditions, where they put it on the effect maps and the combinations study, and every
    technique and combination run on the trace itself, ranked (docs/advise.md). The options
    and the returned dict are those of :func:`flashlane._advise.advise` (``preset``,
    ``format``, ``quick``, ``time_scale``, ``max_requests``, ``jobs``,
    ``precondition_cache``); :func:`flashlane._advise.render` prints it as
    ``flashlane advise`` does. Needs nothing beyond this package."""
    from flashlane._advise import advise as advise_trace

    return advise_trace(trace, **options)


# Imported last: sweep.py uses nothing above, and `flashlane.sweep` is both the module
# (`flashlane.sweep.run_points`) and, being callable, the function `flashlane.sweep(...)`.
from flashlane import sweep  # noqa: E402
