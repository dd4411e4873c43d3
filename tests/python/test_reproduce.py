"""flashlane.reproduce: the report of `reproduce all --quick` in headless Chromium, CSV
determinism, and errors before any run starts."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from flashlane.reproduce import ReproduceError, reproduce

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
TRACES = REPO / "traces"

pytestmark = pytest.mark.skipif(
    not os.environ.get("FLASHLANE_BIN"),
    reason="needs the release CLI: set FLASHLANE_BIN (./scripts/test.sh does)",
)


@pytest.fixture(scope="session")
def quick_all(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """`reproduce all --quick`, once per test session."""
    out = tmp_path_factory.mktemp("reproduce") / "all"
    result = reproduce("all", out, quick=True, traces=TRACES)
    return out, result


def test_outputs_of_every_paper(quick_all: tuple[Path, dict]) -> None:
    out, result = quick_all
    papers = {key.split("-")[0] for key in result["figures"]}
    assert papers == {"piq", "pass", "vios", "sos", "venice"}
    for key in result["figures"]:
        assert (out / f"{key}.png").stat().st_size > 1000
        assert (out / f"{key}.svg").read_text().lstrip().startswith("<?xml")
    header, *rows = (out / "runs.csv").read_text().splitlines()
    assert header.startswith("paper,figure,workload,configuration,tags,command,")
    assert "engine.wall_s" not in header
    assert "latency_us.read.mean" in header
    assert len(rows) == result["runs"]
    assert len(list((out / "runs").glob("*/*.json"))) == result["runs"]
    for verdicts in result["verdicts"].values():
        for _, verdict in verdicts:
            assert verdict in {"agree", "direction", "disagree", "no data"}


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
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no chromium on PATH (./scripts/test.sh installs the Debian package chromium)")


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


def test_piq_csv_is_byte_identical(quick_all: tuple[Path, dict], tmp_path: Path) -> None:
    """A second `reproduce piq --quick` writes the bytes the first (inside `all`) wrote."""
    out, _ = quick_all
    reproduce("piq", tmp_path / "piq", quick=True, traces=TRACES)
    again = (tmp_path / "piq" / "runs.csv").read_bytes()
    assert again == (tmp_path / "piq" / "runs" / "piq.csv").read_bytes()
    assert again == (out / "runs" / "piq.csv").read_bytes()


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
