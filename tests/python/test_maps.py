"""Effect maps (flashlane.reproduce._maps): the sentence computed from a map's data, the
"fell behind" mark, the Markdown table, and the claims' "where" filled from the maps."""

from __future__ import annotations

import pytest

from flashlane.reproduce import ReproduceError
from flashlane.reproduce._core import Claim, Figure, Point, Run, annotate
from flashlane.reproduce._maps import (
    Cells,
    Grid,
    Target,
    best,
    cells,
    fell_behind,
    markdown_table,
    where_sentence,
)

GRID = Grid("hot", [8, 1], "load", [0.1, 0.2, 0.4, 0.8], lambda h: f"{h} hot", "load")
LOWER = Target(0.8, "lower", "the paper's -20 %")


def found(rows: dict[int, list[float | None]], behind=()) -> Cells:
    return Cells(
        {(h, x): v for h, values in rows.items() for x, v in zip(GRID.xs, values, strict=True)},
        set(behind),
    )


def test_sentence_gives_the_x_ranges_per_line_and_the_best_point() -> None:
    data = found({8: [1.0, 0.9, 0.8, 0.7], 1: [0.75, 0.95, 0.6, 0.5]})
    assert where_sentence("X", GRID, data, LOWER) == (
        "X reaches the paper's -20 % with 8 hot at load 0.4-0.8; 1 hot at load 0.1, 0.4-0.8; "
        "its best is 0.50 (1 hot, load 0.8)."
    )


def test_sentence_says_nowhere_with_the_best_point() -> None:
    data = found({8: [1.0, 0.95, None, 0.9], 1: [1.0, 0.99, 0.97, 0.85]})
    assert where_sentence("X", GRID, data, LOWER) == (
        "Nowhere on the grid does X reach the paper's -20 %: its best is 0.85 (1 hot, load 0.8)."
    )


def test_sentence_counts_reached_points_whose_baseline_fell_behind() -> None:
    data = found({8: [1.0, 0.9, 0.7, 0.6], 1: [1.0, 1.0, 1.0, 1.0]}, {(8, 0.8), (1, 0.8)})
    text = where_sentence("X", GRID, data, LOWER)
    assert "with 8 hot at load 0.4-0.8 (1 of these 2 are points where the baseline falls" in text
    # The best point is taken where the baseline keeps up (0.6 is an overload's).
    assert text.endswith("its best where the baseline keeps up is 0.70 (8 hot, load 0.4).")
    everywhere = {(h, x) for h in GRID.lines for x in GRID.xs}
    overloaded = where_sentence(
        "X", GRID, found({8: [1.0, 0.9, 0.7, 0.6], 1: [1.0] * 4}, everywhere), LOWER
    )
    assert overloaded.endswith(
        "its best (every point's baseline falls behind) is 0.60 (8 hot, load 0.8)."
    )
    single = found({8: [1.0, 0.9, 0.9, 0.6], 1: [1.0] * 4}, {(8, 0.8)})
    assert "(it is a point where the baseline falls behind" in where_sentence(
        "X", GRID, single, LOWER
    )


def test_higher_is_better_targets_pick_the_largest() -> None:
    data = found({8: [1.0, 1.2, 1.5, 2.0], 1: [1.0, 3.0, None, 1.1]})
    target = Target(2.65, "higher", "2.65x")
    assert best(GRID, data, target) == (3.0, 1, 0.2)
    assert where_sentence("V", GRID, data, target).startswith(
        "V reaches 2.65x with 1 hot at load 0.2;"
    )
    assert where_sentence("V", GRID, found({8: [None] * 4, 1: [None] * 4}), target) == "No data."


def summary(sim_time_ns: int, full: float, latency: float) -> dict:
    return {
        "sim_time_ns": sim_time_ns,
        "host_queue": {"full_fraction": full},
        "latency_us": {"all": {"mean": latency}},
    }


def test_fell_behind_on_execution_time_or_a_full_host_queue() -> None:
    assert not fell_behind(summary(1_200, 0.05, 1), 1_000)
    assert fell_behind(summary(1_300, 0.0, 1), 1_000)
    assert fell_behind(summary(1_000, 0.2, 1), 1_000)


def test_cells_take_the_metric_and_mark_the_baseline_that_fell_behind() -> None:
    grid = Grid("hot", [8], "load", [0.1, 0.8], str, "load")
    runs = []
    for load, (base, ours) in {
        0.1: ((1_000, 0.0, 100.0), (1_000, 0.0, 80.0)),
        0.8: ((5_000, 0.9, 900.0), (1_100, 0.0, 90.0)),
    }.items():
        for config, values in (("base", base), ("ours", ours)):
            point = Point("p", "map", "w", config, (), (("hot", 8), ("load", load)))
            runs.append(Run(point, summary(*values)))

    def metric(configs: dict[str, Run]) -> float:
        pick = {k: r.summary["latency_us"]["all"]["mean"] for k, r in configs.items()}
        return pick["ours"] / pick["base"]

    got = cells(runs, "map", grid, metric, "base", lambda _h, _x: 1_000)
    assert got.values == {(8, 0.1): 0.8, (8, 0.8): 0.1}
    assert got.behind == {(8, 0.8)}
    assert markdown_table(grid, got, "hot", 2) == [
        "| hot | 0.1 | 0.8 |",
        "|---|---|---|",
        "| 8 | 0.80 | 0.10 \u2020 |",
    ]


def figure(claims: list[Claim], where: dict[str, str] | None = None) -> Figure:
    return Figure(
        "p", "f", "t", "c", "bars", "x", "y", ["a"], {"s": [1.0]}, claims=claims, where=where or {}
    )


def test_annotate_fills_where_from_the_maps_and_keeps_a_maps_own() -> None:
    plain = figure([Claim("A vs B", -10, -10, -5.0), Claim("C vs D", 5, 5, 1.0)])
    mapped = figure(
        [Claim("A vs B, best point", -10, -10, -12.0, where="own")],
        {"A vs B": "on the map at load 0.8"},
    )
    out = annotate([plain, mapped])
    assert [c.where for c in out[0].claims] == ["on the map at load 0.8", ""]
    assert out[1].claims[0].where == "own"


def test_annotate_refuses_a_map_that_names_no_claim() -> None:
    with pytest.raises(ReproduceError, match="names claims no figure has"):
        annotate([figure([Claim("A vs B", -10, -10, -5.0)], {"A vs C": "somewhere"})])
