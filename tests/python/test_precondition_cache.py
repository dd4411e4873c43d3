"""precondition_cache= of flashlane.run and flashlane.sweep: the drive is preconditioned once,
later runs of it load its snapshot, and every result (summary, frame) is the one
preconditioning afresh gives (reproduce's runs.csv: tests/python/test_reproduce.py)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

import flashlane
from flashlane.sweep import SNAPSHOT_COLUMNS

REPO = Path(__file__).resolve().parents[2]
TPCC = str(REPO / "traces" / "tpcc-small.mqsim")
#: A small drive filled to 90 % and aged: garbage collection before and during the run.
AGED = {
    "preset": "sos-4x4",
    "overrides": {
        "geometry.blocks_per_plane": 64,
        "precondition.fill_fraction": 0.9,
        "precondition.age": True,
    },
}
RUN = {"max_requests": 2000, "addresses": "fold"}


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without its wall-clock fields and snapshot report."""
    stripped = copy.deepcopy(summary)
    stripped.pop("engine")
    stripped["precondition"].pop("wall_s")
    stripped["precondition"].pop("snapshot", None)
    return stripped


def aged_run(**kwargs: Any) -> dict[str, Any]:
    return flashlane.run(AGED["preset"], TPCC, AGED["overrides"], **RUN, **kwargs)


def test_run_writes_the_snapshot_then_loads_it(tmp_path: Path) -> None:
    afresh = aged_run()
    assert "snapshot" not in afresh["precondition"]
    first = aged_run(precondition_cache=tmp_path / "cache")
    second = aged_run(precondition_cache=str(tmp_path / "cache"))
    assert first["precondition"]["snapshot"]["loaded"] is False
    assert second["precondition"]["snapshot"]["loaded"] is True
    assert first["precondition"]["snapshot"]["file"] == second["precondition"]["snapshot"]["file"]
    assert Path(second["precondition"]["snapshot"]["file"]).parent == tmp_path / "cache"
    assert afresh["gc"]["runs"] > 0
    assert comparable(first) == comparable(afresh)
    assert comparable(second) == comparable(afresh)


def test_a_damaged_snapshot_is_a_value_error_naming_it(tmp_path: Path) -> None:
    file = Path(aged_run(precondition_cache=tmp_path)["precondition"]["snapshot"]["file"])
    file.write_bytes(b"not a snapshot at all, but long enough")
    with pytest.raises(ValueError, match=rf"{file}: not a flashlane drive snapshot"):
        aged_run(precondition_cache=tmp_path)


def test_cache_of_the_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="precondition_cache"):
        aged_run(precondition_cache=3)
    with pytest.raises(TypeError, match="precondition_cache"):
        flashlane.sweep.run_points([], precondition_cache=3.5)


def test_a_sweep_over_schedulers_preconditions_its_drive_once(tmp_path: Path) -> None:
    """Two pool workers, three runs of one drive: one preconditions it, the others wait and
    load; the frame is the frame without a cache."""
    grid = {"host.scheduler.kind": ["noop", "deadline", "cfq"]}
    kwargs: dict[str, Any] = {"jobs": 2, "max_requests": 2000, "addresses": "fold"}
    cache = tmp_path / "cache"
    with_cache = flashlane.sweep(AGED, grid, [TPCC], precondition_cache=cache, **kwargs)
    without = flashlane.sweep(AGED, grid, [TPCC], **kwargs)
    assert with_cache.equals(without)
    assert not set(SNAPSHOT_COLUMNS) & set(with_cache.columns)
    assert len(list(cache.glob("drive-*.snapshot"))) == 1
    # Kept on request, the snapshot columns say what happened.
    again = flashlane.sweep(AGED, grid, [TPCC], precondition_cache=cache, wall_clock=True, **kwargs)
    assert again["precondition.snapshot.loaded"].to_list() == [True, True, True]
    assert again["precondition.snapshot.key"].n_unique() == 1
