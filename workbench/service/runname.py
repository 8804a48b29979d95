"""What a run may be called, and what it is called when nobody says: one rule for `--batch` and the launch form.

Both front ends call these functions, so the same choices get the same name and the same refusals from
either (a 300-character name, one with a newline), and a command and a form that agree make one run, not two.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

MAX_LENGTH = 80


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a run ("at most 80 characters"), or None. Names are compared as typed, stripped."""
    return label_problem(name, "a run name", MAX_LENGTH)


def label_problem(text: str, what: str, max_length: int) -> str | None:
    """Why `text` cannot be a label a person types (a run name, a family), or None: one rule, one wording."""
    if not text.strip():
        return f"{what} is needed"
    if len(text.strip()) > max_length:
        return f"at most {max_length} characters"
    if any(not ch.isprintable() for ch in text):
        return "printable characters only"
    return None


def default_name(agent: str, model: str | None, dataset: str, ablation: str = "full", seed: int = 0) -> str:
    """`heuristic-builtin`, `openai_gpt-4.1-myrelease-no-search-seed3`: the model (or agent), the dataset's
    folder name, then the ablation and the seed where they are not the defaults. Deterministic, so running the
    same command again resumes the same run."""
    who = model.strip().replace("/", "_") if agent == "llm" and model and model.strip() else agent
    data = "builtin" if dataset == "builtin" else (Path(dataset).name or "release")
    suffix = ("" if ablation == "full" else f"-{ablation}") + (f"-seed{seed}" if seed else "")
    return f"{who}-{data}{suffix}"


def unique_name(base: str, existing: Collection[str]) -> str:
    """`base`, or `base-2`, `base-3`, … : the first not in `existing` (the form proposes a new run, not a resume)."""
    if base not in existing:
        return base
    n = 2
    while f"{base}-{n}" in existing:
        n += 1
    return f"{base}-{n}"
