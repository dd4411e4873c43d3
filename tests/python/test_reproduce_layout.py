"""The reproduce package's modules import one another without circles (issue 31): a paper's
figure sets (PAPER.py) and its effect map (PAPER_map.py) take what they share from one module of
the paper's platform (PAPER_platform.py), and nothing imports back. Read from the source, every
import counted, also those inside functions, so a circle hidden in a function body (the old way
round one) fails here too."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "flashlane" / "reproduce"
PREFIX = "flashlane.reproduce"


def imports_of(path: Path) -> set[str]:
    """The package's own modules that `path` imports, by module name."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PREFIX:
                found.update(alias.name for alias in node.names)
            elif node.module.startswith(PREFIX + "."):
                found.add(node.module.removeprefix(PREFIX + ".").split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PREFIX + "."):
                    found.add(alias.name.removeprefix(PREFIX + ".").split(".")[0])
    return found


def graph() -> dict[str, set[str]]:
    modules = {p.stem: p for p in PACKAGE.glob("*.py")}
    return {name: imports_of(path) & set(modules) for name, path in modules.items()}


def circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One circle of `edges`, as the modules along it, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_the_reproduce_modules_import_without_circles() -> None:
    edges = graph()
    # The reader saw the papers' modules (a layout change that hides them fails here).
    assert {"piq", "piq_map", "piq_platform", "pass_", "pass_map"} <= set(edges)
    assert "piq_platform" in edges["piq_map"], edges["piq_map"]
    assert circle(edges) is None, f"import circle: {' -> '.join(circle(edges) or [])}"


def test_the_circle_finder_finds_one() -> None:
    # The check above can fail: the layout before issue 31's item 6 had this circle.
    assert circle({"piq": {"piq_map"}, "piq_map": {"piq"}}) == ["piq", "piq_map", "piq"]
    assert circle({"a": {"b"}, "b": set()}) is None
