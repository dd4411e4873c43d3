"""The README's Python snippet works after the README's install command: every third-party module
the snippet and flashlane import while it runs comes from a distribution that command installs
(a dependency of the package, or of an extra the command names)."""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Runs the snippet and prints the top-level modules that it, or flashlane, imported.
RECORDER = """
import importlib.abc
import json
import sys

imported = set()


class Recorder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        importer = "" if frame is None else frame.f_globals.get("__name__", "")
        if importer == "__snippet__" or importer.split(".")[0] == "flashlane":
            imported.add(name.split(".")[0])
        return None


sys.meta_path.insert(0, Recorder())
exec(compile(sys.stdin.read(), "README.md", "exec"), {"__name__": "__snippet__"})
print(json.dumps(sorted(imported)))
"""


def readme_install_and_snippet() -> tuple[str, str]:
    text = (REPO / "README.md").read_text()
    found = re.search(r"From Python \(`(pip install [^`]+)`.*?```python\n(.*?)```", text, re.S)
    assert found, "README: no 'From Python (`pip install ...`' line before a python block"
    return found.group(1), found.group(2)


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normalized(re.split(r"[\s<>=!~;\[]", requirement, maxsplit=1)[0])


def installed_distributions(command: str) -> set[str]:
    """The distributions the install command asks for: the package's dependencies and those of
    the extras it names (`pip install ".[a,b]"`)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    target = command.removeprefix("pip install").strip().strip("\"'")
    assert target.startswith("."), f"README installs {target!r}, not this checkout"
    extras = re.findall(r"[\w-]+", target[target.index("[") :]) if "[" in target else []
    requirements = list(project.get("dependencies", []))
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    return {requirement_name(r) for r in requirements}


def test_the_readme_snippet_needs_only_what_the_readme_installs():
    command, snippet = readme_install_and_snippet()
    done = subprocess.run(
        [sys.executable, "-c", RECORDER],
        input=snippet,
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    imported = set(json.loads(done.stdout.strip().splitlines()[-1]))
    third_party = {
        name
        for name in imported
        if name not in sys.stdlib_module_names and name != "flashlane" and name != "__future__"
    }
    # The snippet reads a trace into a polars frame: the check below must see that import.
    assert "polars" in third_party, imported
    declared = installed_distributions(command)
    distributions = importlib.metadata.packages_distributions()
    for module in sorted(third_party):
        names = {normalized(d) for d in distributions.get(module, [module])}
        assert names & declared, (
            f"README's snippet imports {module} (from {sorted(names)}), which `{command}` does"
            f" not install (it installs {sorted(declared)})"
        )
