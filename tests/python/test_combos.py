"""The combinations study (`flashlane reproduce combos`, python/flashlane/reproduce/combos.py):
which combinations it runs, how ratio and interaction follow from the runs, and one small run
of the whole set whose page's numbers are recomputed from the summaries it wrote."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from flashlane import _native
from flashlane.reproduce import PAPERS, combos, reproduce
from flashlane.reproduce._core import Point, Run

REPO = Path(__file__).resolve().parents[2]


def test_combinations_are_every_coexisting_set_of_techniques() -> None:
    found = combos.combinations()
    slots = {name: slot for name, _, slot, _, _ in _native.combined_switches()}
    hosts = [n for n in combos.techniques() if slots[n] == "host_scheduler"]
    assert sorted(hosts) == ["pass", "piq", "vios"]
    # 5 singles; pairs: each host scheduler with Venice and with SOS, and Venice with SOS;
    # all together: each host scheduler with both.
    assert [len(c) for c in found].count(1) == 5
    assert [len(c) for c in found].count(2) == 3 * 2 + 1
    assert [len(c) for c in found].count(3) == 3
    for combo in found:
        assert len({slots[n] for n in combo}) == len(combo), combo
    with pytest.raises(ValueError, match="`piq` and `pass`"):
        _native.combined_settings(["piq", "pass"])
    # The drive behaviours a technique needs come with it.
    assert "variation.enabled=true" in _native.combined_settings(["vios"])


def test_combos_is_a_study_beside_the_papers_not_one_of_them() -> None:
    assert "combos" not in PAPERS


def _run(condition: str, load: float, config: str, latency: float, **extra) -> Run:
    point = Point(combos.PAPER, "combinations", condition, config, (), (("offered_load", load),))
    summary = {"latency_us": {"all": {"mean": latency}}, "sim_time_ns": 1.0, **extra}
    return Run(point, summary)


def test_ratio_and_interaction_follow_their_definitions() -> None:
    runs = [
        _run("even", 0.1, "baseline", 100.0),
        _run("even", 0.1, "piq", 80.0),
        _run("even", 0.1, "venice", 50.0),
        _run("even", 0.1, "piq+venice", 30.0),
        _run("even", 0.1, "sos", 100.0),
        _run("even", 0.1, "venice+sos", 60.0),
    ]
    study = combos.Study(runs, quick=True)
    assert study.ratio("even", 0.1, ("piq",)) == pytest.approx(0.8)
    # 0.3 / (0.8 x 0.5) = 0.75: they compound.
    assert study.interaction("even", 0.1, ("piq", "venice")) == pytest.approx(0.75)
    assert combos.kind_of(0.75) == "compound"
    # 0.6 / (0.5 x 1.0) = 1.2: SOS takes back part of Venice's gain.
    assert study.interaction("even", 0.1, ("venice", "sos")) == pytest.approx(1.2)
    assert combos.kind_of(1.2) == "cancel"
    assert combos.kind_of(1.0 + combos.INDEPENDENT_BAND / 2) == "independent"
    # A missing single: no interaction, never a guess.
    assert study.interaction("even", 0.1, ("piq", "sos")) is None


def test_small_study_page_agrees_with_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One condition, one load, few requests: every combination still runs.
    monkeypatch.setattr(combos, "QUICK_CONDITIONS", ("skewed",))
    monkeypatch.setattr(combos, "QUICK_LOADS", [0.3])
    monkeypatch.setattr(combos, "QUICK_REQUESTS", 600)
    monkeypatch.setattr(combos.sos, "QUICK_REQUESTS", 600)
    monkeypatch.setattr(combos, "KEY_FIGURES", ("interaction", "ratios-skewed"))
    out = tmp_path / "combos"
    result = reproduce("combos", out, quick=True, results=True, traces=REPO / "traces", jobs=2)
    assert result["runs"] == 1 + len(combos.combinations()) + len(combos.SOS_CONFIGS)
    page = (out / "combos.md").read_text()

    def latency(config: str) -> float:
        stem = Point(
            combos.PAPER, "combinations", "skewed", config, (), (("offered_load", 0.3),)
        ).file_stem()
        summary = json.loads((out / "runs" / "combos" / f"{stem}.json").read_text())
        return summary["latency_us"]["all"]["mean"]

    # The interaction table's PIQ + Venice cell, recomputed from the two singles and the pair.
    base = latency("baseline")
    ratios = {c: latency(c) / base for c in ("piq", "venice", "piq+venice")}
    interaction = ratios["piq+venice"] / (ratios["piq"] * ratios["venice"])
    row = next(line for line in page.splitlines() if line.startswith("| PIQ + Venice |"))
    shown = re.findall(r"([0-9.]+) \(([0-9.]+)\)", row)
    assert len(shown) == 1, row
    assert float(shown[0][0]) == pytest.approx(interaction, abs=6e-4)
    assert float(shown[0][1]) == pytest.approx(ratios["piq+venice"], abs=6e-4)
    # Every combination of two or more has its finding, and the claims their verdicts.
    findings = page.split("## Findings")[1].split("## ")[0]
    assert findings.count("- **") == sum(len(c) > 1 for c in combos.combinations())
    for claim in ("Venice: orthogonal", "VIOS: usable concurrently", "SOS: QSL's and WHM's"):
        line = next(x for x in page.splitlines() if claim in x)
        assert line.rstrip(" |").rsplit("| ", 1)[1] in ("agree", "disagree"), line
    assert (out / "figures" / "combos-interaction.png").is_file()
    assert not math.isnan(interaction)
