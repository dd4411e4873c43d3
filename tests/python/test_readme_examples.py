"""The README's simulating examples (`flashlane run`, `compare`, `sweep` in its command block)
run as written and print no warning the README does not announce (issue 31): a newcomer's
first commands show what their comments say, not an overload or a run with nothing to
compare. Commands on a real drive (`replay`, `probe`) and those that only read or write
traces are left to their own tests."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import skip_or_fail

REPO = Path(__file__).resolve().parents[2]
SIMULATING = ("run", "compare", "sweep")


def readme_commands() -> list[tuple[str, list[str]]]:
    """(the comment lines above it, the command's words) for each simulating command of the
    README's first `sh` block after its two set-up commands, up to its real-drive part."""
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert len(blocks) >= 2, "README: no command block after the set-up commands"
    commands, comment, current = [], [], ""
    for line in blocks[1].splitlines():
        if current:
            current += " " + line.strip()
        elif line.startswith("#"):
            if "real drive" in line:
                break  # the rest runs on a drive and on what its probe writes
            comment.append(line)
            continue
        else:
            current = line.strip()
        if current.endswith("\\"):
            current = current[:-1].rstrip()
            continue
        words = shlex.split(current, comments=True)
        if len(words) > 1 and words[0] == "flashlane" and words[1] in SIMULATING:
            commands.append(("\n".join(comment), words))
        comment, current = [], ""
    return commands


COMMANDS = readme_commands()


def test_the_readme_shows_simulating_examples() -> None:
    # The parser found the block's commands (a README rewritten past it fails here).
    assert {words[1] for _, words in COMMANDS} == set(SIMULATING), COMMANDS


@pytest.mark.parametrize(
    ("comment", "words"), COMMANDS, ids=[" ".join(w[1:4]) for _, w in COMMANDS]
)
def test_a_readme_example_runs_without_unannounced_warnings(
    comment: str, words: list[str], tmp_path: Path
) -> None:
    binary = os.environ.get("FLASHLANE_BIN")
    if not binary:
        skip_or_fail("needs the CLI: set FLASHLANE_BIN (./scripts/test.sh does)")
    # Run where the README's relative trace paths resolve, with its output files in tmp_path.
    (tmp_path / "traces").symlink_to(REPO / "traces")
    out = subprocess.run(
        [binary, *words[1:]], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    warnings = [
        line for line in (out.stdout + out.stderr).splitlines() if line.startswith("warning")
    ]
    if "warn" not in comment:
        assert warnings == [], f"{' '.join(words)}: warnings the README does not announce"
