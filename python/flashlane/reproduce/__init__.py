"""Reproduce the five papers' headline figures: ``flashlane reproduce PAPER`` or
``python -m flashlane.reproduce PAPER`` or :func:`reproduce`.

Each paper has a module here (``piq``, ``pass_``, ``vios``, ``sos``, ``venice``) with its
experiment set (``points(quick)``) and its figures and claims (``figures(runs, quick)``). This
package runs the points, then writes into the output folder: ``runs.csv`` (one row per run),
``runs/<paper>/*.json`` (the summaries), ``<paper>-<figure>.png`` and ``.svg``, and
``report.html``. See docs/reproducing.md.
"""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from flashlane.reproduce._core import (
    Point,
    ReproduceError,
    Run,
    find_traces,
    plain_progress,
    run_points,
    runs_csv,
)

__all__ = ["PAPERS", "ReproduceError", "reproduce"]

#: Paper name -> module name, in the report's order.
PAPERS = {"piq": "piq", "pass": "pass_", "vios": "vios", "sos": "sos", "venice": "venice"}


def paper_module(paper: str) -> ModuleType:
    if paper not in PAPERS:
        known = ", ".join([*PAPERS, "all"])
        raise ReproduceError(f"unknown paper {paper!r}; known: {known}")
    return importlib.import_module(f"flashlane.reproduce.{PAPERS[paper]}")


def _prepare_out(out: Path) -> tuple[Path, bool]:
    """Check that `out` can be written before any run starts. Returns (out, created)."""
    existed = out.exists()
    if existed and not out.is_dir():
        raise ReproduceError(f"--out {out}: exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".probe-"):
            pass
    except OSError as e:
        if not existed and out.exists():
            shutil.rmtree(out, ignore_errors=True)
        raise ReproduceError(f"--out {out}: cannot write there ({e.strerror or e})") from None
    return out, not existed


def _progress(total: int):
    """A tqdm bar on a terminal, else one plain line per finished run."""
    if sys.stderr.isatty():
        try:
            from tqdm import tqdm
        except ImportError:
            return plain_progress, lambda: None
        bar = tqdm(total=total, unit="run", file=sys.stderr)

        def update(done: int, _total: int, point: Point) -> None:
            bar.set_description(f"{point.paper} {point.figure}")
            bar.update(1)

        return update, bar.close
    return plain_progress, lambda: None


def reproduce(
    paper: str,
    out: str | os.PathLike[str] = "out/reproduce",
    *,
    quick: bool = False,
    jobs: int | None = None,
    client: Any = None,
    traces: str | os.PathLike[str] | None = None,
    command: str | None = None,
) -> dict[str, Any]:
    """Run one paper's experiment set (or ``"all"``) and write its CSV, summaries, figures and
    report into `out`. Returns ``{"runs": n, "figures": [...], "verdicts": {...}}``.

    The runs go through :func:`flashlane.sweep.run_points`, the engine of
    :func:`flashlane.sweep`: a local process pool of `jobs` workers (default 2; 1 runs them in
    this process), or, given a Dask ``distributed.Client`` as `client`, that cluster (its
    workers must see the traces folder at the same path). The results do not depend on where
    the runs go.

    Everything that can be wrong with the inputs (unknown paper, unwritable `out`, no traces
    folder, a run the engine cannot take) raises :class:`ReproduceError` before any run
    starts; a failing run removes the output folder when this call created it."""
    names = list(PAPERS) if paper == "all" else [paper]
    modules = [paper_module(name) for name in names]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ReproduceError(
            'the figures need matplotlib: pip install "flashlane[reproduce]"'
        ) from None
    trace_dir = find_traces(traces)
    out_dir, created = _prepare_out(Path(out))
    jobs = jobs or min(2, os.cpu_count() or 1)
    command = command or (
        f"flashlane reproduce {paper}" + (" --quick" if quick else "") + f" --out {out}"
    )
    try:
        return _reproduce(names, modules, out_dir, quick, jobs, client, trace_dir, command)
    except BaseException:
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise


def _reproduce(
    names: list[str],
    modules: list[ModuleType],
    out: Path,
    quick: bool,
    jobs: int,
    client: Any,
    traces: Path,
    command: str,
) -> dict[str, Any]:
    from flashlane.reproduce._report import draw, render_html, write_figure_files

    points = [p for module in modules for p in module.points(quick)]
    update, close = _progress(len(points))
    try:
        summaries = run_points(points, traces=traces, jobs=jobs, client=client, progress=update)
    finally:
        close()
    runs = [Run(p, s) for p, s in zip(points, summaries, strict=True)]
    figures = []
    for name, module in zip(names, modules, strict=True):
        figures += module.figures([r for r in runs if r.point.paper == name], quick)

    import json

    for run in runs:
        folder = out / "runs" / run.point.paper
        folder.mkdir(parents=True, exist_ok=True)
        text = json.dumps(run.summary, indent=1, sort_keys=True) + "\n"
        (folder / f"{run.point.file_stem()}.json").write_text(text)
        for name, text in run.point.files:
            (out / "specs").mkdir(exist_ok=True)
            (out / "specs" / name).write_text(text)
    (out / "runs.csv").write_text(runs_csv(runs))
    # One CSV per paper as well: `reproduce all` and `reproduce PAPER` write the same bytes.
    for name in names:
        paper_runs = [r for r in runs if r.point.paper == name]
        (out / "runs" / f"{name}.csv").write_text(runs_csv(paper_runs))
    pngs = {}
    for figure in figures:
        png, svg = draw(figure)
        write_figure_files(out, figure, png, svg)
        pngs[f"{figure.paper}-{figure.id}"] = png
    titles = [(name, module.TITLE) for name, module in zip(names, modules, strict=True)]
    title = "flashlane: the papers reproduced" + (" (quick set)" if quick else "")
    (out / "report.html").write_text(render_html(title, titles, figures, pngs, command))
    verdicts = {f"{f.paper}-{f.id}": [(c.text, c.verdict()) for c in f.claims] for f in figures}
    return {
        "runs": len(runs),
        "figures": [f"{f.paper}-{f.id}" for f in figures],
        "verdicts": verdicts,
        "points": {f"{f.paper}-{f.id}": len(f.points) for f in figures},
    }
