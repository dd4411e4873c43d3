"""`flashlane advise` / `flashlane.advise` (python/flashlane/_advise.py): the placement rule,
one quick advice whose row is recomputed from two plain runs of the same settings, the errors
before any run, and the CLI's own help naming every option."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import flashlane
from flashlane import _advise
from flashlane.reproduce import combos

REPO = Path(__file__).resolve().parents[2]
TRACE = REPO / "traces" / "tpcc-small.mqsim"


def _conditions(chips: list[float], channels: list[float], load: float, burst: float) -> dict:
    return {
        "chip_page_share": chips,
        "channel_page_share": channels,
        "offered_load_channel_fraction": load,
        "windows": [{"window_ns": 1_000_000, "peak_to_mean_arrivals": burst}],
    }


def test_placement_reads_the_maps_axes_from_the_shares() -> None:
    even = _advise.placement(_conditions([1 / 64] * 64, [1 / 8] * 8, 0.12, 1.4))
    assert (even["hot_chips"], even["hot_channels"]) == (64, 8)
    assert (even["study_condition"], even["study_load"]) == ("even", 0.1)
    # 90 % on 16 chips: the busiest holds 5.6 %, as 18 equally loaded chips would.
    skewed = _advise.placement(
        _conditions([0.9 / 16] * 16 + [0.1 / 48] * 48, [0.225] * 4 + [0.025] * 4, 0.5, 1.5)
    )
    assert skewed["hot_chips"] == 18 and skewed["hot_channels"] == 4
    assert skewed["study_condition"] == "skewed"
    bursty = _advise.placement(_conditions([1 / 64] * 64, [1 / 8] * 8, 0.3, 5.0))
    assert bursty["study_condition"] == "bursty"


@pytest.fixture(scope="module")
def advice() -> dict:
    return flashlane.advise(TRACE, quick=True, max_requests=1500, time_scale=4.0, jobs=2)


def test_quick_advice_ranks_every_technique_and_all_together(advice: dict) -> None:
    names = {r["combination"] for r in advice["rows"]}
    largest = max(len(c) for c in combos.combinations())
    expected = {combos.combo_label(c) for c in combos.combinations() if len(c) in (1, largest)}
    assert names == expected
    ratios = [r["latency_ratio"] for r in advice["rows"]]
    assert ratios == sorted(ratios)
    assert advice["requests"] == 1500
    # At a quarter of its recorded rate tpcc offers a third of the channels' bandwidth: no
    # overload, no light-load warning.
    assert not [w for w in advice["warnings"] if w.startswith(("overload", "light"))]
    text = _advise.render(advice)
    assert text.count("\n") > len(advice["rows"])
    for row in advice["rows"]:
        assert row["combination"] in text


def test_a_row_is_the_ratio_of_two_plain_runs(advice: dict) -> None:
    row = advice["rows"][0]

    def run(switches: list[str]) -> dict:
        settings = flashlane._native.combined_settings([*switches, *combos.drive_switches()])
        overrides = dict(s.split("=", 1) for s in settings)
        return flashlane.run(
            "combined-8x8",
            str(TRACE),
            overrides,
            addresses="remap",
            max_requests=1500,
            time_scale=4.0,
        )

    base, ours = run([]), run(row["switches"])
    expected = ours["latency_us"]["all"]["mean"] / base["latency_us"]["all"]["mean"]
    assert row["latency_ratio"] == pytest.approx(expected, rel=1e-12)
    assert row["command"].startswith("flashlane run --preset combined-8x8 --trace ")


def test_bad_inputs_fail_before_any_run(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"nope\.mqsim: no such trace"):
        flashlane.advise(tmp_path / "nope.mqsim")
    with pytest.raises(ValueError, match="unknown preset"):
        flashlane.advise(TRACE, preset="no-such-preset")
    out = tmp_path / "missing" / "advice.json"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from flashlane._advise import main; sys.exit(main(sys.argv[1:]))",
            "--trace",
            str(TRACE),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        env={**os.environ},
    )
    assert done.returncode == 2 and "--json" in done.stderr, done.stderr
    assert not out.parent.exists()


def test_the_cli_help_names_every_option() -> None:
    help_text = (REPO / "crates" / "flashlane-cli" / "src" / "advise.rs").read_text()
    parser_text = Path(_advise.__file__).read_text()
    options = {
        part.split('"')[1]
        for part in parser_text.split("parser.add_argument(")[1:]
        if part.lstrip().startswith('"--')
    }
    assert {"--trace", "--preset", "--quick", "--json"} <= options
    for option in options:
        assert option in help_text, option
