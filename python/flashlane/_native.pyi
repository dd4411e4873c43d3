"""Type stubs of the native module built from crates/flashlane-py."""

from collections.abc import Iterator
from typing import Any

def run_json(
    preset: str | None,
    config: str | None,
    traces: list[str],
    formats: list[str],
    overrides: dict[str, str | int | float | bool],
    warmup_requests: int,
    max_requests: int | None,
    seed: int,
    check_integrity: bool,
    workloads_json: str | None = None,
    time_scale: float = 1.0,
    closed_loop_requests: int | None = None,
    as_fast_as_possible: bool = False,
    addresses: str = "strict",
    max_bad_lines: int = 0,
    queue_events: bool = False,
    csv_columns: str | None = None,
    device: int | None = None,
    pretty: bool = False,
    precondition_cache: str | None = None,
    dispatch_log: bool = False,
) -> tuple[str, str | None]:
    """Run one simulation; return its summary as JSON text (layout of ``flashlane run --json``,
    keys described in docs/summary.md) and, with ``dispatch_log``, the hand-over order as the
    CSV text of ``--dispatch-log`` (else None). The inputs are traces (``formats``: none,
    one for all, or one per trace, as ``--format``), synthetic workloads (a JSON array of
    profile names and spec objects) or both; ``precondition_cache`` is a
    directory of drive snapshots (``--precondition-cache``). Raises ValueError for config,
    trace and workload errors and damaged snapshots, OSError for output errors."""

def resolve_workloads(workloads_json: str) -> str:
    """Check synthetic workloads (a JSON array of profile names and specs) without running
    them; return the specs as a JSON array. ValueError names the profile or key at fault."""

def presets() -> list[tuple[str, str]]:
    """(name, description) of every bundled preset."""

def trace_conditions(
    path: str,
    format: str | None,
    preset: str,
    overrides: list[str],
    remap: bool,
    time_scale: float = 1.0,
    max_bad_lines: int = 0,
) -> str:
    """The workload conditions of a trace under a preset (``KEY=VALUE`` overrides), as the
    JSON text of ``flashlane trace stats FILE --preset P``'s ``conditions``; ``remap``: as
    ``--remap-addresses``; arrival times multiplied by ``time_scale``. ValueError names the
    trace, line or key at fault."""

def combined_switches() -> list[tuple[str, str, str, list[str], list[str]]]:
    """The switches of the ``combined-8x8`` preset: (name, paper, slot, settings as
    ``KEY=VALUE``, needs); slot is ``host_scheduler``, ``interconnect``,
    ``device_scheduler`` or ``drive`` (docs/models/combined.md)."""

def combined_settings(names: list[str]) -> list[str]:
    """The ``--set`` overrides (``KEY=VALUE``) of a combination of ``combined-8x8``'s switches,
    with the drive behaviours they need. ValueError names an unknown switch or two of one
    slot."""

def version() -> str:
    """Version of the simulator core."""

class TraceChunks(Iterator[dict[str, list[Any]]]):
    """Records of a trace in chunks of columns (time_ns, device, stream, offset_bytes,
    size_bytes, op)."""

    @property
    def format(self) -> str: ...
    @property
    def bad_lines(self) -> int: ...
    def __next__(self) -> dict[str, list[Any]]: ...

def open_trace(
    path: str,
    format: str | None,
    max_bad_lines: int,
    queue_events: bool,
    csv_columns: str | None,
    chunk_rows: int,
) -> TraceChunks:
    """Open a trace with the simulator's reader; ValueError names file, line and text."""

def resolve_config(
    preset: str | None,
    config: str | None,
    overrides: dict[str, str | int | float | bool],
) -> str:
    """Build a config without running it; return it as JSON text. ValueError names the preset,
    file or key at fault."""
