"""Figures (matplotlib, Agg backend: no display, byte-stable output) and report.html."""

from __future__ import annotations

import base64
import html
import io
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


def draw(figure: Figure) -> tuple[bytes, bytes]:
    """The figure as (PNG bytes, SVG bytes): our series solid, the paper's hatched/dashed."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.0, 4.2), dpi=100)
    try:
        if figure.kind == "bars":
            _bars(ax, figure)
        else:
            _lines(ax, figure)
        ax.set_title(figure.title, fontsize=11)
        ax.set_xlabel(figure.xlabel)
        ax.set_ylabel(figure.ylabel)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7, ncols=2, loc="best")
        fig.text(0.01, 0.01, _wrap(figure.caption, 150), fontsize=6, va="bottom")
        fig.tight_layout(rect=(0, 0.06, 1, 1))
        png, svg = io.BytesIO(), io.BytesIO()
        fig.savefig(png, format="png", metadata=_PNG_META)
        fig.savefig(svg, format="svg", metadata=_SVG_META)
        return png.getvalue(), svg.getvalue()
    finally:
        plt.close(fig)


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def _bars(ax, figure: Figure) -> None:
    names = [*figure.series, *figure.paper_series]
    count = max(1, len(names))
    width = 0.8 / count
    x = range(len(figure.categories))
    for i, name in enumerate(names):
        paper = name in figure.paper_series
        values = (figure.paper_series if paper else figure.series)[name]
        heights = [float("nan") if v is None else v for v in values]
        offsets = [xi - 0.4 + width * (i + 0.5) for xi in x]
        ax.bar(
            offsets,
            heights,
            width,
            label=f"paper: {name}" if paper else f"ours: {name}",
            hatch="//" if paper else None,
            fill=not paper,
            edgecolor="black" if paper else None,
        )
    ax.set_xticks(list(x))
    ax.set_xticklabels(figure.categories, rotation=20, ha="right", fontsize=7)
    if figure.ylabel.endswith("(ratio)"):
        ax.axhline(1.0, color="black", linewidth=0.8)


def _lines(ax, figure: Figure) -> None:
    x = [float(c) for c in figure.categories]
    for name, values in figure.series.items():
        ys = [float("nan") if v is None else v for v in values]
        ax.plot(x, ys, marker="o", label=f"ours: {name}")
    for name, values in figure.paper_series.items():
        ys = [float("nan") if v is None else v for v in values]
        ax.plot(x, ys, linestyle="--", marker="x", color="black", label=f"paper: {name}")
    if figure.log_x:
        ax.set_xscale("log", base=2)
    ax.set_xticks(x)
    ax.set_xticklabels(figure.categories)


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
"""


def render_html(
    title: str,
    papers: Sequence[tuple[str, str]],
    figures: Sequence[Figure],
    pngs: dict[str, bytes],
    command: str,
) -> str:
    """report.html: per figure our plot (a data URI: no file or network fetch needed), the
    paper's claims beside ours with the computed verdict, and the command of every point."""
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
                f"{html.escape(figure.caption)} Files: <code>{key}.png</code>, "
                f"<code>{key}.svg</code>.</figcaption></figure>"
            )
            rows = []
            for claim in figure.claims:
                verdict = claim.verdict()
                rows.append(
                    [
                        html.escape(claim.text),
                        html.escape(claim.paper_text()),
                        html.escape(claim.ours_text()),
                        f'<span class="{verdict.replace(" ", "")}">{verdict}</span>',
                    ]
                )
            parts.append(_table(["paper's claim", "paper", "ours", "verdict"], rows, "claims"))
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


def write_figure_files(out: Path, figure: Figure, png: bytes, svg: bytes) -> None:
    key = f"{figure.paper}-{figure.id}"
    (out / f"{key}.png").write_bytes(png)
    (out / f"{key}.svg").write_bytes(svg)
