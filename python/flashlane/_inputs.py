"""Inputs of a run as ``flashlane.run`` and ``flashlane.sweep`` take them, and as the native
module wants them: synthetic workloads (one JSON array of profile names and spec objects),
trace reading options, the precondition cache's directory."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

#: One synthetic workload: a profile name (``flashlane gen --list``), a spec (a dict with the
#: keys of a ``--synthetic`` TOML file, ``docs/workloads.md``) or such a TOML file given as a
#: path object (``pathlib.Path``; a ``str`` is a profile name).
WorkloadItem = str | Mapping[str, Any] | os.PathLike[str]
#: One workload or a list of them (a mix).
Workload = WorkloadItem | Sequence[WorkloadItem]

#: The key under which a spec file travels to the native module (``--synthetic PATH``).
SPEC_FILE_KEY = "spec_file"


def workload_list(workload: Workload | None) -> list[str | dict[str, Any]]:
    """The workload as a list of profile names and spec dicts (``[]`` for ``None``); a spec
    file becomes ``{"spec_file": PATH}``. A ``TypeError`` for anything else."""
    if workload is None:
        return []
    single = isinstance(workload, (str, Mapping, os.PathLike))
    items = [workload] if single else workload
    if not isinstance(items, Sequence) or not items:
        raise TypeError(
            "workload must be a profile name (str), a spec (dict), a spec file (pathlib.Path)"
            f" or a non-empty list of them, not {type(workload).__name__}"
        )
    result: list[str | dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            result.append(item)
        elif isinstance(item, Mapping):
            result.append(dict(item))
        elif isinstance(item, os.PathLike):
            result.append({SPEC_FILE_KEY: os.fspath(item)})
        else:
            raise TypeError(
                "workload: each item must be a profile name (str), a spec (dict) or a spec file"
                f" (pathlib.Path), not {type(item).__name__}"
            )
    return result


def workloads_json(workload: Workload | None) -> str | None:
    """The JSON array the native module takes, or ``None`` for no workload."""
    items = workload_list(workload)
    return json.dumps(items) if items else None


def workload_labels(workload: Workload | None) -> list[str]:
    """How the summary names each workload: ``profile NAME``, ``workload LABEL``, or a spec
    file's path as given."""
    labels = []
    for item in workload_list(workload):
        if isinstance(item, str):
            labels.append(f"profile {item}")
        elif set(item) == {SPEC_FILE_KEY}:
            labels.append(str(item[SPEC_FILE_KEY]))
        else:
            labels.append(f"workload {item.get('label', 'synthetic workload')}")
    return labels


def _non_negative_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be a non-negative int, not {value!r}")
    return value


def reading_options(
    max_bad_lines: Any = 0,
    device: Any = None,
    csv_columns: Any = None,
    queue_events: Any = False,
) -> dict[str, Any]:
    """The trace reading options of ``flashlane run`` (``--max-bad-lines``, ``--device``,
    ``--csv-columns``, ``--queue-events``) checked, as keyword arguments of the native
    ``run_json``. A ``TypeError`` or ``ValueError`` names the argument at fault."""
    _non_negative_int("max_bad_lines", max_bad_lines)
    if device is not None and _non_negative_int("device", device) >= 1 << 32:
        raise ValueError(f"device must be below 2**32 (a 32-bit device number), not {device}")
    if csv_columns is not None and not isinstance(csv_columns, str):
        raise TypeError(
            f"csv_columns must be a str (a column spec, docs/traces.md) or None, "
            f"not {type(csv_columns).__name__}"
        )
    if not isinstance(queue_events, bool):
        raise TypeError(f"queue_events must be a bool, not {type(queue_events).__name__}")
    return {
        "max_bad_lines": max_bad_lines,
        "device": device,
        "csv_columns": csv_columns,
        "queue_events": queue_events,
    }


def cache_dir(precondition_cache: str | os.PathLike[str] | None) -> str | None:
    """``precondition_cache`` as a str (``None`` stays); a ``TypeError`` naming it."""
    if precondition_cache is None:
        return None
    if not isinstance(precondition_cache, (str, os.PathLike)):
        raise TypeError(
            "precondition_cache must be a directory path (str or pathlib.Path), not"
            f" {type(precondition_cache).__name__}"
        )
    return os.fspath(precondition_cache)
