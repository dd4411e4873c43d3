"""Type stubs of the native module built from crates/flashlane-py."""

from collections.abc import Iterator
from typing import Any

def run_json(
    preset: str | None,
    config: str | None,
    trace: str | None,
    format: str | None,
    overrides: dict[str, str | int | float | bool],
    warmup_requests: int,
    max_requests: int | None,
    seed: int,
    check_integrity: bool,
    profile: str | None = None,
    workload_json: str | None = None,
    time_scale: float = 1.0,
    closed_loop_requests: int | None = None,
    as_fast_as_possible: bool = False,
    addresses: str = "strict",
) -> str:
    """Run one simulation; return its summary as JSON text (layout of ``flashlane run --json``,
    keys described in docs/summary.md). The inputs are a trace, a synthetic workload (profile
    name or JSON spec) or both. Raises ValueError for config, trace and workload errors,
    OSError for output errors."""

def resolve_workload(profile: str | None, workload_json: str | None) -> str:
    """Check a synthetic workload (profile name or JSON spec) without running it; return the
    spec as JSON text. ValueError names the key at fault."""

def presets() -> list[tuple[str, str]]:
    """(name, description) of every bundled preset."""

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
