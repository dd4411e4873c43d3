"""Synthetic workloads as ``flashlane.run`` and ``flashlane.sweep`` take them, and as the native
module wants them (one JSON array of profile names and spec objects)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: A profile name (``flashlane gen --list``), a spec (a dict with the keys of a
#: ``--synthetic`` TOML file, ``docs/workloads.md``), or a list of them (a mix).
Workload = str | Mapping[str, Any] | Sequence[str | Mapping[str, Any]]


def workload_list(workload: Workload | None) -> list[str | dict[str, Any]]:
    """The workload as a list of profile names and spec dicts (``[]`` for ``None``); a
    ``TypeError`` for anything else."""
    if workload is None:
        return []
    items = [workload] if isinstance(workload, (str, Mapping)) else workload
    if not isinstance(items, Sequence) or not items:
        raise TypeError(
            "workload must be a profile name (str), a spec (dict) or a non-empty list of them,"
            f" not {type(workload).__name__}"
        )
    result: list[str | dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            result.append(item)
        elif isinstance(item, Mapping):
            result.append(dict(item))
        else:
            raise TypeError(
                "workload: each item must be a profile name (str) or a spec (dict),"
                f" not {type(item).__name__}"
            )
    return result


def workloads_json(workload: Workload | None) -> str | None:
    """The JSON array the native module takes, or ``None`` for no workload."""
    items = workload_list(workload)
    return json.dumps(items) if items else None


def workload_labels(workload: Workload | None) -> list[str]:
    """How the summary names each workload: ``profile NAME`` or ``workload LABEL``."""
    return [
        f"profile {item}"
        if isinstance(item, str)
        else f"workload {item.get('label', 'synthetic workload')}"
        for item in workload_list(workload)
    ]
