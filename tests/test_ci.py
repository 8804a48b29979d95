"""`.ci/run` is the README's test command in a fresh virtual environment (issue 2's contract)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_exactly_the_readme_test_command_in_a_fresh_venv():
    blocks = re.findall(r"```bash\n(.*?)\n```", (ROOT / "README.md").read_text(), flags=re.S)
    test_command = next(b.strip() for b in blocks if "pytest" in b)
    lines = [
        ln.split("  #")[0].strip()
        for ln in (ROOT / ".ci/run").read_text().splitlines()
        if ln.strip() and not ln.lstrip().startswith("#")
    ]
    assert lines[-1] == test_command
    venv = next(ln for ln in lines if " -m venv " in ln)
    assert "--clear" in venv.split()  # an existing .venv is emptied, never reused
