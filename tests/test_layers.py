"""The package floors of docs/architecture.md, checked by a machine: import-linter's contracts in pyproject.toml, and the
facts a contract cannot see (every workbench module is on a floor; no store query outside storage/)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> dict[str, dict]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {c["id"]: c for c in config["contracts"]}


def test_the_import_contracts_hold(monkeypatch):
    monkeypatch.chdir(ROOT)  # lint-imports reads ./pyproject.toml
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml")) == 0


def test_workbench_holds_only_its_floors():
    """`ls workbench/` shows the floors: folders (the front ends, the application layer, the views) and no loose
    module beside them."""
    loose = {p.name for p in (ROOT / "workbench").glob("*.py") if p.name != "__init__.py"}
    assert loose == set()
    assert {p.name for p in (ROOT / "workbench").iterdir() if (p / "__init__.py").exists()} == {
        "cli",
        "tui",
        "mcp",
        "service",
        "views",
    }


def test_every_workbench_module_stands_on_a_floor():
    """A new front end or application-layer module must be named in the layers contract, or the contract would not
    see it (the application layer's modules sit on two floors, so each is named)."""
    named = {m.strip() for layer in _contracts()["floors"]["layers"] for m in re.split(r"[:|]", layer)}
    service = ROOT / "workbench" / "service"
    modules = {
        f"workbench.{p.name}"
        for p in (ROOT / "workbench").iterdir()
        if p.is_dir() and (p / "__init__.py").exists() and p.name != "service"
    }
    modules |= {f"workbench.service.{p.stem}" for p in service.glob("*.py") if p.stem != "__init__"}
    modules |= {f"workbench.service.{p.name}" for p in service.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert modules - named == set()


def test_the_front_ends_have_one_door():
    """Every front end reaches the sandbox and the store through the application layer, the plain records
    excepted; and the application layer never words what it returns (the views do)."""
    door = _contracts()["one-door"]
    assert set(door["source_modules"]) == {"workbench.cli", "workbench.tui", "workbench.mcp", "agenthop_workbench"}
    assert set(door["forbidden_modules"]) == {"sandbox", "storage"}
    assert door["ignore_imports"] == [
        "workbench.** -> sandbox.records",
        "workbench.** -> storage.rows",
        "workbench.** -> storage.json_types",
    ]
    data = _contracts()["service-returns-data"]
    assert data["source_modules"] == ["workbench.service"] and data["forbidden_modules"] == ["workbench.views"]


def test_every_tui_module_stands_on_a_tui_floor():
    """Inside workbench/tui/ too: a module at its root must be named in the tui layers (screens/ and widgets/ are
    whole floors), or a widget could import it while it imports a screen."""
    named = {m.strip() for layer in _contracts()["tui-floors"]["layers"] for m in re.split(r"[:|]", layer)}
    tui = ROOT / "workbench" / "tui"
    modules = {p.stem for p in tui.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in tui.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert modules - named == set()


def test_no_store_query_outside_storage():
    """The application layer asks the store's API; only storage/ holds the connection (`.conn`)."""
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for pkg in ("workbench", "sandbox", "stats")
        for p in (ROOT / pkg).rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bstore\w*\.conn\b", line)
    ]
    assert offenders == []


def test_the_views_never_write():
    """workbench/views/ returns text (cells, lines, tables, figures); only cli/render/ and the TUI put it anywhere."""
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in (ROOT / "workbench" / "views").rglob("*.py")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bprint\(|sys\.std(out|err)|\bConsole\(", line)
    ]
    assert offenders == []


PRODUCT = ("agenthop_workbench", "workbench", "sandbox", "stats", "storage", "themes")
ROOM = 750  # lines: a module a newcomer can hold in their head (docs/architecture.md, "Rooms")


def test_no_product_module_is_larger_than_a_room():
    """Every module of the product fits in a room: one past it is split along its own seams, not cut at the line."""
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for package in PRODUCT
        for path in (ROOT / package).rglob("*.py")
    }
    assert len(sizes) > 200  # the walk found the product
    assert {name: n for name, n in sizes.items() if n > ROOM} == {}


def test_the_tui_form_models_are_plain():
    """The screens' logic lives in workbench/tui/forms, which knows no Textual (a contract): the forms package exists
    and is held by its contract."""
    contract = _contracts()["forms-plain"]
    assert contract["source_modules"] == ["workbench.tui.forms"]
    assert {"textual", "rich"} <= set(contract["forbidden_modules"])
    assert len(list((ROOT / "workbench" / "tui" / "forms").glob("*.py"))) > 5
