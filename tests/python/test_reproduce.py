"""flashlane.reproduce: the report of `reproduce all --quick` in headless Chromium, CSV
determinism (local pool and Dask LocalCluster), the report's commands against the engine's
runs, the translation of a point's CLI flags, and errors before any run starts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import flashlane.reproduce.__main__
import flashlane.reproduce.piq
from conftest import skip_or_fail
from flashlane.reproduce import PAPERS, STUDIES, ReproduceError, paper_module, reproduce
from flashlane.reproduce._core import (
    WALL_CLOCK_KEYS,
    Claim,
    Figure,
    Point,
    Run,
    distinct_runs,
    engine_point,
    flatten,
)
from flashlane.reproduce._report import anchor, render, section_markdown, why_id

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
TRACES = REPO / "traces"

needs_cli = pytest.mark.skipif(
    not os.environ.get("FLASHLANE_BIN"),
    reason="needs the CLI: set FLASHLANE_BIN (./scripts/test.sh does)",
)


@pytest.fixture(scope="session")
def quick_all(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """`reproduce all --quick`, once per test session."""
    out = tmp_path_factory.mktemp("reproduce") / "all"
    result = reproduce("all", out, quick=True, traces=TRACES)
    return out, result


@pytest.fixture
def no_drawing(monkeypatch: pytest.MonkeyPatch) -> None:
    """For tests about runs, CSVs and counts, not figures: the figures are built as usual but
    not drawn with matplotlib (empty PNG and SVG files), which was most of these tests' time
    (12-14 s each for PIQ's and SOS's quick sets). The figure tests draw them for real."""
    import flashlane.reproduce._report

    monkeypatch.setattr(flashlane.reproduce._report, "draw", lambda figure: (b"", b""))


def test_outputs_of_every_paper(quick_all: tuple[Path, dict]) -> None:
    out, result = quick_all
    papers = {key.split("-")[0] for key in result["figures"]}
    assert papers == {"piq", "pass", "vios", "sos", "venice"}
    # The figures the scripts alone drew before: PASS's thread sweeps, VIOS's Table 1
    # stand-ins, Venice's mixes and energy.
    added = ["pass-fig9", "pass-fig10a", "pass-fig10b", "vios-table1", "venice-fig12"]
    for key in [*added, "venice-fig14"]:
        assert key in result["figures"], key
    for key in result["figures"]:
        assert (out / f"{key}.png").stat().st_size > 1000
        assert (out / f"{key}.svg").read_text().lstrip().startswith("<?xml")
    header, *rows = (out / "runs.csv").read_text().splitlines()
    assert header.startswith("paper,figure,workload,configuration,tags,command,")
    assert "engine.wall_s" not in header
    assert "latency_us.read.mean" in header
    assert len(rows) == result["rows"]
    assert len(list((out / "runs").glob("*/*.json"))) == result["rows"]
    for verdicts in result["verdicts"].values():
        for _, verdict in verdicts:
            assert verdict in {"agree", "direction", "disagree", "no data"}


@pytest.mark.parametrize(
    ("low", "high", "ours", "kind", "expected"),
    [
        # A paper's -20 %: agree from -10 (half) to -40 (twice); the sign alone is "direction".
        (-20, -20, -10.0, "value", "agree"),
        (-20, -20, -40.0, "value", "agree"),
        (-20, -20, -9.9, "value", "direction"),
        (-20, -20, -40.1, "value", "direction"),
        (-20, -20, 3.0, "value", "disagree"),
        # Zero as printed (one decimal) has no direction.
        (-20, -20, -0.04, "value", "disagree"),
        # A range: half its lower and twice its upper bound in magnitude.
        (10, 30, 5.0, "value", "agree"),
        (10, 30, 60.0, "value", "agree"),
        (10, 30, 61.0, "value", "direction"),
        (10, 30, -5.0, "value", "disagree"),
        # An upper bound.
        (0, 5, 5.0, "at_most", "agree"),
        (0, 5, 5.1, "at_most", "disagree"),
        (-20, -20, None, "value", "no data"),
    ],
)
def test_the_verdict_rule_on_its_boundaries(low, high, ours, kind, expected) -> None:
    # The rule as VERDICT_RULE states it, at and just past each of its bounds.
    assert Claim("claim", low, high, ours, kind=kind).verdict() == expected


# Runs in the page before anything else: records errors and, once loaded, every image's
# natural width and the row counts of every figure's tables into <pre id="check">.
PROBE = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || e.type)), true);
const origError = console.error;
console.error = (...a) => { window.__errors.push(a.join(' ')); origError(...a); };
window.addEventListener('load', () => {
  const figures = {};
  for (const h of document.querySelectorAll('h3')) {
    let n = h.nextElementSibling; const f = {claims: -1, points: -1};
    while (n && n.tagName !== 'H3' && n.tagName !== 'H2') {
      const c = n.matches('table.claims') ? n : null;
      const p = n.querySelector && n.querySelector('table.points');
      if (c) f.claims = c.tBodies[0].rows.length;
      if (p) f.points = p.tBodies[0].rows.length;
      n = n.nextElementSibling;
    }
    figures[h.id] = f;
  }
  const images = [...document.images].map(i => [i.complete, i.naturalWidth]);
  const pre = document.createElement('pre'); pre.id = 'check';
  pre.textContent = JSON.stringify({images, figures, errors: window.__errors});
  document.body.appendChild(pre);
});
</script>"""


def _chromium() -> str:
    if os.environ.get("FLASHLANE_SKIP_BROWSER") == "1":
        pytest.skip("FLASHLANE_SKIP_BROWSER=1: the report is not rendered in a browser")
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    skip_or_fail(
        "no chromium on PATH (./scripts/test.sh installs the Debian package chromium as root; "
        "FLASHLANE_SKIP_BROWSER=1 skips this test)"
    )
    raise AssertionError("unreachable")


def test_report_renders_in_headless_chromium(quick_all: tuple[Path, dict]) -> None:
    chromium = _chromium()
    out, result = quick_all
    text = (out / "report.html").read_text()
    assert "http://" not in text and "https://" not in text, "the report must fetch nothing"
    probed = out / "report-probed.html"
    probed.write_text(text.replace("<head>", "<head>" + PROBE, 1))
    flags = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
    ]
    done = subprocess.run(
        [*flags, "--virtual-time-budget=5000", "--dump-dom", probed.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="check">(.*?)</pre>', done.stdout, re.S)
    assert found, "the probe did not run:\n" + done.stdout[-2000:]
    check = json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert check["errors"] == []
    assert "Uncaught" not in done.stderr
    assert len(check["images"]) == len(result["figures"])
    assert all(complete and width > 0 for complete, width in check["images"])
    for key in result["figures"]:
        assert check["figures"][key] == {
            "claims": len(result["verdicts"][key]),
            "points": result["points"][key],
        }, key
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "reproduce-report.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1280,4000", (out / "report.html").as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    assert shot.stat().st_size > 10_000


def test_sos_csv_is_byte_identical_on_a_dask_localcluster(
    quick_all: tuple[Path, dict], tmp_path: Path, no_drawing: None
) -> None:
    """A second `reproduce sos --quick`, on a Dask LocalCluster (its workers sharing a
    precondition cache), writes the bytes the first (inside `all`, on the local process pool)
    wrote. (SOS: its quick set is the cheapest whose drives are preconditioned,
    71 points in about 5 s.)"""
    import distributed

    out, _ = quick_all
    import dask

    with (
        # Dask's scratch space (dask-scratch-space, of the scheduler and of every worker) goes
        # in the test's directory, not in $TMPDIR.
        dask.config.set({"temporary-directory": str(tmp_path)}),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            local_directory=tmp_path,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        reproduce(
            "sos",
            tmp_path / "sos",
            quick=True,
            traces=TRACES,
            client=client,
            precondition_cache=tmp_path / "cache",
        )
    # The workers went through the cache: its drives were preconditioned once and stored.
    assert list((tmp_path / "cache").glob("drive-*.snapshot"))
    again = (tmp_path / "sos" / "runs.csv").read_bytes()
    assert again == (tmp_path / "sos" / "runs" / "sos.csv").read_bytes()
    assert again == (out / "runs" / "sos.csv").read_bytes()


def test_pass_csv_is_byte_identical_with_a_precondition_cache(
    quick_all: tuple[Path, dict], tmp_path: Path, no_drawing: None
) -> None:
    """`reproduce pass --quick` without a precondition cache (its Table 3 runs two schedulers
    on one aged 60 GB drive: each preconditions it) writes the bytes the first (inside `all`,
    with its scratch cache: one preconditions the drive, the other loads it) wrote."""
    out, _ = quick_all
    reproduce("pass", tmp_path / "pass", quick=True, traces=TRACES, precondition_cache=False)
    again = (tmp_path / "pass" / "runs.csv").read_bytes()
    assert again == (out / "runs" / "pass.csv").read_bytes()

    def snapshots(folder: Path) -> list:
        return [
            json.loads(path.read_text())["precondition"].get("snapshot")
            for path in (folder / "runs" / "pass").glob("table3-*.json")
        ]

    assert snapshots(tmp_path / "pass") == [None, None]
    loaded = sorted(s["loaded"] for s in snapshots(out))
    assert loaded == [False, True], "with the scratch cache the aged drive is made once"


def comparable(summary: dict) -> dict:
    """The summary's figures without the wall clock and the input's name (the report's command
    names a trace relative to the repository and a spec by its file; the engine names them by
    absolute path and by label)."""
    return {
        k: v
        for k, v in flatten(summary).items()
        if not k.startswith(WALL_CLOCK_KEYS) and k not in ("trace.path", "sources")
    }


@needs_cli
@pytest.mark.parametrize("paper", ["pass", "sos"])
def test_report_command_gives_the_engine_summary(
    quick_all: tuple[Path, dict], tmp_path: Path, paper: str
) -> None:
    """The command runs.csv (and the report) shows for a run, typed into a shell at the
    repository's root, gives the summary the engine gave (PASS: --synthetic specs and
    --closed-loop; SOS: a trace with --remap-addresses)."""
    import csv

    out, _ = quick_all
    with (out / "runs" / f"{paper}.csv").open() as f:
        row = next(csv.DictReader(f))
    assert row["command"].startswith("flashlane run ")
    binary = Path(os.environ["FLASHLANE_BIN"]).resolve()
    summary_path = tmp_path / "cli.json"
    subprocess.run(
        ["bash", "-c", f"{row['command']} --json {summary_path}"],
        cwd=REPO,
        env={**os.environ, "OUT": str(out), "PATH": f"{binary.parent}:{os.environ['PATH']}"},
        check=True,
        capture_output=True,
    )
    cli = json.loads(summary_path.read_text())
    # The row's point, rebuilt from its columns, names the summary the engine wrote.
    tags = tuple(tuple(t.split("=", 1)) for t in row["tags"].split(";") if t)
    point = Point(paper, row["figure"], row["workload"], row["configuration"], (), tags)
    engine = json.loads((out / "runs" / paper / f"{point.file_stem()}.json").read_text())
    assert comparable(cli) == comparable(engine)
    assert len(cli["sources"]) == len(engine["sources"])


def test_engine_point_translates_every_flag(tmp_path: Path) -> None:
    spec = 'label = "x"\nrequests = 5\n[arrival]\nkind = "closed_loop"\nqueue_depth_requests = 2\n'
    point = Point(
        "p",
        "f",
        "w",
        "c",
        (
            "--preset",
            "ssdsim-mlc-8x8",
            "--trace",
            "{traces}/t.mqsim",
            "--format",
            "mqsim",
            "--profile",
            "hm_0",
            "--synthetic",
            "{work}/s.toml",
            "--set",
            "host.queue_length_requests=64",
            "--set",
            'ftl.allocation={kind="static"}',
            "--set",
            "host.queue_length_requests=1",
            "--remap-addresses",
            "--closed-loop",
            "4",
            "--max-requests",
            "10",
            "--warmup-requests",
            "2",
            "--seed",
            "3",
            "--time-scale",
            "0.5",
            "--check-integrity",
        ),
        files=(("s.toml", spec),),
    )
    assert engine_point(point, tmp_path) == {
        "preset": "ssdsim-mlc-8x8",
        "trace": f"{tmp_path}/t.mqsim",
        "trace_format": "mqsim",
        # The last --set of a key wins, as on the command line.
        "overrides": {"host.queue_length_requests": "1", "ftl.allocation": '{kind="static"}'},
        "workload": [
            "hm_0",
            {
                "label": "x",
                "requests": 5,
                "arrival": {"kind": "closed_loop", "queue_depth_requests": 2},
            },
        ],
        "addresses": "remap",
        "closed_loop_requests": 4,
        "max_requests": 10,
        "warmup_requests": 2,
        "seed": 3,
        "time_scale": 0.5,
        "check_integrity": True,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--preset", "x", "--fold-adresses"), r"flag '--fold-adresses' is not one the engine"),
        (("--preset", "x", "--max-requests"), r"--max-requests needs a value"),
        (("--preset", "x", "--max-requests", "ten"), r"'ten': expected a whole number"),
        (("--preset", "x", "--set", "novalue"), r"--set 'novalue': expected KEY=VALUE"),
        (("--preset", "x", "--trace", "a", "--trace", "b"), r"--trace given twice"),
        (("--preset", "x", "--synthetic", "{work}/missing.toml"), r"not one of the point's"),
    ],
)
def test_engine_point_rejects_what_it_cannot_run(args: tuple, message: str) -> None:
    with pytest.raises(ReproduceError, match=rf"^p f w c: .*{message}"):
        engine_point(Point("p", "f", "w", "c", args), TRACES)


def test_unknown_flag_in_a_point_fails_before_any_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = flashlane.reproduce.piq.points(True)
    bad = Point("piq", "fig8", "w", "c", (*good[0].args, "--no-such-flag"))
    monkeypatch.setattr(flashlane.reproduce.piq, "points", lambda quick: [*good, bad])
    with pytest.raises(ReproduceError, match=r"piq fig8 w c: flag '--no-such-flag'"):
        reproduce("piq", tmp_path / "out", quick=True, traces=TRACES)
    assert not (tmp_path / "out").exists()


def test_unknown_paper_fails_before_any_run(tmp_path: Path) -> None:
    with pytest.raises(ReproduceError, match=r"unknown paper 'nope'; known: piq, pass"):
        reproduce("nope", tmp_path / "out", quick=True, traces=TRACES)
    assert not (tmp_path / "out").exists()


def test_unwritable_out_fails_before_any_run(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ReproduceError, match=r"--out .*file/out: cannot write there"):
        reproduce("sos", blocker / "out", quick=True, traces=TRACES)
    with pytest.raises(ReproduceError, match=r"exists and is not a directory"):
        reproduce("sos", blocker, quick=True, traces=TRACES)


@needs_cli
def test_cli_forwards_and_reports_errors(tmp_path: Path) -> None:
    binary = os.environ["FLASHLANE_BIN"]
    done = subprocess.run(
        [binary, "reproduce", "nope", "--out", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "FLASHLANE_PYTHON": shutil.which("python") or ""},
    )
    assert done.returncode == 2
    assert "unknown paper 'nope'" in done.stderr
    assert not (tmp_path / "x").exists()


def test_render_only_and_reuse_take_the_stored_summaries(
    quick_all: tuple[Path, dict], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_drawing: None
) -> None:
    """--render-only runs nothing and rewrites the same CSV from the summaries in OUT; --reuse
    runs only the points whose command is not stored there."""
    import flashlane.reproduce.sos

    out, _ = quick_all
    copy = tmp_path / "again"
    shutil.copytree(out, copy)
    stored = json.loads(next((copy / "runs" / "sos").glob("*.json")).read_text())
    ran: list[Point] = []

    def run_points(points: list[Point], **_: object) -> list[dict]:
        ran.extend(points)
        return [stored for _ in points]

    monkeypatch.setattr(flashlane.reproduce, "run_points", run_points)
    before = (copy / "runs" / "sos.csv").read_bytes()
    reproduce("sos", copy, quick=True, traces=TRACES, render_only=True)
    assert ran == []
    assert (copy / "runs" / "sos.csv").read_bytes() == before
    assert (copy / "sos-fig6.png").is_file()

    first, *others = flashlane.reproduce.sos.points(True)
    changed = Point(
        first.paper,
        first.figure,
        first.workload,
        first.configuration,
        (*first.args, "--seed", "2"),
        first.tags,
    )
    monkeypatch.setattr(flashlane.reproduce.sos, "points", lambda quick: [changed, *others])
    with pytest.raises(ReproduceError, match=rf"--render-only: 1 of {len(others) + 1} runs"):
        reproduce("sos", copy, quick=True, traces=TRACES, render_only=True)
    reproduce("sos", copy, quick=True, traces=TRACES, reuse=True)
    assert ran == [changed]


# --- the figures (issue 24) --------------------------------------------------------------------


def quick_figures(out: Path) -> dict[str, Figure]:
    """Every figure of the quick set, rebuilt from the summaries `reproduce all --quick` left."""
    figures = {}
    for paper in PAPERS:
        module = paper_module(paper)
        runs = [
            Run(p, json.loads((out / "runs" / paper / f"{p.file_stem()}.json").read_text()))
            for p in module.points(True)
        ]
        figures.update({f"{f.paper}-{f.id}": f for f in module.figures(runs, True)})
    return figures


@pytest.fixture(scope="module")
def figures(quick_all: tuple[Path, dict]) -> dict[str, Figure]:
    return quick_figures(quick_all[0])


@pytest.fixture(scope="module")
def rendered(figures: dict[str, Figure]):
    """Every figure rendered and drawn once for the module's tests that look at all of them
    (rendering is most of their time); closed at the module's end."""
    import matplotlib.pyplot as plt

    made = {}
    # All open at once, on purpose: pyplot's warning past 20 open figures does not apply.
    with plt.rc_context({"figure.max_open_warning": 0}):
        for key, figure in figures.items():
            made[key] = render(figure)
            made[key].canvas.draw()
    yield made
    for fig in made.values():
        plt.close(fig)


@pytest.fixture
def drawn():
    """render(figure), drawn on its canvas (so that extents are known); the figure drawn
    before it is closed, the last one at the end of the test."""
    import matplotlib.pyplot as plt

    made = []

    def draw(figure: Figure):
        while made:
            plt.close(made.pop())
        made.append(render(figure))
        made[-1].canvas.draw()
        return made[-1]

    yield draw
    while made:
        plt.close(made.pop())


def test_every_ratio_figure_names_its_baseline(figures: dict[str, Figure]) -> None:
    ratios = {
        key
        for key, f in figures.items()
        if "normalized" in f.title or " / " in f.ylabel or "over the" in f.title
    }
    # PIQ Figs. 8 and 12, VIOS Figs. 5 and 6, PASS Table 3, SOS Fig. 6, Venice Figs. 9, 12, 14.
    assert ratios >= {
        "piq-fig8a",
        "piq-fig8b",
        "piq-fig12",
        "vios-fig5",
        "vios-fig6",
        "pass-table3",
        "sos-fig6",
        "venice-fig9-venice-perf",
        "venice-fig9-venice-cost",
        "venice-fig12",
        "venice-fig14",
    }
    for key in ratios:
        baseline = figures[key].baseline
        assert baseline, key
        assert f"(1 = {baseline})" in figures[key].ylabel, key


def test_small_changes_to_a_baseline_are_visible_bars(drawn) -> None:
    """+2.5 % and -0.3 % against a baseline: bars from 1.0, tall enough to see and to tell
    apart in direction; the axis names the baseline and gives the change in percent."""
    figure = Figure(
        "p", "f", "t", "c", "bars", "x", "y / B's (1 = B)", ["w"], {"a": [1.025], "b": [0.997]}
    )
    figure.baseline = "B"
    fig = drawn(figure)
    ax = fig.axes[0]
    bars = {c.get_label(): c.patches[0] for c in ax.containers}
    assert set(bars) == {"ours: a", "ours: b"}
    to_pixels = ax.transData.transform

    def pixels(bar) -> float:
        (_, bottom), (_, top) = to_pixels([(0, bar.get_y()), (0, bar.get_y() + bar.get_height())])
        return top - bottom

    assert bars["ours: a"].get_y() == bars["ours: b"].get_y() == 1.0
    assert pixels(bars["ours: a"]) > 40
    assert pixels(bars["ours: b"]) < -4
    low, high = ax.get_ylim()
    assert low < 0.997 and high > 1.025
    right = [a for a in fig.axes[0].child_axes if a.get_ylabel()]
    assert [a.get_ylabel() for a in right] == ["change vs B (%)"]


#: Figures where the paper prints numbers of the figure's own quantity (quick set).
WITH_PAPER_NUMBERS = {
    "piq-fig8a",
    "piq-fig8b",
    "piq-fig12",
    "vios-fig5",
    "vios-fig6",
    "vios-fig7",
    "vios-table1",
    "pass-table2",
    "pass-table3",
    "sos-fig6",
    "sos-table1",
    "sos-fig7",
    "venice-fig9-venice-perf",
    "venice-fig9-venice-cost",
    "venice-fig13",
    "venice-fig12",
    "venice-fig14",
    "piq-map-read",
    "piq-map-write",
    "vios-map-read",
    "vios-map-write",
    "sos-map-sos",
    "sos-map-qsl",
    "sos-map-whm",
    "pass-map-gain",
    "venice-map-speedup",
    # The same maps on a drive aged to steady-state GC (issue 30).
    "piq-map-read-gc",
    "piq-map-write-gc",
    "vios-map-read-gc",
    "vios-map-write-gc",
    "sos-map-sos-gc",
    "sos-map-qsl-gc",
    "sos-map-whm-gc",
}
#: The effect maps of the quick set (issue 20), each drawn with the paper's level.
MAPS = {key for key in WITH_PAPER_NUMBERS if "-map-" in key}

#: Claims of the papers' own figures an effect map covers, one per map module.
MAPPED_CLAIMS = {
    "PIQ read latency vs NOOP, mean over workloads (abstract)",
    "VIOS write latency vs PIQ at 12000 P/E",
    "SOS vs IOS response time, Financial1 (paper: up to 56 % lower)",
    "PASS throughput vs the best other scheduler at 16 threads",
    "Venice execution-time speedup over the baseline (venice-perf), as a change",
}


def test_every_map_says_where_ours_reaches_the_paper(quick_all: tuple[Path, dict]) -> None:
    """Each paper has its effect maps (PAPER-map-CLAIM.png); the sentence computed from a map's
    data opens its caption, is its own claim's `where`, and is the `where` of the paper's
    claims it covers, in report.html and in claims.md."""
    out, result = quick_all
    assert {k for k in result["figures"] if "-map-" in k} == MAPS
    figures = quick_figures(out)
    for key in MAPS:
        figure = figures[key]
        said = figure.claims[0].where
        assert said.startswith(("Nowhere on the grid", figure.claims[0].text.split()[0])), key
        assert said in figure.caption, key
        # Every map covers claims of its paper's own figures.
        assert figure.where, key
    rows = [
        [cell.strip() for cell in line.strip("|").split(" | ")]
        for line in (out / "claims.md").read_text().splitlines()
        if line.startswith("| ") and not line.startswith("| paper |")
    ]
    assert len(rows) == sum(len(v) for v in result["verdicts"].values())
    where = {row[1]: row[-1] for row in rows}
    for claim in MAPPED_CLAIMS:
        # One sentence per map covering it (a map with and without GC gives two).
        assert "Nowhere on the grid" in where[claim] or " reaches " in where[claim], claim
    assert "not mapped" in where.values()
    report = (out / "report.html").read_text()
    assert "where ours reaches the paper&#x27;s value" in report
    # The claims' code spans (map names, config keys) are code in the page, not backticks.
    spans = set(re.findall(r"`([^`]+)`", (out / "claims.md").read_text()))
    assert "piq-map-read" in spans
    for span in spans:
        assert f"<code>{span}</code>" in report, span
    assert "`" not in report


def test_paper_values_are_drawn_or_the_caption_says_why(
    figures: dict[str, Figure], rendered
) -> None:
    assert set(figures) >= WITH_PAPER_NUMBERS
    for key, figure in figures.items():
        if key in WITH_PAPER_NUMBERS:
            assert figure.draws_paper(), key
        if not figure.draws_paper():
            assert "No paper values drawn: " in figure.full_caption(), key
            continue
        ax = rendered[key].axes[0]
        diamonds = [
            y for line in ax.lines if line.get_marker() == "D" for y in line.get_ydata() if y == y
        ]
        levels = [line.get_ydata()[0] for line in ax.lines if line.get_linestyle() == ":"]
        expected = [v for values in figure.paper_series.values() for v in values if v is not None]
        assert sorted(diamonds) == pytest.approx(sorted(expected)), key
        assert sorted(levels) == pytest.approx(sorted(figure.paper_levels.values())), key
        assert "the paper's." in figure.full_caption(), key
        # The caption names what is drawn: diamonds only where there are some.
        assert ("iamond" in figure.full_caption()) == bool(expected), key
        assert ("otted line" in figure.full_caption()) == bool(figure.paper_levels), key


def test_paper_means_sit_on_their_series_bars(figures: dict[str, Figure], drawn) -> None:
    """PIQ Fig. 8(a): the paper's PIQ -15.6 % and PIQ_R -19.6 % over NOOP are diamonds on the
    bars of PIQ and PIQ_R in the category of our means."""
    figure = figures["piq-fig8a"]
    assert figure.categories[-1] == "mean over workloads"
    ax = drawn(figure).axes[0]
    bars = {c.get_label(): c.patches[-1] for c in ax.containers}
    for scheme, change in (("piq", -15.6), ("piq_r", -19.6)):
        bar = bars[f"ours: {scheme}"]
        centre = bar.get_x() + bar.get_width() / 2
        assert any(
            line.get_marker() == "D"
            and list(line.get_xdata()) == pytest.approx([centre])
            and list(line.get_ydata()) == pytest.approx([1 + change / 100])
            for line in ax.lines
        ), scheme
        # Our mean is the mean of the per-workload bars.
        ours = figure.series[scheme]
        assert ours[-1] == pytest.approx(sum(ours[:-1]) / len(ours[:-1]))


def test_legends_cover_no_bar_line_or_title(figures: dict[str, Figure], rendered) -> None:
    """SOS Fig. 6's legend covered bars; every legend is now outside the axes and their title."""
    assert "sos-fig6" in figures
    for key in figures:
        fig = rendered[key]
        ax = fig.axes[0]
        renderer = fig.canvas.get_renderer()
        legends = [*fig.legends, *([ax.get_legend()] if ax.get_legend() else [])]
        assert len(legends) == 1, key
        box = legends[0].get_window_extent(renderer)
        for other in (ax.get_window_extent(renderer), ax.title.get_window_extent(renderer)):
            assert not box.overlaps(other), key
        assert box.x1 <= fig.bbox.x1 + 1 and box.y1 <= fig.bbox.y1 + 1, key


def test_each_figure_links_to_the_reasons_for_its_gaps(
    quick_all: tuple[Path, dict], figures: dict[str, Figure]
) -> None:
    """Each figure links to the section of docs/results/PAPER.md it names, which the report
    holds: an in-page anchor (a link to a .md file's heading does not scroll in a browser)."""
    out, result = quick_all
    text = (out / "report.html").read_text()
    ids = re.findall(r'id="([^"]+)"', text)
    assert len(ids) == len(set(ids))
    for key in result["figures"]:
        paper = key.split("-")[0]
        section = text.split(f'<h3 id="{key}">', 1)[1].split("<h3", 1)[0]
        found = re.search(r'<p class="gaps">[^<]*<a href="#([^"]+)">', section)
        assert found, key
        heading = figures[key].gaps
        assert found.group(1) == why_id(paper, heading), key
        embedded = text.split(f'<section class="why" id="{found.group(1)}">', 1)[1]
        embedded = embedded.split("</section>", 1)[0]
        page = REPO / "docs" / "results" / f"{paper}.md"
        assert f"From <code>docs/results/{paper}.md</code>" in embedded, key
        # The section's own heading and every heading under it.
        assert f'id="{found.group(1)}-{anchor(heading)}"' in embedded, key
        lines = section_markdown(page.read_text(), heading).splitlines()
        fenced = [line.startswith("```") for line in lines]
        headings = [
            line
            for i, line in enumerate(lines)
            if line.startswith("#") and sum(fenced[:i]) % 2 == 0
        ]
        assert len(re.findall(r"<h[1-6] id=", embedded)) == len(headings), key
    # Every in-page link of the report has its target.
    for href in re.findall(r'href="#([^"]+)"', text):
        assert href in ids, href


def test_anchor_is_githubs() -> None:
    assert anchor("Why, on this platform") == "why-on-this-platform"
    assert anchor("The paper's claims beside ours") == "the-papers-claims-beside-ours"
    assert anchor("Why the gaps (read with the tables above)") == (
        "why-the-gaps-read-with-the-tables-above"
    )


def test_printed_run_count_is_the_progress_count(
    quick_all: tuple[Path, dict],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    no_drawing: None,
) -> None:
    """PIQ's quick set has points with the same arguments (Fig. 11's queue 64 is a Fig. 8
    bar): they share one run, and the run count printed at the end is the one the progress
    counts to (it used to print the points, 10, after progress lines [1/8] .. [8/8])."""
    import flashlane.sweep

    out, _ = quick_all
    stored = json.loads(next((out / "runs" / "piq").glob("*.json")).read_text())

    def run_points(points: list, *, point_progress, **_: object) -> list[dict]:
        for done in range(1, len(points) + 1):
            point_progress(done, len(points), done - 1)
        return [dict(stored) for _ in points]

    monkeypatch.setattr(flashlane.sweep, "run_points", run_points)
    # main() would leave its SIGINT/SIGTERM handlers in this process.
    monkeypatch.setattr(flashlane.reproduce.__main__, "install_signal_handlers", lambda: None)
    main = flashlane.reproduce.__main__.main
    args = ["piq", "--quick", "--jobs", "1", "--traces", str(TRACES)]
    points = flashlane.reproduce.piq.points(True)
    simulations = len(distinct_runs(points))
    assert simulations < len(points)
    for extra in ([], ["--reuse"]):
        assert main([*args, "--out", str(tmp_path / "piq"), *extra]) == 0
        captured = capsys.readouterr()
        progress = re.findall(r"^\[(\d+)/(\d+)\] ", captured.err, re.M)
        printed = int(re.search(r"^(\d+) runs", captured.out, re.M).group(1))
        assert [int(total) for _, total in progress] == [printed] * printed
        assert [int(done) for done, _ in progress] == list(range(1, printed + 1))
        if extra:
            # Everything was there: nothing ran.
            assert printed == 0
            assert f"0 runs, {simulations} reused from" in captured.out
        else:
            assert printed == simulations
        assert f"({len(points)} points: points with the same arguments share" in captured.out


@needs_cli
def test_cli_help_without_python_names_every_option(tmp_path: Path) -> None:
    """`flashlane reproduce --help` without the Python package prints crates/flashlane-cli's
    own help, which must name every option the Python parser defines (every paper's too)."""
    binary = os.environ["FLASHLANE_BIN"]
    for args in (["--help"], ["piq", "-h"]):
        done = subprocess.run(
            [binary, "reproduce", *args],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "FLASHLANE_PYTHON": str(tmp_path / "no-such-python")},
        )
        assert done.returncode == 0, done.stderr
        assert 'pip install ".[reproduce]"' in done.stdout
    text = done.stdout
    flags = set()
    for paper in [None, *PAPERS, *STUDIES]:
        parser, _ = flashlane.reproduce.__main__.build_parser(paper)
        flags.update(flag for action in parser._actions for flag in action.option_strings)
    assert {"--quick", "--results", "--out", "--jobs", "--traces", "--reuse"} <= flags
    assert {"--render-only", "--platforms", "--requests"} <= flags
    for flag in sorted(flags):
        assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", text), flag
    listed = re.search(r"^PAPER: (.*)$", text, re.M)
    assert listed, text
    assert set(re.findall(r"[a-z]+", listed.group(1))) - {"or"} == {*PAPERS, *STUDIES, "all"}
