"""Every example of the README and of docs/ runs as written and prints no warning its text does
not announce (issue 31): a newcomer's commands show what their text says, not an overload or a
run with nothing to compare.

What is collected: each `flashlane ...` line (continuations joined) of a shell or plain code
block, and each Python block, of README.md and docs/**/*.md. What is run: all of them but

* synopses: a command with a placeholder (an upper-case word such as TRACE, P or SPEC.toml, or
  `...`), or a Python block with `...` in it;
* commands on a real drive (`replay`, `probe`, and a run of the probe file they write);
* the few that take long (LONG below, each with the test that runs the same thing), so the
  suite stays inside its budget.

Optional parts written `[--flag VALUE]` are left out (the command's base form runs). A warning
is announced when the comment lines above the command, or the paragraph before its block,
say "warn"."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import skip_or_fail

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
SHELL_BLOCKS = ("", "sh", "bash", "shell", "console")
#: Examples that take too long for the suite (tens of seconds each), by file and the start of
#: the example's text, with what runs the same in the suite.
LONG = {
    (
        "docs/sweeps.md",
        "flashlane compare --preset venice-perf",
    ): "preconditions venice-perf filled to 0.9 and aged (about 8 s); "
    "test_precondition_cache.py runs that drive through the cache",
    (
        "docs/sweeps.md",
        "flashlane reproduce pass --quick",
    ): "test_reproduce.py's test_pass_csv_is_byte_identical_with_a_precondition_cache",
    (
        "docs/sweeps.md",
        'import flashlane\n\nif __name__ == "__main__":\n    aged =',
    ): "the same aged venice-perf drive; test_precondition_cache.py's sweep runs it",
}
REAL_DRIVE = ("replay", "probe")
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_]*(?:\.[a-z]+)?|\.\.\.)$")


@dataclass(frozen=True)
class Example:
    file: str  # relative to the repository
    line: int  # of the command or of the block's first line
    text: str  # the command as written (continuations joined), or the Python block
    announced: str  # the comment lines above it and the paragraph before its block
    python: bool

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"


def _paragraph_before(lines: list[str], fence: int) -> str:
    """The prose paragraph that ends right above line `fence` (0-based)."""
    i = fence - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    start = i
    while start >= 0 and lines[start].strip() and not lines[start].startswith("```"):
        start -= 1
    return "\n".join(lines[start + 1 : i + 1])


def collect() -> list[Example]:
    examples = []
    for path in DOCS:
        rel = str(path.relative_to(REPO))
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            fence = re.match(r"^```(\w*)\s*$", lines[i])
            if not fence:
                i += 1
                continue
            lang, start = fence.group(1), i
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            body = lines[start + 1 : end]
            before = _paragraph_before(lines, start)
            if lang == "python":
                examples.append(Example(rel, start + 2, "\n".join(body), before, True))
            elif lang in SHELL_BLOCKS:
                comments: list[str] = []
                current, first = "", 0
                for k, line in enumerate(body):
                    stripped = line.strip()
                    if not current:
                        if stripped.startswith("#"):
                            comments.append(stripped)
                            continue
                        first = start + 2 + k
                    current = f"{current} {stripped}" if current else stripped
                    if current.endswith("\\"):
                        current = current[:-1].rstrip()
                        continue
                    if current.startswith("flashlane "):
                        announced = "\n".join([before, *comments])
                        examples.append(Example(rel, first, current, announced, False))
                    if current:
                        comments = []
                    current = ""
            i = end + 1
    return examples


def skip_reason(example: Example) -> str | None:
    """Why an example is not run here, or None when it runs."""
    for (file, start), reason in LONG.items():
        if example.file == file and example.text.startswith(start):
            return f"long: {reason}"
    if example.python:
        code = re.sub(r"#.*", "", example.text)  # `...` in a comment is prose
        return "a synopsis (`...`)" if "..." in code else None
    words = shlex.split(example.text, comments=True)
    if words[1] in REAL_DRIVE or "probe_path=probe.json" in example.text:
        return "runs on a real drive or on what its probe writes"
    if any(PLACEHOLDER.match(w.strip("[]")) for w in words):
        return "a synopsis (placeholders)"
    return None


EXAMPLES = collect()
RUN = [e for e in EXAMPLES if skip_reason(e) is None]


def test_the_collector_finds_the_examples() -> None:
    # The README's block and the docs' examples were found (a layout change that hides them
    # from the collector fails here), and every LONG entry still names an example.
    files = {e.file for e in RUN}
    assert {"README.md", "docs/sweeps.md", "docs/real-drive.md", "docs/performance.md"} <= files
    subcommands = {shlex.split(e.text)[1] for e in RUN if not e.python}
    assert {"run", "compare", "sweep", "trace", "gen", "presets"} <= subcommands, subcommands
    for file, start in LONG:
        assert any(e.file == file and e.text.startswith(start) for e in EXAMPLES), (file, start)


def _warnings(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^(warning|\S*Warning\b)", line)]


@pytest.mark.parametrize("example", RUN, ids=[e.id for e in RUN])
def test_an_example_runs_without_unannounced_warnings(example: Example, tmp_path: Path) -> None:
    binary = os.environ.get("FLASHLANE_BIN")
    if not binary and not example.python:
        skip_or_fail("needs the CLI: set FLASHLANE_BIN (./scripts/test.sh does)")
    # Run where the examples' relative paths (traces/, docs/) resolve, writing into tmp_path.
    for name in ("traces", "docs"):
        (tmp_path / name).symlink_to(REPO / name)
    if example.python:
        (tmp_path / "example.py").write_text(example.text)
        command = [sys.executable, "example.py"]
    else:
        # The base form: optional parts `[...]` left out.
        words = shlex.split(re.sub(r"\[[^\]]*\]", "", example.text), comments=True)
        command = [str(Path(binary).resolve()), *words[1:]]
    out = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"{example.id}: {out.stderr}"
    if "warn" not in example.announced.lower():
        warnings = _warnings(out.stdout + out.stderr)
        assert warnings == [], f"{example.id}: warnings its text does not announce"
