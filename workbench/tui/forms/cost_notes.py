"""What an LLM run will cost, said in the launch form before Start: the estimate for the episodes its slice plays,
and a token cap every episode's first model call would cross (a warning, not a refusal)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def llm_notes(
    spec: Any,
    tokens: int,
    episodes: tuple[int, bool] | None,
    fresh: bool,
    store_path: Path | None,
    notes_memo: dict | None,
) -> list[str]:
    """An LLM run's notes: a token cap every first call would cross, and the cost estimate for the `episodes` the
    slice plays (exact only for a `fresh` run: a resumed one skips those it stored), kept in `notes_memo` between
    keystrokes: it reads the store."""
    from workbench.service.estimate import prompt_overhead

    n = None if episodes is None else episodes[0]
    exact = bool(episodes is not None and episodes[1] and fresh)
    notes = []
    overhead = prompt_overhead(spec.effective_caps(), spec.ablation, spec.extra_tools, spec.prompts)
    if tokens <= overhead:
        notes.append(
            f"⚠ tokens: {tokens:,} is at or below the prompt overhead (~{overhead:,} tokens of rules and "
            "tool schemas before the question): every episode stops at its first model call"
        )
    key = (str(store_path), spec.model, json.dumps(spec.agent_options, sort_keys=True, default=str), n, exact)
    memo = notes_memo if notes_memo is not None else {}
    if key not in memo:
        memo[key] = llm_cost_note(spec, n, exact, store_path)
    notes.append(memo[key])
    return notes


def llm_cost_note(spec, episodes: int | None, exact: bool, store_path: Path | None) -> str:
    """The cost estimate shown before an LLM run starts (an upper bound when the count is)."""
    from workbench.service.estimate import per_episode
    from workbench.views.estimate import cost_line

    if episodes is None:
        return "cost: the dataset's size is unknown until it is opened"
    if store_path is None:
        from workbench.service.paths import store_path as default_store

        store_path = default_store()
    return "cost " + cost_line(per_episode(spec, store_path), episodes, upper_bound=not exact)
