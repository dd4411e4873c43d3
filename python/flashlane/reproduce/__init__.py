"""Reproduce the five papers' experiments: ``flashlane reproduce PAPER`` or
``python -m flashlane.reproduce PAPER`` or :func:`reproduce`. The one definition of each
experiment (``scripts/*_experiment.py`` are thin wrappers of it).

Each paper has a module here (``piq``, ``pass_``, ``vios``, ``sos``, ``venice``) with two
experiment sets, each in a quick and a full size:

* the report set (``points(quick)``) and its figures and claims (``figures(runs, quick)``):
  ``runs.csv`` (one row per run), ``runs/<paper>/*.json`` (the summaries),
  ``<paper>-<figure>.png`` and ``.svg``, and ``report.html``;
* the results set (``results_points(quick, options)``, ``--results``): every platform, variant
  and sweep behind docs/results/<paper>.md, and that page's Markdown tables
  (``results_markdown(runs, quick, options, command)``) in ``<paper>.md``, beside the same
  ``runs.csv`` and summaries. ``RESULTS_OPTIONS`` lists the options a module's results set
  takes (e.g. PIQ's ``platforms``).

See docs/reproducing.md.
"""

from __future__ import annotations

import csv
import importlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from flashlane.reproduce._core import (
    Option,
    Point,
    ReproduceError,
    Run,
    annotate,
    distinct_runs,
    find_traces,
    plain_progress,
    point_name,
    run_points,
    runs_csv,
)

__all__ = ["PAPERS", "STUDIES", "ReproduceError", "reproduce"]

#: Paper name -> module name, in the report's order: what ``all`` runs.
PAPERS = {"piq": "piq", "pass": "pass_", "vios": "vios", "sos": "sos", "venice": "venice"}
#: Studies across the papers, run by name only (not by ``all``, which reproduces the papers):
#: ``combos``, the five techniques alone and together (combos.py, issue 32).
STUDIES = {"combos": "combos"}


def paper_module(paper: str) -> ModuleType:
    modules = {**PAPERS, **STUDIES}
    if paper not in modules:
        known = ", ".join([*modules, "all"])
        raise ReproduceError(f"unknown paper {paper!r}; known: {known}")
    return importlib.import_module(f"flashlane.reproduce.{modules[paper]}")


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
            bar.set_description(point_name(point))
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
    results: bool = False,
    options: Mapping[str, Any] | None = None,
    reuse: bool = False,
    render_only: bool = False,
    precondition_cache: str | os.PathLike[str] | bool | None = None,
) -> dict[str, Any]:
    """Run one paper's experiment set (or ``"all"``) and write its CSV, summaries, figures and
    report into `out`. Returns ``{"runs": n, "ran": n, "reused": n, "rows": n, "figures":
    [...], "verdicts": {...}, "points": {...}, "tables": [...]}``: ``runs`` simulations in all
    (points with the same arguments share one), ``ran`` of them in this call (the count the
    progress goes to), ``reused`` taken from `out` (`reuse`, `render_only`); ``rows`` points,
    one row each in runs.csv.

    `results`: run the results set instead (every platform, variant and sweep behind
    docs/results/PAPER.md) and write that page's Markdown tables into ``out/PAPER.md`` (listed
    in ``"tables"``) in place of the figures and report; `options` (one paper only) are its
    module's ``RESULTS_OPTIONS`` by name, e.g. ``{"platforms": ["host_queue"]}`` for PIQ.

    `reuse`: a point whose summary an earlier call left in `out` (``runs/PAPER/*.json``, with
    the same command in ``runs/PAPER.csv`` and the same spec files) is not run again.
    `render_only`: run nothing; every summary must be there (e.g. to rewrite the tables after
    editing their code).

    The runs go through :func:`flashlane.sweep.run_points`, the engine of
    :func:`flashlane.sweep`: a local process pool of `jobs` workers (default 2; 1 runs them in
    this process), or, given a Dask ``distributed.Client`` as `client`, that cluster (its
    workers must see the traces folder at the same path). The results do not depend on where
    the runs go. `precondition_cache`: a directory of drive snapshots
    (:func:`flashlane.sweep.run_points`): runs that share a preconditioned drive precondition
    it once; runs.csv is the same bytes with or without it. Without one (None), on the local
    pool, the snapshots go to a temporary folder removed when the call ends; False: no cache,
    every run preconditions its own drive.

    Everything that can be wrong with the inputs (unknown paper or option, unwritable `out`,
    no traces folder, a run the engine cannot take) raises :class:`ReproduceError` before any
    run starts; a failing run removes the output folder when this call created it."""
    names = list(PAPERS) if paper == "all" else [paper]
    modules = [paper_module(name) for name in names]
    options = _check_options(paper, modules, results, options)
    if not results or any(_draws_key_figures(m, options) for m in modules):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise ReproduceError(
                'the figures need matplotlib: pip install "flashlane[reproduce]"'
            ) from None
    trace_dir = find_traces(traces)
    # The sets are built (and their options checked) before anything is written. A results
    # set that options do not narrow also runs the report set's points its key figures need
    # (those it lacks: points with the same arguments share a run).
    points = [
        p
        for module in modules
        for p in (module.results_points(quick, options) if results else module.points(quick))
    ]
    if results:
        known = {p.key() for p in points}
        points += [
            p
            for module in modules
            if _draws_key_figures(module, options)
            for p in module.points(quick)
            if p.key() not in known
        ]
    if render_only and not Path(out).is_dir():
        raise ReproduceError(f"--render-only: {out} is not the output folder of an earlier run")
    out_dir, created = _prepare_out(Path(out))
    jobs = jobs or min(2, os.cpu_count() or 1)
    command = command or (
        f"flashlane reproduce {paper}"
        + (" --results" if results else "")
        + (" --quick" if quick else "")
        + f" --out {out}"
    )
    # Runs of one drive (a paper's schemes on one workload, a map's loads) precondition it
    # once: without a cache of the caller's, a scratch one for this call on the local pool (a
    # Dask cluster's workers may not see this machine's temporary folder).
    scratch = None
    if precondition_cache is None and client is None:
        scratch = tempfile.mkdtemp(prefix="flashlane-precondition-")
        precondition_cache = scratch
    elif precondition_cache is False or precondition_cache is True:
        if precondition_cache:
            raise ReproduceError("precondition_cache: a directory, None or False, not True")
        precondition_cache = None
    try:
        return _reproduce(
            names,
            modules,
            points,
            out_dir,
            quick,
            jobs,
            client,
            trace_dir,
            command,
            results,
            options,
            reuse=reuse or render_only,
            render_only=render_only,
            precondition_cache=precondition_cache,
        )
    except BaseException:
        if created:
            shutil.rmtree(out_dir, ignore_errors=True)
        raise
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)


def _check_options(
    paper: str, modules: list[ModuleType], results: bool, options: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The options of a results set, checked against its module's RESULTS_OPTIONS."""
    given = dict(options or {})
    if results:
        missing = [m.__name__ for m in modules if not hasattr(m, "results_points")]
        if missing:
            raise ReproduceError(f"no results set in {', '.join(missing)}")
    if not given:
        return given
    if not results:
        raise ReproduceError("options belong to a results set: pass --results")
    if len(modules) != 1:
        raise ReproduceError(f"options name one paper's results set, not {paper!r}")
    known: tuple[Option, ...] = getattr(modules[0], "RESULTS_OPTIONS", ())
    unknown = sorted(set(given) - {o.name for o in known})
    if unknown:
        names = ", ".join(o.name for o in known) or "none"
        raise ReproduceError(f"{paper}: unknown option {unknown[0]!r} (known: {names})")
    return given


def _draws_key_figures(module: ModuleType, options: Mapping[str, Any]) -> bool:
    """Whether a results set draws its paper's key figures: it has some, and no option given
    narrows the set (an option in the module's KEY_FIGURES_KEEP, such as Venice's
    ``--requests``, changes only the results set's run length; the figures come from the
    report set's runs either way)."""
    keep = set(getattr(module, "KEY_FIGURES_KEEP", ()))
    return bool(getattr(module, "KEY_FIGURES", ())) and set(options) <= keep


def _key_figures(
    out: Path,
    module: ModuleType,
    runs: list[Run],
    quick: bool,
    options: Mapping[str, Any],
    command: str,
) -> tuple[list[str], list[str]]:
    """A results set's key figures (the module's KEY_FIGURES: its headline figure and effect
    maps), drawn from the report set's runs it holds into ``out/figures/PAPER-ID.png``, the
    files docs/results/PAPER.md shows (docs/results/figures/), and the Markdown that shows
    them (a "Key figures" section for ``out/PAPER.md``; its image links are relative, so they
    work beside the page in docs/results/ as in `out`). Nothing when options narrowed the set
    (:func:`_draws_key_figures`)."""
    wanted = getattr(module, "KEY_FIGURES", ())
    if not _draws_key_figures(module, options):
        return [], []
    from flashlane.reproduce._report import draw

    keys = {p.key() for p in module.points(quick)}
    figures = annotate(module.figures([r for r in runs if r.point.key() in keys], quick))
    missing = sorted(set(wanted) - {f.id for f in figures})
    if missing:
        raise ReproduceError(
            f"{module.PAPER}: KEY_FIGURES names figures it does not draw: {missing}"
        )
    folder = out / "figures"
    folder.mkdir(exist_ok=True)
    drawn = []
    lines = [
        "## Key figures",
        "",
        f"Drawn by `{command}` from the runs of `flashlane reproduce {module.PAPER}"
        f"{' --quick' if quick else ''}` (its report set, which the call adds), as its "
        "report draws them: our series in colour, the paper's values as labelled black "
        "diamonds and dotted lines, and, on an effect map, a hollow marker where the baseline "
        "falls behind its arrivals (an open-loop overload, not a steady state). Each caption, in "
        "the image, names the preset, the workloads and the run length."
        + (
            " These are the reduced set's (`--quick`: fewer requests, coarser map grids): "
            "where a table beside them comes from the full set, their numbers differ in detail."
            if quick
            else ""
        ),
        "",
    ]
    for figure in sorted(
        (f for f in figures if f.id in wanted), key=lambda f: list(wanted).index(f.id)
    ):
        png, _ = draw(figure)
        name = f"{figure.paper}-{figure.id}"
        (folder / f"{name}.png").write_bytes(png)
        drawn.append(name)
        lines += [
            f"**{figure.title}** (`{name}`)",
            "",
            f"![{figure.title}](figures/{name}.png)",
            "",
        ]
    return drawn, lines


def _with_section(text: str, section: list[str]) -> str:
    """`text` (a results page) with `section` (its key figures) before its first second-level
    section, where a reader opening the page sees them; at the end if it has none."""
    if not section:
        return text
    found = re.search(r"^## ", text, re.MULTILINE)
    at = found.start() if found else len(text)
    head = text[:at] if at == 0 or text[:at].endswith("\n\n") else text[:at].rstrip("\n") + "\n\n"
    return head + "\n".join(section) + "\n" + ("\n" + text[at:] if found else "")


def stored_summaries(out: Path, paper: str, points: list[Point]) -> dict[int, dict[str, Any]]:
    """Summaries an earlier call left in `out` for `points` (by index): ``runs/PAPER/STEM.json``
    where ``runs/PAPER.csv`` gives the point's command for its key and ``specs/`` holds the
    point's spec files unchanged."""
    listing = out / "runs" / f"{paper}.csv"
    if not listing.is_file():
        return {}
    with listing.open(newline="") as f:
        commands = {
            (row["figure"], row["workload"], row["configuration"], row["tags"]): row["command"]
            for row in csv.DictReader(f)
        }
    found = {}
    for index, point in enumerate(points):
        tags = ";".join(f"{k}={v}" for k, v in point.tags)
        if commands.get((point.figure, point.workload, point.configuration, tags)) != (
            point.command()
        ):
            continue
        if any(
            not (out / "specs" / name).is_file() or (out / "specs" / name).read_text() != text
            for name, text in point.files
        ):
            continue
        path = out / "runs" / paper / f"{point.file_stem()}.json"
        if path.is_file():
            found[index] = json.loads(path.read_text())
    return found


def _reproduce(
    names: list[str],
    modules: list[ModuleType],
    points: list[Point],
    out: Path,
    quick: bool,
    jobs: int,
    client: Any,
    traces: Path,
    command: str,
    results: bool,
    options: Mapping[str, Any],
    *,
    reuse: bool,
    render_only: bool,
    precondition_cache: str | os.PathLike[str] | None,
) -> dict[str, Any]:
    stored: dict[int, dict[str, Any]] = {}
    if reuse:
        for name in names:
            indices = [i for i, p in enumerate(points) if p.paper == name]
            found = stored_summaries(out, name, [points[i] for i in indices])
            stored.update({indices[i]: summary for i, summary in found.items()})
    missing = [p for i, p in enumerate(points) if i not in stored]
    if render_only and missing:
        raise ReproduceError(
            f"--render-only: {len(missing)} of {len(points)} runs have no summary in {out} "
            f"(first: {missing[0].command()})"
        )
    # Progress and the counts returned count simulations: points with the same arguments
    # share one (distinct_runs), so runs.csv may have more rows than there were runs.
    ran = len(distinct_runs(missing))
    counts = {
        "runs": len(distinct_runs(points)),
        "ran": ran,
        "reused": len(distinct_runs(points)) - ran,
        "rows": len(points),
    }
    update, close = _progress(ran)
    try:
        ran = run_points(
            missing,
            traces=traces,
            jobs=jobs,
            client=client,
            progress=update,
            precondition_cache=precondition_cache,
        )
    finally:
        close()
    fresh = iter(ran)
    summaries = [stored[i] if i in stored else next(fresh) for i in range(len(points))]
    runs = [Run(p, s) for p, s in zip(points, summaries, strict=True)]

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
    from flashlane.reproduce._report import (
        claims_markdown,
        draw,
        render_html,
        write_figure_files,
    )

    if results:
        tables = []
        drawn = []
        for name, module in zip(names, modules, strict=True):
            paper_runs = [r for r in runs if r.point.paper == name]
            # The tables read the results set's runs only (not the report set's the key
            # figures added), the figures the report set's.
            keys = {p.key() for p in module.results_points(quick, options)}
            text = module.results_markdown(
                [r for r in paper_runs if r.point.key() in keys], quick, options, command
            )
            key_figures, lines = _key_figures(out, module, paper_runs, quick, options, command)
            path = out / f"{name}.md"
            path.write_text(_with_section(text, lines))
            tables.append(str(path))
            drawn += key_figures
        return {**counts, "figures": drawn, "verdicts": {}, "points": {}, "tables": tables}

    figures = []
    for name, module in zip(names, modules, strict=True):
        figures += annotate(module.figures([r for r in runs if r.point.paper == name], quick))
    pngs = {}
    for figure in figures:
        png, svg = draw(figure)
        write_figure_files(out, figure, png, svg)
        pngs[f"{figure.paper}-{figure.id}"] = png
    titles = [(name, module.TITLE) for name, module in zip(names, modules, strict=True)]
    title = "flashlane: the papers reproduced" + (" (quick set)" if quick else "")
    # The repository whose traces/ this is holds docs/results/, which the report links to.
    page = render_html(title, titles, figures, pngs, command, repo=traces.parent, out=out.resolve())
    (out / "report.html").write_text(page)
    (out / "claims.md").write_text(claims_markdown(figures, command))
    verdicts = {f"{f.paper}-{f.id}": [(c.text, c.verdict()) for c in f.claims] for f in figures}
    return {
        **counts,
        "figures": [f"{f.paper}-{f.id}" for f in figures],
        "verdicts": verdicts,
        "points": {f"{f.paper}-{f.id}": len(f.points) for f in figures},
        "tables": [],
    }
