"""What each entry point imports: --batch never loads textual; the TUI never loads litellm (nor the sandbox at startup)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _env(tmp_path) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "AGENTHOP_DB": str(tmp_path / "s.sqlite"),
        "AGENTHOP_CACHE": str(tmp_path / "cache"),
        "AGENTHOP_CONFIG": str(tmp_path / "c.toml"),
        "AGENTHOP_STATE": str(tmp_path / "state.toml"),
    }
    env.pop("TEXTUAL_THEME", None)
    return env


def test_batch_runs_never_imports_textual(tmp_path, seeded):
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "workbench.cli", "--batch", "runs", "--db", str(seeded)],
        cwd=ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "heur-s0" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "workbench.cli" in imported or "storage" in imported
    assert not [m for m in imported if m == "textual" or m.startswith("textual.")]
    assert "workbench.tui.app" not in imported and "themes" not in imported


def test_tui_startup_imports_neither_litellm_nor_the_sandbox(tmp_path, seeded):
    code = """
import asyncio, sys
from workbench.cli.interactive import build_app
app = build_app(["--db", sys.argv[1]])
async def main():
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        assert type(app.screen).__name__ == "RunsScreen"
asyncio.run(main())
light = ("sandbox", "sandbox.datasets",  # how datasets are named: pathlib only (tests/test_items.py holds it so)
         "sandbox.sections",  # the label-resolution version the start-up check compares with: re only
         "sandbox.citations",  # the read-hop rule the same check and the steppers compare with: networkx only lazily
         "sandbox.hub")  # what an `hf:` spec is, for the launch form's check: the standard library; the Hub client lazily
heavy = sorted(m for m in sys.modules
               if m.split(".")[0] in ("litellm", "sandbox", "scipy", "plotext", "networkx") and m not in light)
print("HEAVY", heavy)
"""
    proc = subprocess.run(
        [sys.executable, "-c", code, str(seeded)],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout, proc.stdout
