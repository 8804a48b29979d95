"""The sequential side's JSON outputs held to their recorded text: `scale sequential`, `scale strategies`,
`scale plateau --group` and `scale tools` with `--format json`, on a small store of the built-in benchmark played by
the scripted heuristic agent. The records these commands are built from may change type; their JSON may not.

`AGENTHOP_RECORD_JSON=1 pytest tests/test_sequential_json.py` records the files again (on purpose only: look at the
diff)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_inprocess import batch

HELD = Path(__file__).parent / "data" / "sequential_json"
COMMON = ("--agent", "heuristic", "--limit", "4", "--quiet", "--format", "json")
PLATEAU = ("--boot", "200", "--boot-seed", "7")


@pytest.fixture
def outputs(tmp_path, capsys) -> dict[str, str]:
    db = str(tmp_path / "s.sqlite")

    def run(*args: str) -> str:
        proc = batch(capsys, *args, "--db", db)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.replace(str(tmp_path), "<tmp>")

    return {
        "sequential": run("scale", "sequential", "--axis", "points", "--grid", "4,8", "--run", "P", *PLATEAU, *COMMON),
        "sequential-strategies": run(
            "scale",
            "sequential",
            "--axis",
            "turns",
            "--grid",
            "3,6",
            "--strategy",
            "continue,summarize,verifier",
            "--run",
            "S",
            *PLATEAU,
            *COMMON,
        ),
        "plateau": run("scale", "plateau", "--group", "P", "--format", "json", *PLATEAU),
        "strategies": run("scale", "strategies", "--group", "S", "--format", "json", *PLATEAU),
        "strategies-study-cost": run(
            "scale", "strategies", "--group", "S", "--format", "json", "--cost-mode", "study", *PLATEAU
        ),
        "tools": run("scale", "tools", "--counts", "0,8", "--detail", "names", "--run", "T", *COMMON),
    }


def test_sequential_json_outputs_are_held_to_their_recorded_text(outputs):
    if os.environ.get("AGENTHOP_RECORD_JSON") == "1":
        HELD.mkdir(parents=True, exist_ok=True)
        for name, text in outputs.items():
            (HELD / f"{name}.json").write_text(text)
    for name, text in outputs.items():
        held = (HELD / f"{name}.json").read_text()
        assert text == held, f"`{name}` JSON differs from {HELD / name}.json"
