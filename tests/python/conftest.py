"""What the Python tests share: a skip that is a failure where everything must run."""

from __future__ import annotations

import os

import pytest


def skip_or_fail(reason: str) -> None:
    """Skip the test for `reason`, or fail it when FLASHLANE_NO_SKIPS=1 (./scripts/test.sh
    sets it: there every test must run, so a missing tool is a failure, not a quiet pass)."""
    if os.environ.get("FLASHLANE_NO_SKIPS") == "1":
        pytest.fail(f"cannot run here: {reason} (FLASHLANE_NO_SKIPS=1)")
    pytest.skip(reason)
