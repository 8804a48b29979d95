"""A play session in words: what the player should know before playing (the plan is `workbench.service.play`'s)."""

from __future__ import annotations

from typing import Any

from workbench.views.cells import counted


def _ids(ids: list[str]) -> str:
    return f"{', '.join(ids[:6])}{' …' if len(ids) > 6 else ''}"


def session_notes(plan: Any) -> list[str]:
    """One sentence for each thing the player should know about the session's items: those left out because they
    were played before, and those replayed after the gold answer was seen."""
    out = []
    if plan.left_out:
        ids = sorted(plan.left_out)
        out.append(
            f"left out {counted(len(ids), 'item')} you played before: {_ids(ids)}"
            " (include them to replay; a replay is marked and left out of the leaderboard)"
        )
    if plan.replayed:
        ids = sorted(plan.replayed)
        out.append(
            f"replaying {_ids(ids)}: you saw the gold answer; these plays are marked 'replayed' and left out "
            "of the leaderboard"
        )
    return out
