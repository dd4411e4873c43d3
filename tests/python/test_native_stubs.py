"""The type stubs of the native module (python/flashlane/_native.pyi) name the functions the
module has, with the parameters it takes, in its order: a stub left behind by a change of
crates/flashlane-py misleads every editor and type checker that reads it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import flashlane._native as native

STUBS = Path(__file__).resolve().parents[2] / "python" / "flashlane" / "_native.pyi"


def stub_functions() -> dict[str, list[str]]:
    tree = ast.parse(STUBS.read_text())
    return {
        node.name: [a.arg for a in node.args.args]
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }


def test_every_native_function_has_a_stub_with_its_parameters() -> None:
    stubs = stub_functions()
    functions = {
        name
        for name, value in vars(native).items()
        if not name.startswith("_") and callable(value) and not inspect.isclass(value)
    }
    assert functions == set(stubs)
    for name in sorted(functions):
        taken = list(inspect.signature(getattr(native, name)).parameters)
        assert stubs[name] == taken, name
