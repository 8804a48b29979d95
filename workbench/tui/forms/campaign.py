"""The campaign screen's model: each run's row (its cells, with its progress once started), the plan's line and
the line of a campaign under way, and whether a typed path names a campaign file to open.

The plan, its estimates and the totals are `workbench.service.campaign`'s (what `--batch campaign` computes); this
is their wording on the screen. Text here is unsanitised: the screen makes it safe to show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.service.campaign.preview import RunPreview, total_cost
from workbench.views.campaign import totals_line
from workbench.views.cells import usd

MARKS = {"done": "✓", "running": "▶", "interrupted": "■", "failed": "✗", "not started": "·", "left": "·"}
NUMERIC = ("episodes", "done", "cost")  # the columns whose cells are right-aligned

Progress = tuple[int, int, str]  # a run's episodes done, planned, its status


def row_cells(preview: RunPreview, progress: Progress) -> tuple[str, ...]:
    """A run's cells: run, model, endpoint, episodes, done of planned, estimated cost (a scripted agent's `—`: it
    costs nothing), its status with its mark."""
    done, planned, status = progress
    return (
        preview.name,
        preview.model,
        preview.endpoint,
        str(planned),
        f"{done}/{planned}",
        "—" if preview.scripted else usd(preview.cost_usd),
        f"{MARKS.get(status, ' ')} {status}",
    )


def plan_line(previews: list[RunPreview]) -> str:
    """The plan's totals: runs, endpoints, episodes (done), the estimated cost of what is left."""
    episodes = sum(p.episodes for p in previews)
    done = sum(p.already_done for p in previews)
    cost, unpriced = total_cost(previews)
    endpoints = len({p.endpoint for p in previews})
    unpriced_note = f" (+ {unpriced} unpriced runs)" if unpriced else ""
    return (
        f"{len(previews)} runs on {endpoints} endpoint(s) · {episodes} episodes, {done} done · "
        f"estimated cost of the rest {usd(cost)}{unpriced_note} · ctrl+r starts (finished episodes are kept)"
    )


def running_line(name: str, totals: Any, status: str, message: str) -> str:
    """A campaign under way (or ended): its totals (`views.campaign.totals_line`), its status and why it stopped."""
    return f"{totals_line(name, totals)} · {status}" + (f": {message}" if message else "")


def shard_note(shard: str, path: Path, store: Path) -> str:
    """What the screen plans on a shard's store: that shard, as the CLI command for it runs it."""
    return (
        f"shard {shard}: this store holds the campaign's shard {shard}, so that shard is planned and ctrl+r runs it "
        f"(as `agenthop-tui --batch campaign run {path} --shard {shard} --db {store}`)"
    )


def path_problem(text: str) -> str | None:
    """Why `text` names no campaign file to open, or None."""
    path = Path(text.strip()).expanduser()
    return None if path.is_file() else f"no file at {path}"
