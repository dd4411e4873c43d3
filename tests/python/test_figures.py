"""Figures that explain themselves (issue 31, item 3), checked on small hand-made Figure objects
and on the figures the paper modules build from hand-made summaries (no simulation runs):
open-loop overload points have their own marker and legend entry, every paper value drawn has
a text label, the caption is never smaller than the tick labels, PIQ Fig. 8's equal bars say
why and its workloads read as words; and report.html carries the sections of
docs/results/PAPER.md its figures link to, with anchors that work in a browser."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from flashlane.reproduce import _maps, piq, piq_map, sos_map, vios, vios_map
from flashlane.reproduce._core import Figure, Point, Run
from flashlane.reproduce._report import (
    OVERLOAD_LABEL,
    render,
    render_html,
    section_markdown,
    why_id,
)


@pytest.fixture
def drawn():
    """render(figure), drawn on its canvas; every figure is closed at the end of the test."""
    import matplotlib.pyplot as plt

    made = []

    def draw(figure: Figure):
        made.append(render(figure))
        made[-1].canvas.draw()
        return made[-1]

    yield draw
    for fig in made:
        plt.close(fig)


def line_figure(**kwargs: Any) -> Figure:
    """A map-like line figure: two lines over three loads, the paper's level at 0.85."""
    return Figure(
        "p",
        "map",
        "Where it appears",
        "The caption says where ours reaches the paper.",
        "lines",
        "offered load",
        "ours / baseline's (1 = baseline)",
        ["0.1", "0.2", "0.4"],
        {"a vs B": [0.99, 0.9, 0.3], "b vs B": [1.0, 0.95, 0.97]},
        baseline="baseline",
        log_x=True,
        **kwargs,
    )


def hollow_markers(ax) -> list[tuple[float, float]]:
    """The (x, y) of every marker drawn with a white face (an overload point)."""
    return [
        (x, y)
        for line in ax.lines
        if line.get_markerfacecolor() == "white" and line.get_label() != OVERLOAD_LABEL
        for x, y in zip(line.get_xdata(), line.get_ydata(), strict=True)
    ]


def legend_texts(fig) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_overload_points_carry_their_own_marker_and_legend_entry(drawn) -> None:
    """The point at load 0.4 of line "a" is an overload: it alone is hollow, and the legend
    says what a hollow marker means; without overloads neither is drawn."""
    fig = drawn(line_figure(overloaded={"a vs B": [False, False, True]}))
    assert hollow_markers(fig.axes[0]) == [(0.4, 0.3)]
    assert OVERLOAD_LABEL in legend_texts(fig)

    plain = drawn(line_figure())
    assert hollow_markers(plain.axes[0]) == []
    assert OVERLOAD_LABEL not in legend_texts(plain)


def test_behind_flags_follow_the_lines_they_mark() -> None:
    """_maps.behind_against keys its flags by the labels series_against gives the lines, and
    flags exactly the points whose baseline fell behind."""
    grid = _maps.Grid("hot", [1, 4], "load", [0.1, 0.5], lambda h: f"{h} hot", "load")
    found = {
        "noop": _maps.Cells({}, behind={(4, 0.5)}),
        "noop_d": _maps.Cells({}, behind={(1, 0.1), (1, 0.5)}),
    }
    names = {"noop": "NOOP", "noop_d": "NOOP-D"}
    series, _ = _maps.series_against(grid, found, names)
    flags = _maps.behind_against(grid, found, names)
    assert set(flags) == set(series)
    assert flags == {
        "1 hot vs NOOP": [False, False],
        "4 hot vs NOOP": [False, True],
        "1 hot vs NOOP-D": [True, True],
        "4 hot vs NOOP-D": [False, False],
    }


def fake_summary(latency: float, full_fraction: float = 0.0) -> dict[str, Any]:
    """A summary with the keys the maps and PIQ's figures read."""
    mean = {"mean": latency}
    return {
        "latency_us": {"read": mean, "write": mean, "all": mean},
        "sim_time_ns": 1.0,
        "host_queue": {"full_fraction": full_fraction},
        "chips": {"utilization": 0.5},
        "gc": {"runs": 0, "pages_moved": 0},
        "flash": {"programs": 10},
    }


@pytest.mark.parametrize(
    ("module", "base", "extra"),
    [(piq_map, "noop", ()), (vios_map, "noop", ()), (sos_map, "IOS", ([],))],
)
def test_every_map_marks_the_points_whose_baseline_fell_behind(module, base, extra) -> None:
    """Each map module fills Figure.overloaded from its runs: one point whose baseline's host
    queue is full half the time is hollow on every line drawn against that baseline, and on
    no other."""
    points = module.points(True)
    chosen = next(p for p in points if p.configuration == base)
    runs = [
        Run(
            p,
            fake_summary(
                1.0 + 0.01 * i,
                0.5 if (p.tags, p.configuration) == (chosen.tags, base) else 0.0,
            ),
        )
        for i, p in enumerate(points)
    ]
    figures = module.figures(runs, True, *extra)
    assert figures
    names = getattr(module, "SCHEMES", {})

    def against_base(figure: Figure, line: str) -> bool:
        """Whether `line` of `figure` is drawn against the baseline that fell behind."""
        if names:
            return line.endswith(f" vs {names[base]}")
        return figure.baseline == base

    marked = set()
    for figure in figures:
        assert set(figure.overloaded) <= set(figure.series), figure.id
        same_drive = figure.id.endswith("-gc") == (("gc", "aged") in chosen.tags)
        for line, flags in figure.overloaded.items():
            if not (same_drive and against_base(figure, line)):
                assert not any(flags), (figure.id, line)
                continue
            # The chosen point's line (its skew or rewrite distance) at its load only.
            if figure.series and any(flags):
                assert flags.count(True) == 1, (figure.id, line)
                column = figure.categories[flags.index(True)]
                assert float(column) == chosen.tag("offered_load"), (figure.id, line)
                marked.add((figure.id, line))
    # One line per figure drawn against that baseline on the fresh drive.
    expected = {
        f.id
        for f in figures
        if not f.id.endswith("-gc") and any(against_base(f, s) for s in f.series)
    }
    assert {figure for figure, _ in marked} == expected
    assert len(marked) == len(expected)


def test_every_paper_value_drawn_has_a_text_label(drawn) -> None:
    """Diamonds on bars and on lines get their number beside them, a level its claim on the
    line; the legend names the claim of each diamond series (Figure.paper_labels)."""
    bars = Figure(
        "p",
        "fig8a",
        "Fig. 8(a)",
        "caption",
        "bars",
        "workload",
        "read latency / NOOP's (1 = NOOP)",
        ["tpcc", "mean over workloads"],
        {"piq": [0.95, 0.97], "rws": [0.95, 0.97]},
        baseline="NOOP",
        paper_series={"piq": [None, 0.844]},
        paper_levels={"-28.6 % vs NOOP (abstract)": 0.714},
        paper_labels={"piq": "PIQ read latency vs NOOP, -15.6 % (abstract)"},
    )
    fig = drawn(bars)
    texts = [(t.get_text(), t.xy[1]) for t in fig.axes[0].texts]
    assert ("-15.6 %", 0.844) in texts
    assert ("paper: -28.6 % vs NOOP (abstract)", 0.714) in texts
    assert "paper: PIQ read latency vs NOOP, -15.6 % (abstract)" in legend_texts(fig)

    lines = line_figure(paper_series={"a vs B": [None, 0.8, 0.6]})
    lines.baseline = None
    texts = [(t.get_text(), t.xy[1]) for t in drawn(lines).axes[0].texts]
    assert ("0.8", 0.8) in texts and ("0.6", 0.6) in texts
    # Only the paper's values are labelled: none of ours.
    assert len(texts) == 2


def test_caption_and_note_are_at_least_the_tick_labels_size(drawn) -> None:
    figure = line_figure(note="Why the bars are equal.")
    fig = drawn(figure)
    ticks = [
        label.get_fontsize()
        for ax in (fig.axes[0], *fig.axes[0].child_axes)
        for label in (*ax.get_xticklabels(), *ax.get_yticklabels())
        if label.get_text()
    ]
    assert ticks
    caption = [t for t in fig.texts if t.get_text().startswith("The caption says")]
    note = [t for t in fig.texts if t.get_text() == "Why the bars are equal."]
    assert len(caption) == len(note) == 1
    for text in (caption[0], note[0]):
        assert text.get_fontsize() >= max(ticks)
    # The note sits between the axes and the caption, overlapping neither.
    renderer = fig.canvas.get_renderer()
    box = note[0].get_window_extent(renderer)
    assert not box.overlaps(fig.axes[0].get_window_extent(renderer))
    assert not box.overlaps(caption[0].get_window_extent(renderer))


def piq_runs(equal: bool) -> list[Run]:
    """The quick report set of PIQ with hand-made summaries: NOOP at 1.0 and RWS, PIQ_R,
    PIQ_W, PIQ at 0.9 (equal) or at 0.9, 0.88, 0.86, 0.84."""
    level = {"rws": 0.9, "piq_r": 0.88, "piq_w": 0.86, "piq": 0.84}
    runs = []
    for p in piq.points(True):
        scheme = p.configuration.split("/")[-1]
        value = 0.9 if equal and scheme in level else level.get(scheme, 1.0)
        runs.append(Run(p, fake_summary(value)))
    return runs


def test_piq_fig8_says_why_its_bars_are_equal_and_names_its_workloads() -> None:
    equal = {f.id: f for f in piq.figures(piq_runs(True), True)}
    for key in ("fig8a", "fig8b"):
        assert equal[key].note == piq.EQUAL_BARS.format(within="within 0.1 %"), key
        assert not any(re.search(r"piq_r\d+_w\d+", c) for c in equal[key].categories), key
        assert equal[key].paper_labels, key
    differ = {f.id: f for f in piq.figures(piq_runs(False), True)}
    assert differ["fig8a"].note == differ["fig8b"].note == ""
    assert piq.workload_label("piq_r484454_w15445") == "Table I, 96.9 % reads"
    assert piq.workload_label("msnfs-30s.msr.csv.gz") == "msnfs-30s (msr)"
    assert piq.workload_label("tpcc-small.mqsim") == "tpcc-small"


def test_vios_fig5_and_6_say_why_their_bars_are_equal() -> None:
    """The same for VIOS: PIQ, VIOS- and VIOS at 0.9 of NOOP (equal) or at 0.9, 0.88, 0.86."""
    level = {"piq": 0.9, "vios-": 0.88, "vios": 0.86}
    for equal in (True, False):
        runs = [
            Run(
                p,
                fake_summary(
                    0.9 if equal and p.configuration in level else level.get(p.configuration, 1.0)
                ),
            )
            for p in vios.points(True)
        ]
        figures = {f.id: f for f in vios.figures(runs, True)}
        for key in ("fig5", "fig6"):
            expected = vios.EQUAL_BARS.format(within="within 0.1 %") if equal else ""
            assert figures[key].note == expected, (key, equal)
            assert figures[key].paper_labels["vios"].startswith("VIOS "), key


PAGE = """# Paper

Intro.

## Why, on this platform

A. **Reason** with `code` and a [link](../models/x.md#rules); see [below](#detail) and
   [the next section](#next-section).

```
# not a heading: a comment in a code block
## nor this
```

### Detail

More.

![A key figure](figures/p-map.png)

## Next section

Not part of it.
"""


def test_section_markdown_finds_its_heading_and_ends_at_the_next_of_its_level() -> None:
    section = section_markdown(PAGE, "Why, on this platform")
    assert section is not None
    assert section.startswith("## Why, on this platform\n")
    # A fenced "## nor this" neither ends the section nor starts one; "### Detail" is inside.
    assert "## nor this" in section and "### Detail" in section and "More." in section
    assert "Next section" not in section
    assert section_markdown(PAGE, "nor this") is None
    assert section_markdown(PAGE, "Missing") is None
    assert section_markdown(PAGE, None) == PAGE
    # The last section runs to the end of the page.
    assert section_markdown(PAGE, "Next section").endswith("Not part of it.")


def test_report_embeds_the_linked_section_with_a_working_anchor(tmp_path: Path) -> None:
    repo, out = tmp_path / "repo", tmp_path / "repo" / "out" / "r"
    (repo / "docs" / "results").mkdir(parents=True)
    (repo / "docs" / "results" / "p.md").write_text(PAGE)
    out.mkdir(parents=True)
    linked = line_figure(gaps="Why, on this platform")
    unknown = line_figure(gaps="No such heading")
    unknown.id = "other"
    report = render_html(
        "T",
        [("p", "Paper")],
        [linked, unknown],
        {"p-map": b"png", "p-other": b"png"},
        "flashlane reproduce p",
        repo=repo,
        out=out,
    )
    target = why_id("p", "Why, on this platform")
    assert f'<a href="#{target}">' in report
    section = report.split(f'id="{target}"', 1)[1].split("</section>", 1)[0]
    assert "<strong>Reason</strong>" in section and "<code>code</code>" in section
    assert "More." in section and "Not part of it." not in section
    # Its relative links point where they pointed from docs/results/, now from `out`.
    assert 'href="../../docs/models/x.md#rules"' in section
    # An anchor inside the section leads to its copy here, one outside it to the page.
    assert f'href="#{target}-detail"' in section and f'id="{target}-detail"' in section
    assert 'href="../../docs/results/p.md#next-section"' in section
    # An image of the page (its key figures) is an image in the report, from the repository.
    assert '<img alt="A key figure" src="../../docs/results/figures/p-map.png">' in section
    # A heading the page lacks: a link to the page itself, nothing embedded.
    assert 'href="../../docs/results/p.md#no-such-heading"' in report
    assert why_id("p", "No such heading") not in report
    # Every in-page link of the report has its target, and no id is given twice.
    ids = re.findall(r'id="([^"]+)"', report)
    assert len(ids) == len(set(ids))
    for href in re.findall(r'href="#([^"]+)"', report):
        assert href in ids, href


def test_progress_names_every_coordinate_of_a_point() -> None:
    from flashlane.reproduce._core import point_name

    point = Point(
        "piq",
        "map",
        "hot64",
        "noop",
        (),
        (("hot_chips", 64), ("offered_load", 0.2)),
    )
    assert point_name(point) == "piq map hot64 noop hot_chips=64 offered_load=0.2"


def test_the_note_gives_the_largest_difference_between_near_equal_bars() -> None:
    from flashlane.reproduce._core import spread, within_text

    assert spread({"a": [1.0, 2.0], "b": [1.013, 2.0]}) == pytest.approx(0.013)
    assert within_text(0.013) == "within 1.3 %"
    assert within_text(0.0004) == "within 0.1 %"
    assert spread({"a": [1.0]}) is None
    assert spread({"a": [1.0, None], "b": [1.0, 1.0]}) is None
    near = {"rws": [1.0, 1.1], "piq": [1.013, 1.1]}
    assert "within 1.3 % of each other" in piq._equal_note(near)
    assert piq._equal_note({"rws": [1.0], "piq": [1.03]}) == ""


def test_every_committed_figure_is_small_and_shown_by_its_page() -> None:
    """docs/results/figures/ holds each paper's KEY_FIGURES (PNG, < 150 KB), each shown by an
    image link of docs/results/PAPER.md, and every image link of a results page (and the
    README's) names a file that is there."""
    from flashlane.reproduce import PAPERS, STUDIES, paper_module

    repo = Path(__file__).resolve().parents[2]
    folder = repo / "docs" / "results" / "figures"
    names = [*PAPERS, *STUDIES]
    expected = {f"{paper}-{key}.png" for paper in names for key in paper_module(paper).KEY_FIGURES}
    assert {p.name for p in folder.glob("*.png")} == expected
    for path in folder.glob("*.png"):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path.name
        assert path.stat().st_size < 150_000, path.name
    for paper in names:
        page = (
            repo / "docs" / "results" / f"{getattr(paper_module(paper), 'RESULTS_PAGE', paper)}.md"
        )
        links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text())
        names = {Path(link).name for link in links}
        assert names >= {n for n in expected if n.startswith(f"{paper}-")}, paper
        for link in links:
            assert (page.parent / link).is_file(), (paper, link)
    readme = repo / "README.md"
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme.read_text())
    assert links and all((repo / link).is_file() for link in links)
