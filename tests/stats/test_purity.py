"""`stats` is pure: numpy, scipy and the stdlib only, and no I/O (docs/architecture.md "The floors")."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

STATS = Path(__file__).resolve().parents[2] / "stats"
ALLOWED_THIRD_PARTY = {"numpy", "scipy", "stats"}
FORBIDDEN_STDLIB = {"sqlite3", "subprocess", "socket", "shutil", "tempfile", "urllib", "http", "io", "pathlib"}
FORBIDDEN_CALLS = {"open", "print", "input"}


def modules() -> list[Path]:
    return sorted(STATS.glob("*.py"))


def test_there_is_no_utils_module():
    assert not {"utils.py", "helpers.py"} & {p.name for p in modules()}


@pytest.mark.parametrize("path", modules(), ids=lambda p: p.name)
def test_imports_and_calls(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top == "__future__":
                continue
            assert top in ALLOWED_THIRD_PARTY or top in sys.stdlib_module_names, f"{path.name} imports {name}"
            assert top not in FORBIDDEN_STDLIB, f"{path.name} imports {name} (I/O)"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in FORBIDDEN_CALLS, f"{path.name} calls {node.func.id}()"
