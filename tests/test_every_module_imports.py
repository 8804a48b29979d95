"""Every module of the product imports: a name moved under `if TYPE_CHECKING:` (which mypy accepts) but still
imported at run time by another module fails here, not in front of a user."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

PACKAGES = ("sandbox", "stats", "storage", "workbench", "themes", "agenthop_workbench")


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        root = importlib.import_module(package)
        names.append(package)
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if not info.name.endswith("__main__"):  # runs the entry point when imported
                names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_module_imports(name: str) -> None:
    importlib.import_module(name)
