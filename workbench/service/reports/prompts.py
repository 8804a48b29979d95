"""Whether runs read side by side were told the same things: what the agent was told changes what it does, so a
difference between two runs that used different prompts may be the prompts' and not the models'. `report`, `compare`
and the panel say so from what each run recorded (its prompt hash, and the prompts' digest in its identity when they
were not ours)."""

from __future__ import annotations

from collections.abc import Sequence

from storage.rows import RunRow


def custom(run: RunRow) -> bool:
    """The run was told something other than our defaults (`--prompts` with texts of its own)."""
    return "prompts" in (run.get("identity") or {})


def label(run: RunRow) -> str:
    """'ours' or 'a prompts file', with the first 12 hex digits of the recorded hash."""
    digest = (run.get("prompt_hash") or "unrecorded")[:12]
    return f"{'a prompts file' if custom(run) else 'ours'} {digest}"


def prompt_warnings(runs: Sequence[RunRow], who: str) -> list[str]:
    """A warning when runs read side by side were sent different prompts (their recorded hashes differ)."""
    groups: dict[str | None, list[str]] = {}
    labels: dict[str | None, str] = {}
    for run in runs:
        groups.setdefault(run.get("prompt_hash"), []).append(run["name"])
        labels.setdefault(run.get("prompt_hash"), label(run))
    if len(groups) < 2:
        return []
    listed = " | ".join(f"{labels[h]}: {', '.join(names)}" for h, names in groups.items())
    return [
        f"{who} used different prompts ({listed}): a difference between them may be the prompts' "
        "(`prompts show RUN` prints each)"
    ]


def report_note(run: RunRow) -> str | None:
    """The legend line of a run told something other than our defaults."""
    if not custom(run):
        return None
    return (
        f"this run used its own prompts (a prompts file, hash {(run.get('prompt_hash') or '')[:12]}), not the "
        f"workbench's: `prompts show {run['name']}` prints them"
    )
