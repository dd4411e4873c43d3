"""Figures (matplotlib, Agg backend: no display, byte-stable output) and report.html."""

from __future__ import annotations

import base64
import html
import io
import os
import re
from collections.abc import Sequence
from pathlib import Path

from flashlane.reproduce._core import VERDICT_RULE, Figure

# SVG ids and PNG metadata carry no date or random id, so the same data draws the same bytes.
_SVG_META = {"Date": None}
_PNG_META = {"Software": None}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "flashlane"
    import matplotlib.pyplot as plt

    return plt


#: Inches of figure: width, and height without the caption (which adds its own lines).
_SIZE = (8.0, 4.4)
_CAPTION_WIDTH = 150
#: The smallest change (as a ratio) a figure of ratios to a baseline shows either side of it.
_MIN_CHANGE = 0.02
#: The paper's values: black diamonds, white-edged so they show on a bar of any colour.
_PAPER_MARK = {"marker": "D", "color": "black", "markeredgecolor": "white", "markersize": 7}


def draw(figure: Figure) -> tuple[bytes, bytes]:
    """The figure as (PNG bytes, SVG bytes): our series in colour, the paper's values as black
    diamonds (its bounds as dotted lines), the legend beside the axes."""
    plt = _pyplot()
    fig = render(figure)
    try:
        png, svg = io.BytesIO(), io.BytesIO()
        fig.savefig(png, format="png", metadata=_PNG_META)
        fig.savefig(svg, format="svg", metadata=_SVG_META)
        return png.getvalue(), svg.getvalue()
    finally:
        plt.close(fig)


def render(figure: Figure):
    """The matplotlib figure of `figure` (the caller closes it): the title, the axes, the
    legend outside them on the right (it covers no bar or line), the caption at the foot."""
    plt = _pyplot()
    caption = _wrap(figure.full_caption(), _CAPTION_WIDTH)
    lines = caption.count("\n") + 1
    # The caption's lines (6 pt type) below the layout's box.
    foot = (lines * 8.0 + 8.0) / 72.0
    height = _SIZE[1] + foot
    fig = plt.figure(figsize=(_SIZE[0], height), dpi=100, layout="constrained")
    fig.get_layout_engine().set(rect=(0.0, foot / height, 1.0, 1.0 - foot / height))
    ax = fig.add_subplot()
    if figure.kind == "bars":
        _bars(ax, figure)
    else:
        _lines(ax, figure)
    for name, level in figure.paper_levels.items():
        ax.axhline(level, color="black", linestyle=":", linewidth=1.2, label=f"paper: {name}")
    if figure.baseline:
        _centre_on_baseline(ax, figure)
    ax.set_title(figure.title, fontsize=11)
    ax.set_xlabel(figure.xlabel)
    ax.set_ylabel(figure.ylabel)
    ax.grid(True, axis="y", alpha=0.3)
    handles, labels = _unique_legend(ax)
    if handles:
        # Right of the axes (and of the percent axis): it covers no bar, line or title.
        fig.legend(handles, labels, loc="outside right upper", fontsize=7, frameon=False)
    fig.text(0.01, 0.01, caption, fontsize=6, va="bottom")
    return fig


def _unique_legend(ax) -> tuple[list, list[str]]:
    """The axes' legend entries, each label once (every paper diamond is "paper")."""
    seen: dict[str, object] = {}
    for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
        seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def _values(figure: Figure) -> list[float]:
    """Every number the axes show: ours, the paper's values and levels."""
    found = [
        v
        for series in (figure.series, figure.paper_series)
        for values in series.values()
        for v in values
        if v is not None and v == v
    ]
    return found + list(figure.paper_levels.values())


def _centre_on_baseline(ax, figure: Figure) -> None:
    """A figure of ratios to a baseline: the axis spans the values (ours and the paper's) and
    the baseline 1.0 with room on both sides (at least +-2 %, never below 0), so that a change
    of a few tenths of a percent is a visible bar; a line at 1.0 and the change in percent on
    a second axis."""
    values = [*_values(figure), 1.0 - _MIN_CHANGE, 1.0 + _MIN_CHANGE]
    low, high = min(values), max(values)
    pad = 0.08 * (high - low)
    ax.set_ylim(max(low - pad, 0.0), high + pad)
    ax.axhline(1.0, color="black", linewidth=0.8, zorder=0.5)
    percent = ax.secondary_yaxis(
        "right", functions=(lambda r: 100.0 * (r - 1.0), lambda c: 1.0 + c / 100.0)
    )
    percent.set_ylabel(f"change vs {figure.baseline} (%)")


def _drawn_series(figure: Figure) -> dict[str, list[float | None]]:
    """Our series as drawn: a ratio figure leaves out the baseline's own series (1.0
    throughout: the line at 1.0 is it)."""
    return {
        name: values
        for name, values in figure.series.items()
        if not (
            name.lower() == (figure.baseline or "").lower()
            and all(v in (None, 1.0) for v in values)
        )
    }


def _bars(ax, figure: Figure) -> None:
    series = _drawn_series(figure)
    names = list(series)
    count = max(1, len(names))
    width = 0.8 / count
    # Bars of a ratio start at the baseline (1.0): a change of a few percent is a visible bar.
    base = 1.0 if figure.baseline else 0.0
    x = range(len(figure.categories))
    for i, name in enumerate(names):
        heights = [float("nan") if v is None else v - base for v in series[name]]
        offsets = [xi - 0.4 + width * (i + 0.5) for xi in x]
        drawn = ax.bar(offsets, heights, width, bottom=base, label=f"ours: {name}")
        if figure.baseline:
            # Edged in their own colour: a bar of no change is a coloured dash on the baseline.
            for bar in drawn:
                bar.set_edgecolor(bar.get_facecolor())
                bar.set_linewidth(1.5)
    for name, values in figure.paper_series.items():
        # On the bars of the series it compares with, else across the category's group.
        target = name if name in series else (names[0] if len(names) == 1 else None)
        label = "paper" if name in series else f"paper: {name}"
        for xi, value in zip(x, values, strict=True):
            if value is None:
                continue
            if target is None:
                ax.hlines(value, xi - 0.4, xi + 0.4, color="black", linewidth=1.5, zorder=4)
                centre = xi
            else:
                centre = xi - 0.4 + width * (names.index(target) + 0.5)
            ax.plot([centre], [value], linestyle="none", zorder=5, label=label, **_PAPER_MARK)
    ax.set_xticks(list(x))
    ax.set_xticklabels(figure.categories, rotation=20, ha="right", fontsize=7)


def _lines(ax, figure: Figure) -> None:
    x = [float(c) for c in figure.categories]
    colours: dict[str, str] = {}
    drawn = _drawn_series(figure)
    # Solid lines first, so that a dashed one can take the colour of the line it names.
    for name in sorted(drawn, key=lambda n: n in figure.dashed):
        ys = [float("nan") if v is None else v for v in drawn[name]]
        style: dict = {"marker": "o"}
        if name in figure.dashed:
            style = {"marker": "s", "linestyle": "--", "color": colours.get(figure.dashed[name])}
        (line,) = ax.plot(x, ys, label=f"ours: {name}", **style)
        colours[name] = line.get_color()
    for name, values in figure.paper_series.items():
        ys = [float("nan") if v is None else v for v in values]
        ax.plot(x, ys, linestyle="--", label=f"paper: {name}", zorder=5, **_PAPER_MARK)
    if figure.log_x:
        ax.set_xscale("log", base=2)
    ax.set_xticks(x)
    ax.set_xticklabels(figure.categories)


def _inline(text: str) -> str:
    """`text` as HTML, its Markdown code spans (`piq-map-read`) as <code> (claim texts and
    section names are written for claims.md and docs/results too)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], cls: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 70em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
code { font-size: 0.9em; }
.agree { background: #d9f2d9; } .direction { background: #fff3c4; }
.disagree { background: #f7d4d4; } .nodata { background: #eee; }
img { max-width: 100%; border: 1px solid #ddd; }
details { margin-bottom: 2em; }
p.gaps { margin-top: 0.2em; font-size: 0.9em; }
"""


def anchor(heading: str) -> str:
    """The anchor a Markdown heading gets on GitHub (and most renderers): lower case, the
    punctuation dropped, spaces as hyphens (`Why, on this platform` -> `why-on-this-platform`)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def results_page(paper: str) -> str:
    """The page with the reasons for a paper's gaps, from the repository's root."""
    return f"docs/results/{paper}.md"


def gaps_link(figure: Figure, repo: Path | None, out: Path) -> str:
    """The line under a figure that names (and links, when the repository's page is there)
    the section of docs/results/PAPER.md with the reasons for its gaps."""
    page = results_page(figure.paper)
    where = page + (f", section \u201c{figure.gaps}\u201d" if figure.gaps else "")
    text = _inline(where)
    if repo is not None and (repo / page).is_file():
        href = Path(os.path.relpath(repo / page, out)).as_posix()
        if figure.gaps:
            href += "#" + anchor(figure.gaps)
        text = f'<a href="{html.escape(href)}">{text}</a>'
    return f'<p class="gaps">Why ours differs from the paper: {text}.</p>'


def render_html(
    title: str,
    papers: Sequence[tuple[str, str]],
    figures: Sequence[Figure],
    pngs: dict[str, bytes],
    command: str,
    *,
    repo: Path | None = None,
    out: Path = Path("."),
) -> str:
    """report.html: per figure our plot (a data URI: no file or network fetch needed), a link
    to the reasons for its gaps (docs/results/PAPER.md in `repo`, relative to `out`, where
    report.html is written), the paper's claims beside ours with the computed verdict, and
    the command of every point."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p>Produced by <code>{html.escape(command)}</code>. Verdict rule: "
        f"{html.escape(VERDICT_RULE)} Every number of ours is in <code>runs.csv</code>; "
        "the summary keys are defined in <code>docs/summary.md</code>.</p>",
    ]
    for paper, paper_title in papers:
        parts.append(f'<h2 id="{paper}">{html.escape(paper_title)}</h2>')
        for figure in (f for f in figures if f.paper == paper):
            key = f"{figure.paper}-{figure.id}"
            data = base64.b64encode(pngs[key]).decode("ascii")
            parts.append(f'<h3 id="{key}">{html.escape(figure.title)}</h3>')
            parts.append(
                f'<figure><img alt="{html.escape(figure.title)}" '
                f'src="data:image/png;base64,{data}"><figcaption>'
                f"{html.escape(figure.full_caption())} Files: <code>{key}.png</code>, "
                f"<code>{key}.svg</code>.</figcaption></figure>"
            )
            parts.append(gaps_link(figure, repo, out))
            rows = []
            for claim in figure.claims:
                verdict = claim.verdict()
                rows.append(
                    [
                        _inline(claim.text),
                        html.escape(claim.paper_text()),
                        html.escape(claim.ours_text()),
                        f'<span class="{verdict.replace(" ", "")}">{verdict}</span>',
                        _inline(claim.where or NOT_MAPPED),
                    ]
                )
            header = ["paper's claim", "paper", "ours", "verdict", WHERE_HEADER]
            parts.append(_table(header, rows, "claims"))
            commands = [
                [
                    html.escape(p.workload),
                    html.escape(p.configuration),
                    html.escape(", ".join(f"{k}={v}" for k, v in p.tags)),
                    f"<code>{html.escape(p.command())}</code>",
                ]
                for p in figure.points
            ]
            parts.append(
                f"<details><summary>{len(commands)} runs and the command of each</summary>"
                + _table(["workload", "configuration", "tags", "command"], commands, "points")
                + "</details>"
            )
    parts.append("</body></html>\n")
    return "\n".join(parts)


#: The claims table's last column: the sentence of the effect map that covers a claim.
WHERE_HEADER = "where ours reaches the paper's value"
NOT_MAPPED = "not mapped"


def claims_markdown(figures: Sequence[Figure], command: str) -> str:
    """claims.md: every claim of the report beside ours, the verdict, and where on an effect map
    ours reaches the paper's value (the table of docs/reproducing.md, "Verdicts")."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [
        f"Produced by `{command}`. Verdict rule: {VERDICT_RULE}",
        "",
        f"| paper | claim | paper | ours | verdict | {WHERE_HEADER} |",
        "|---|---|---|---|---|---|",
    ]
    for figure in figures:
        for claim in figure.claims:
            row = [
                figure.paper,
                claim.text,
                claim.paper_text(),
                claim.ours_text(),
                claim.verdict(),
                claim.where or NOT_MAPPED,
            ]
            lines.append("| " + " | ".join(cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def write_figure_files(out: Path, figure: Figure, png: bytes, svg: bytes) -> None:
    key = f"{figure.paper}-{figure.id}"
    (out / f"{key}.png").write_bytes(png)
    (out / f"{key}.svg").write_bytes(svg)
