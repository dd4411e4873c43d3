"""Type stubs of the native module built from crates/flashlane-py."""

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
