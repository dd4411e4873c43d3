"""Type stubs of the native module built from crates/flashlane-py."""

from collections.abc import Iterator
from typing import Any

def run_json(
    preset: str | None,
    config: str | None,
    trace: str,
    format: str | None,
    overrides: dict[str, str | int | float | bool],
    warmup_requests: int,
    max_requests: int | None,
    seed: int,
    check_integrity: bool,
) -> str:
    """Run one simulation; return its summary as JSON text (layout of ``flashlane run --json``,
    keys described in docs/summary.md). Raises ValueError for config, trace and workload
    errors, OSError for output errors."""

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
