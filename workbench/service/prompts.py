"""The prompts in force, for the front ends: a `--prompts` file loaded and checked, ours exported as a file to start
from, a stored run's printed back, and whether runs read side by side were told different things.

What the agent was told changes what it does, so a difference in accuracy between two runs that used different
prompts may be the prompts' and not the models': `report`, `compare` and the panel say so (`prompt_warnings`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TypedDict

from sandbox.prompt_set import DEFAULT_PROMPTS, Prompts, load_prompts, to_toml
from storage.rows import StoredRun


def load(path: str | Path) -> Prompts:
    """A prompts file, checked in full (`sandbox.prompt_set.PromptsError`, exit 2, naming line, key, placeholder)."""
    return load_prompts(path)


def export_text() -> str:
    """Today's defaults as a commented prompts file: every key, what it is and its placeholders."""
    return to_toml(DEFAULT_PROMPTS)


class StoredPrompts(TypedDict):
    """What a stored run was told (`prompts show --run`)."""

    run: str
    text: str | None
    prompt_hash: str | None
    custom: bool
    version: str | None


def stored(run: StoredRun) -> StoredPrompts:
    """What a stored run was told: its prompts file (None for a run stored before prompts were recorded: the
    defaults of the version that made it), its recorded hash, and whether the prompts were ours."""
    return {
        "run": run["name"],
        "text": run["prompts"],
        "prompt_hash": run["prompt_hash"],
        "custom": "prompts" in run["identity"],
        "version": run["version"],
    }
