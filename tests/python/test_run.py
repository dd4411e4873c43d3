"""flashlane.run on real traces: layout, agreement with the CLI, overrides, errors, determinism."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

import flashlane

REPO = Path(__file__).resolve().parents[2]
TPCC = REPO / "traces" / "tpcc-small.mqsim"
PRESET = "mqsim-ssd"

# Top-level keys docs/summary.md documents and every caller may rely on.
DOCUMENTED_KEYS = {
    "schema_version",
    "seed",
    "config",
    "trace",
    "requests",
    "latency_us",
    "throughput",
    "sim_time_ns",
    "chips",
    "conflicts",
    "flash",
    "gc",
    "waf",
    "waf_host_gc",
    "engine",
}

# Fields measured on the wall clock: the only ones two runs of the same inputs may disagree on.
WALL_CLOCK_FIELDS = [("engine", "wall_s"), ("engine", "requests_per_s"), ("precondition", "wall_s")]


def without_wall_clock(summary: dict[str, Any]) -> dict[str, Any]:
    """A copy of `summary` without its wall-clock fields (each must be present)."""
    stripped = copy.deepcopy(summary)
    for section, field in WALL_CLOCK_FIELDS:
        assert isinstance(stripped[section].pop(field), float), f"{section}.{field}"
    return stripped


def trace_requests(path: Path) -> int:
    with path.open() as lines:
        return sum(1 for line in lines if line.strip())


def flashlane_bin() -> Path:
    path = Path(os.environ.get("FLASHLANE_BIN", "target/release/flashlane"))
    if not path.is_absolute():
        path = REPO / path
    if not path.is_file():
        pytest.fail(
            f"{path}: no flashlane binary; build it with `cargo build --release -p flashlane-cli` "
            "or point FLASHLANE_BIN at one"
        )
    return path


def cli_summary(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "cli.json"
    subprocess.run(
        [str(flashlane_bin()), "run", *args, "--json", str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(out.read_text())
    return result


@pytest.fixture(scope="module")
def tpcc() -> dict[str, Any]:
    return flashlane.run(PRESET, TPCC, format="mqsim")


def test_summary_has_documented_top_level_keys(tpcc: dict[str, Any]) -> None:
    missing = DOCUMENTED_KEYS - tpcc.keys()
    assert not missing, f"summary lacks {sorted(missing)}"
    assert isinstance(tpcc["schema_version"], int)
    assert tpcc["seed"] == 1
    assert tpcc["config"]["name"] == PRESET
    assert tpcc["trace"]["path"] == str(TPCC)
    assert tpcc["trace"]["format"] == "mqsim"
    assert tpcc["trace"]["records"] == 6999


def test_every_trace_request_completes(tpcc: dict[str, Any]) -> None:
    requests = tpcc["requests"]
    assert requests["completed"] == trace_requests(TPCC) == 6999
    assert requests["reads"] + requests["writes"] == requests["completed"]
    assert requests["warmup"] == 0
    assert tpcc["latency_us"]["all"]["count"] == requests["completed"]
    assert tpcc["sim_time_ns"] > 0


@pytest.mark.parametrize(
    ("kwargs", "cli_args"),
    [
        ({}, []),
        (
            {
                "overrides": {
                    "ftl.overprovisioning_fraction": 0.2,
                    "host.queue_length_requests": 16,
                },
                "warmup_requests": 500,
                "max_requests": 4000,
                "seed": 7,
                "check_integrity": True,
            },
            [
                "--set",
                "ftl.overprovisioning_fraction=0.2",
                "--set",
                "host.queue_length_requests=16",
                "--warmup-requests",
                "500",
                "--max-requests",
                "4000",
                "--seed",
                "7",
                "--check-integrity",
            ],
        ),
    ],
    ids=["defaults", "options"],
)
def test_same_summary_as_cli_json(
    tmp_path: Path, kwargs: dict[str, Any], cli_args: list[str]
) -> None:
    from_python = flashlane.run(PRESET, TPCC, format="mqsim", **kwargs)
    from_cli = cli_summary(
        tmp_path, "--preset", PRESET, "--trace", str(TPCC), "--format", "mqsim", *cli_args
    )
    assert without_wall_clock(from_python) == without_wall_clock(from_cli)


def test_config_file_gives_same_summary_as_its_preset(tmp_path: Path) -> None:
    shown = subprocess.run(
        [str(flashlane_bin()), "show-preset", PRESET], check=True, capture_output=True, text=True
    )
    config = tmp_path / "ssd.toml"
    config.write_text(shown.stdout)
    from_file = flashlane.run(config=config, trace=TPCC, format="mqsim", max_requests=2000)
    from_preset = flashlane.run(PRESET, TPCC, format="mqsim", max_requests=2000)
    assert from_file["requests"]["completed"] == 2000
    assert without_wall_clock(from_file) == without_wall_clock(from_preset)


def test_overrides_change_the_resolved_config(tpcc: dict[str, Any]) -> None:
    summary = flashlane.run(
        PRESET,
        TPCC,
        {
            "ftl.overprovisioning_fraction": 0.25,
            "host.queue_length_requests": 8,
            "precondition.write_trace_footprint": False,
            "timing.page_read_ns": "60000",
        },
        format="mqsim",
        max_requests=1000,
    )
    base = tpcc["config"]
    config = summary["config"]
    assert base["ftl"]["overprovisioning_fraction"] != 0.25
    assert config["ftl"]["overprovisioning_fraction"] == 0.25
    assert base["host"]["queue_length_requests"] != 8
    assert config["host"]["queue_length_requests"] == 8
    assert base["precondition"]["write_trace_footprint"] is True
    assert config["precondition"]["write_trace_footprint"] is False
    assert base["timing"]["page_read_ns"] != 60000
    assert config["timing"]["page_read_ns"] == 60000
    # Everything not overridden is the preset's.
    assert config["geometry"] == base["geometry"]
    assert config["device"] == base["device"]


def test_unknown_preset_names_it() -> None:
    with pytest.raises(ValueError, match="unknown preset `no-such-ssd`") as raised:
        flashlane.run("no-such-ssd", TPCC, format="mqsim")
    assert PRESET in str(raised.value), "the message lists the known presets"


def test_unknown_override_key_names_it() -> None:
    with pytest.raises(ValueError, match=r"unknown .*`overprovisioning`") as raised:
        flashlane.run(PRESET, TPCC, {"ftl.overprovisioning": 0.2}, format="mqsim")
    assert "ftl.overprovisioning=0.2" in str(raised.value)


def test_override_of_unsupported_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=re.escape("override `ftl.overprovisioning_fraction`")):
        flashlane.run(PRESET, TPCC, {"ftl.overprovisioning_fraction": [0.2]}, format="mqsim")


def test_unknown_trace_format_names_it() -> None:
    with pytest.raises(ValueError, match="unknown trace format `mqsimm`"):
        flashlane.run(PRESET, TPCC, format="mqsimm")


def test_malformed_trace_line_names_file_and_line(tmp_path: Path) -> None:
    trace = tmp_path / "bad.mqsim"
    trace.write_text(
        "938513000 4 264719034 16 0\n938828000 3 197570570 16 0\n938944000 13 not-a-sector 32 0\n"
    )
    with pytest.raises(ValueError) as raised:
        flashlane.run(PRESET, trace, format="mqsim")
    assert f"{trace}:3:" in str(raised.value)


def test_config_file_error_names_file_and_line(tmp_path: Path) -> None:
    shown = subprocess.run(
        [str(flashlane_bin()), "show-preset", PRESET], check=True, capture_output=True, text=True
    )
    lines = shown.stdout.splitlines()
    config = tmp_path / "typo.toml"
    config.write_text("\n".join([*lines, "[host]", "queue_lenght = 4", ""]))
    with pytest.raises(ValueError) as raised:
        flashlane.run(config=config, trace=TPCC, format="mqsim")
    message = str(raised.value)
    assert str(config) in message
    assert "line" in message


def test_missing_trace_is_a_value_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "absent.mqsim"
    with pytest.raises(ValueError, match=re.escape(str(missing))):
        flashlane.run(PRESET, missing, format="mqsim")


def test_two_runs_give_identical_summaries(tpcc: dict[str, Any]) -> None:
    again = flashlane.run(PRESET, TPCC, format="mqsim")
    assert without_wall_clock(again) == without_wall_clock(tpcc)


def test_concurrent_runs_match_sequential_ones(tpcc: dict[str, Any]) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda _: flashlane.run(PRESET, TPCC, format="mqsim"), range(2)))
    for summary in results:
        assert without_wall_clock(summary) == without_wall_clock(tpcc)


def test_seed_is_recorded() -> None:
    summary = flashlane.run(PRESET, TPCC, format="mqsim", seed=42, max_requests=100)
    assert summary["seed"] == 42
    assert summary["requests"]["completed"] == 100


def test_presets_match_the_cli_listing() -> None:
    presets = flashlane.presets()
    assert PRESET in presets
    assert all(description for description in presets.values())
    listing = subprocess.run(
        [str(flashlane_bin()), "presets"], check=True, capture_output=True, text=True
    ).stdout
    cli = {line.split(None, 1)[0]: line.split(None, 1)[1].strip() for line in listing.splitlines()}
    assert presets == cli


def test_version_is_the_crate_version() -> None:
    version = subprocess.run(
        [str(flashlane_bin()), "--version"], check=True, capture_output=True, text=True
    ).stdout
    assert version.split() == ["flashlane", flashlane.__version__]


def _random_spec(requests: int) -> dict[str, Any]:
    return {
        "label": "random 4 KiB for the interrupt test",
        "requests": requests,
        "read_fraction": 0.7,
        "arrival": {"kind": "poisson", "mean_interarrival_ns": 20000.0},
        "size": {"kind": "empirical", "sizes_bytes": [4096], "weights": [1.0]},
        "address": {"kind": "uniform", "span_bytes": 1 << 30, "align_bytes": 4096},
    }


def test_ctrl_c_stops_a_long_run_while_it_runs() -> None:
    """SIGINT during `flashlane.run` raises KeyboardInterrupt while the run goes on, not when it
    ends: the native run takes the interpreter back now and then to run its signal handlers.
    Measured against the run's own pace on this machine: a run of 40 times the requests,
    interrupted a moment in, ends long before a run of 10 times them would."""
    import signal
    import threading
    import time

    overrides = {"precondition.write_trace_footprint": False, "ftl.mapping_cache_bytes": 0}
    started = time.monotonic()
    flashlane.run(PRESET, workload=_random_spec(100_000), overrides=overrides)
    short = time.monotonic() - started
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            flashlane.run(PRESET, workload=_random_spec(4_000_000), overrides=overrides)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10 * short + 0.2


def test_summary_warnings_are_python_warnings() -> None:
    # tpcc-small replayed 10x faster on mqsim-ssd outruns the SSD: the summary warns
    # open_loop_saturated, and so does Python (issue 34; issue 31's newcomer saw only the dict).
    with pytest.warns(flashlane.FlashlaneWarning, match=r"^\[open_loop_saturated, \d+\]") as seen:
        summary = flashlane.run(PRESET, TPCC, time_scale=0.1)
    codes = {w["code"] for w in summary["warnings"]}
    assert "open_loop_saturated" in codes
    assert len(seen) == len(summary["warnings"])


def test_a_run_without_warnings_raises_none() -> None:
    import warnings

    # Closed loop at depth 8: nothing to warn about, so no Python warning either.
    with warnings.catch_warnings():
        warnings.simplefilter("error", flashlane.FlashlaneWarning)
        summary = flashlane.run(PRESET, TPCC, closed_loop_requests=8)
    # docs/summary.md: the key is absent when there is no warning.
    assert "warnings" not in summary
