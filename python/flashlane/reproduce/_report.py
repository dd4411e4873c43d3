"""Figures (matplotlib, Agg backend: no display, byte-stable output) and report.html."""

from __future__ import annotations

import base64
import html
import io
import math
import os
import re
from collections.abc import Callable, Sequence
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
_SIZE = (9.5, 4.6)
#: Type sizes (pt): the caption is never smaller than the tick labels (issue 31).
_TICK_PT = 8
_CAPTION_PT = 8
_CAPTION_WIDTH = 150
#: An open-loop overload point of a line (the baseline falls behind its arrivals): hollow.
_OVERLOAD_MARK = {"markerfacecolor": "white", "markersize": 7, "markeredgewidth": 1.6}
OVERLOAD_LABEL = "hollow marker: overload (the baseline falls behind its arrivals)"
OVERLOAD_CELL_LABEL = "hatched cell: that run falls behind its arrivals (an overload)"
#: A matrix's colour scale: saturated beyond this ratio (and its inverse); the ticks it marks.
_MATRIX_SATURATION = 4.0
_MATRIX_TICKS = (0.25, 0.5, 0.67, 0.8, 0.9, 0.95, 1.0, 1.05, 1.11, 1.25, 1.5, 2.0, 4.0)
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
    note = _wrap(figure.note, _CAPTION_WIDTH - 4) if figure.note else ""
    note_lines = note.count("\n") + 1 if note else 0
    # The caption's lines (_CAPTION_PT type, 1.25 line spacing) and the note's, in its box,
    # below the layout's box.
    line_in = _CAPTION_PT * 1.25 / 72.0
    foot = (lines + note_lines) * line_in + (22.0 if note else 10.0) / 72.0
    height = _SIZE[1] + foot
    fig = plt.figure(figsize=(_SIZE[0], height), dpi=100, layout="constrained")
    fig.get_layout_engine().set(rect=(0.0, foot / height, 1.0, 1.0 - foot / height))
    ax = fig.add_subplot()
    if figure.kind == "bars":
        _bars(ax, figure)
    elif figure.kind == "matrix":
        _matrix(ax, figure)
    else:
        _lines(ax, figure)
    for name, level in figure.paper_levels.items():
        ax.axhline(level, color="black", linestyle=":", linewidth=1.2, label=f"paper: {name}")
        # Its claim on the line itself, at the right end (the legend says it too).
        ax.annotate(
            f"paper: {name}",
            (1.0, level),
            xycoords=("axes fraction", "data"),
            xytext=(-3, 2),
            textcoords="offset points",
            fontsize=_TICK_PT,
            ha="right",
            va="bottom",
            zorder=6,
            bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none"},
        )
    if figure.baseline and figure.kind != "matrix":
        _centre_on_baseline(ax, figure)
    ax.set_title(_wrap(figure.title, 72), fontsize=11)
    ax.set_xlabel(figure.xlabel)
    ax.set_ylabel(figure.ylabel)
    ax.tick_params(labelsize=_TICK_PT)
    for child in ax.child_axes:
        child.tick_params(labelsize=_TICK_PT)
    if figure.kind != "matrix":
        ax.grid(True, axis="y", alpha=0.3)
    handles, labels = _unique_legend(ax)
    if handles:
        # Right of the axes (and of the percent axis): it covers no bar, line or title.
        fig.legend(handles, labels, loc="outside right upper", fontsize=7, frameon=False)
    fig.text(0.01, 0.01, caption, fontsize=_CAPTION_PT, va="bottom")
    if note:
        # Under the axes, above the caption: what would otherwise look wrong in the plot.
        fig.text(
            0.012,
            (lines * line_in + 14.0 / 72.0) / height,
            note,
            fontsize=_CAPTION_PT,
            va="bottom",
            bbox={"boxstyle": "round", "facecolor": "#fff8dc", "edgecolor": "#999"},
        )
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
        label = paper_label(figure, name)
        for xi, value in zip(x, values, strict=True):
            if value is None:
                continue
            if target is None:
                ax.hlines(value, xi - 0.4, xi + 0.4, color="black", linewidth=1.5, zorder=4)
                centre = xi
            else:
                centre = xi - 0.4 + width * (names.index(target) + 0.5)
            ax.plot([centre], [value], linestyle="none", zorder=5, label=label, **_PAPER_MARK)
            _value_text(ax, figure, centre, value)
    ax.set_xticks(list(x))
    # Many categories (PIQ's 15 workloads) lean further, so that their names do not touch.
    rotation = 20 if len(figure.categories) <= 8 else 35
    ax.set_xticklabels(figure.categories, rotation=rotation, ha="right", fontsize=_TICK_PT)


def _matrix(ax, figure: Figure) -> None:
    """A matrix of ratios to the baseline: a row per series, a column per category, each cell
    coloured by its value (green below 1, red above, on a log scale symmetric around 1, so
    that x0.5 and x2 are as far from 1; saturated beyond x4 and x1/4) and labelled with it; a
    cell of a point marked in ``figure.overloaded`` is hatched."""
    import matplotlib.colors as colors
    import matplotlib.ticker as ticker
    from matplotlib.patches import Rectangle

    names = list(figure.series)
    values = [[float("nan") if v is None else v for v in figure.series[n]] for n in names]
    present = [v for row in values for v in row if v == v and v > 0]
    reach = max([abs(math.log(v)) for v in present] + [math.log(1.0 + _MIN_CHANGE)])
    reach = min(reach, math.log(_MATRIX_SATURATION))
    norm = colors.LogNorm(vmin=math.exp(-reach), vmax=math.exp(reach))
    image = ax.imshow(values, cmap="RdYlGn_r", norm=norm, aspect="auto")
    for row, name in enumerate(names):
        flags = figure.overloaded.get(name, [])
        for column, value in enumerate(values[row]):
            text = "-" if value != value else f"{value:.2f}"
            ax.text(column, row, text, ha="center", va="center", fontsize=_TICK_PT)
            if column < len(flags) and flags[column]:
                ax.add_patch(
                    Rectangle((column - 0.5, row - 0.5), 1, 1, fill=False, hatch="//", alpha=0.4)
                )
    ax.set_xticks(range(len(figure.categories)))
    ax.set_xticklabels(figure.categories, fontsize=_TICK_PT)
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=_TICK_PT)
    bar = ax.figure.colorbar(image, ax=ax, fraction=0.04)
    bar.set_label(f"ratio (1 = {figure.baseline or 'no change'})", fontsize=_TICK_PT)
    low, high = math.exp(-reach), math.exp(reach)
    marks: list[float] = []
    # From 1 outwards on each side, each mark at least a sixth of the scale from the last.
    for side in (
        sorted(t for t in _MATRIX_TICKS if t >= 1.0),
        sorted((t for t in _MATRIX_TICKS if t < 1.0), reverse=True),
    ):
        last = None if side[0] >= 1.0 else 1.0
        for m in side:
            inside = low * 0.999 <= m <= high * 1.001
            if inside and (last is None or abs(math.log(m / last)) >= reach / 3):
                marks.append(m)
                last = m
    bar.ax.yaxis.set_major_locator(ticker.FixedLocator(marks))
    bar.ax.yaxis.set_minor_locator(ticker.NullLocator())
    bar.ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:.3g}"))
    bar.ax.tick_params(labelsize=_TICK_PT)
    if any(any(flags) for flags in figure.overloaded.values()):
        ax.add_patch(Rectangle((0, 0), 0, 0, fill=False, hatch="//", label=OVERLOAD_CELL_LABEL))


def paper_label(figure: Figure, name: str) -> str:
    """The legend text of a paper series: "paper: " and the figure's own label for it (the
    claim it draws), else its name."""
    return f"paper: {figure.paper_labels.get(name, name)}"


def _value_text(ax, figure: Figure, x: float, value: float) -> None:
    """The paper's number beside its diamond: the change in percent on a ratio figure."""
    text = f"{100 * (value - 1):+.1f} %" if figure.baseline else f"{value:.3g}"
    ax.annotate(
        text,
        (x, value),
        xytext=(6, 0),
        textcoords="offset points",
        fontsize=_TICK_PT,
        va="center",
        ha="left",
        zorder=6,
        bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none"},
    )


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
        flags = figure.overloaded.get(name, [])
        hollow = [(xi, y) for xi, y, bad in zip(x, ys, flags, strict=False) if bad and y == y]
        if hollow:
            ax.plot(
                [p[0] for p in hollow],
                [p[1] for p in hollow],
                linestyle="none",
                marker=style["marker"],
                markeredgecolor=line.get_color(),
                zorder=4,
                **_OVERLOAD_MARK,
            )
    if any(any(flags) for flags in figure.overloaded.values()):
        # One legend entry for every hollow marker.
        ax.plot(
            [],
            [],
            linestyle="none",
            marker="o",
            markeredgecolor="black",
            label=OVERLOAD_LABEL,
            **_OVERLOAD_MARK,
        )
    for name, values in figure.paper_series.items():
        ys = [float("nan") if v is None else v for v in values]
        ax.plot(x, ys, linestyle="--", label=paper_label(figure, name), zorder=5, **_PAPER_MARK)
        for xi, y in zip(x, ys, strict=True):
            if y == y:
                _value_text(ax, figure, xi, y)
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
section.why { border-left: 3px solid #ccc; padding-left: 1em; margin-bottom: 2em; }
section.why table { font-size: 0.8em; }
"""


def anchor(heading: str) -> str:
    """The anchor a Markdown heading gets on GitHub (and most renderers): lower case, the
    punctuation dropped, spaces as hyphens (`Why, on this platform` -> `why-on-this-platform`)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def results_page(paper: str) -> str:
    """The page with the reasons for a paper's gaps, from the repository's root."""
    return f"docs/results/{paper}.md"


def section_markdown(page_text: str, heading: str | None) -> str | None:
    """The section of a Markdown page under `heading` (to the next heading of its level or
    higher), heading included; the whole page for None; None when no heading matches."""
    if heading is None:
        return page_text
    lines = page_text.splitlines()
    fence = False
    start = level = None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fence = not fence
        if fence or not line.startswith("#"):
            continue
        hashes = len(line) - len(line.lstrip("#"))
        if start is None:
            if line[hashes:].strip() == heading:
                start, level = i, hashes
        elif hashes <= level:
            return "\n".join(lines[start:i])
    return None if start is None else "\n".join(lines[start:])


def _md_inline(text: str, link: Callable[[str], str]) -> str:
    """Markdown inline markup as HTML: code spans, images, links, bold, italics (escaped
    first)."""
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 1:
            out.append(f"<code>{html.escape(part[1:-1])}</code>")
            continue
        part = html.escape(part, quote=False)
        # An image (a results page's key figure), then links.
        part = re.sub(
            r"!\[([^\]]*)\]\(([^)\s]+)\)",
            lambda m: (
                f'<img alt="{m.group(1).replace(chr(34), "&quot;")}" '
                f'src="{html.escape(link(m.group(2)))}">'
            ),
            part,
        )
        part = re.sub(
            r"\[([^\]]+)\]\(([^)\s]+)\)",
            lambda m: f'<a href="{html.escape(link(m.group(2)))}">{m.group(1)}</a>',
            part,
        )
        part = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", part)
        part = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<em>\1</em>", part)
        out.append(part)
    return "".join(out)


_LIST_ITEM = re.compile(r"^(\s*)([-*]|\d+\.|[A-Z]\.)\s+(.*)$")


def markdown_html(
    text: str,
    link: Callable[[str], str] = lambda url: url,
    shift: int = 2,
    id_prefix: str = "",
) -> str:
    """A small Markdown renderer for the results pages' sections (headings, paragraphs, lists,
    tables, code blocks, inline code, links, bold, italics): enough to read them in the report
    without a browser extension. Headings move down by `shift` levels and get the id
    `id_prefix` + their GitHub anchor (unique in a report that holds sections of several
    pages); `link` rewrites link targets (relative ones, to where the report is)."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append("<pre>" + html.escape("\n".join(lines[i + 1 : j])) + "</pre>")
            i = j + 1
            continue
        if line.startswith("#"):
            hashes = len(line) - len(line.lstrip("#"))
            level = min(6, hashes + shift)
            title = line[hashes:].strip()
            heading_id = id_prefix + anchor(title)
            out.append(f'<h{level} id="{heading_id}">{_md_inline(title, link)}</h{level}>')
            i += 1
            continue
        if line.lstrip().startswith("|"):
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                cells = [c.strip() for c in re.split(r"(?<!\\)\|", lines[i].strip())[1:-1]]
                if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                    rows.append([_md_inline(c.replace("\\|", "|"), link) for c in cells])
                i += 1
            head, *body = rows or [[]]
            out.append(
                "<table><thead><tr>"
                + "".join(f"<th>{c}</th>" for c in head)
                + "</tr></thead><tbody>"
                + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in body)
                + "</tbody></table>"
            )
            continue
        if _LIST_ITEM.match(line):
            marker = _LIST_ITEM.match(line).group(2)
            ordered = marker not in ("-", "*")
            items: list[str] = []
            while i < len(lines) and lines[i].strip():
                found = _LIST_ITEM.match(lines[i])
                if found and len(found.group(1)) < 2:
                    items.append(found.group(3))
                elif items:
                    items[-1] += " " + lines[i].strip()
                i += 1
                # A list continues over one blank line when the next line is another item.
                if i + 1 < len(lines) and not lines[i].strip() and _LIST_ITEM.match(lines[i + 1]):
                    i += 1
            tag = "ol" if ordered else "ul"
            kind = ' type="A"' if marker[0].isalpha() else ""
            out.append(
                f"<{tag}{kind}>"
                + "".join(f"<li>{_md_inline(t, link)}</li>" for t in items)
                + f"</{tag}>"
            )
            continue
        paragraph = []
        while (
            i < len(lines)
            and lines[i].strip()
            and not lines[i].startswith(("#", "```"))
            and not lines[i].lstrip().startswith("|")
            and not _LIST_ITEM.match(lines[i])
        ):
            paragraph.append(lines[i].strip())
            i += 1
        out.append("<p>" + _md_inline(" ".join(paragraph), link) + "</p>")
    return "\n".join(out)


def why_id(paper: str, heading: str | None) -> str:
    """The report's id of an embedded results section."""
    return f"why-{paper}-" + (anchor(heading) if heading else "page")


def why_sections(figures: Sequence[Figure], repo: Path | None, out: Path) -> dict[tuple, str]:
    """(paper, heading) -> the HTML of that section of docs/results/PAPER.md, for every section
    a figure names (``Figure.gaps``), rendered into the report so that its links work in a
    browser; absent when the repository's page or the heading is not there."""
    found: dict[tuple, str] = {}
    for figure in figures:
        key = (figure.paper, figure.gaps)
        if key in found or repo is None:
            continue
        page = repo / results_page(figure.paper)
        if not page.is_file():
            continue
        section = section_markdown(page.read_text(), figure.gaps)
        if section is None:
            continue
        prefix = why_id(*key) + "-"
        inside = {anchor(h.lstrip("#")) for h in _headings(section)}

        def link(url: str, page: Path = page, prefix: str = prefix, inside: set = inside) -> str:
            """A link of the section, from the report: an anchor of the section itself to its
            copy here, any other relative target to the repository's file."""
            if re.match(r"^[a-z]+:", url):
                return url
            path, _, fragment = url.partition("#")
            if not path and fragment in inside:
                return f"#{prefix}{fragment}"
            target = Path(os.path.relpath(page.parent / path if path else page, out)).as_posix()
            return target + (f"#{fragment}" if fragment else "")

        found[key] = markdown_html(section, link, id_prefix=prefix)
    return found


def _headings(markdown: str) -> list[str]:
    """The heading lines of a Markdown text, those inside fenced code blocks left out."""
    fence = False
    found = []
    for line in markdown.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            found.append(line)
    return found


def gaps_link(figure: Figure, repo: Path | None, out: Path, embedded: bool = False) -> str:
    """The line under a figure that names the section of docs/results/PAPER.md with the reasons
    for its gaps, and links to it: to its copy further down the report when `embedded`, else to
    the page itself (when the repository's page is there)."""
    page = results_page(figure.paper)
    where = page + (f", section \u201c{figure.gaps}\u201d" if figure.gaps else "")
    text = _inline(where)
    if embedded:
        text = f'<a href="#{why_id(figure.paper, figure.gaps)}">{text}</a>'
    elif repo is not None and (repo / page).is_file():
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
    whys = why_sections(figures, repo, out)
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
            parts.append(gaps_link(figure, repo, out, (paper, figure.gaps) in whys))
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
        sections = [(k, v) for k, v in whys.items() if k[0] == paper]
        if sections:
            parts.append(
                f"<h3>Why ours differs: the sections of <code>{results_page(paper)}</code> the "
                "figures above link to</h3>"
            )
        for (_, heading), body in sections:
            parts.append(
                f'<section class="why" id="{why_id(paper, heading)}">'
                f'<p class="gaps">From <code>{results_page(paper)}</code>'
                + (f", section \u201c{_inline(heading)}\u201d" if heading else "")
                + f":</p>{body}</section>"
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
