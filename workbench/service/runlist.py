"""The runs list (the TUI's home screen and `--batch runs`): progress, accuracy and cost per run.

Apart from `reports`, which loads numpy and the statistics, so that listing runs and the
TUI's first paint stay light: nothing here computes a metric, it only divides two counts.
"""

from __future__ import annotations

from typing import TypedDict

from storage import Store


def natural_key(name: str) -> tuple[tuple[int, int, str], ...]:
    """A run name as people order it: its digit runs by value, the rest case-insensitively (`seqt@8k` before
    `seqt@16k`, `r2` before `r10`). Each part is (kind, number, text), so any two names compare."""
    parts, digits, text = [], "", ""
    for ch in name:
        if ch.isdigit() and ch.isascii():
            if text:
                parts.append((1, 0, text.casefold()))
                text = ""
            digits += ch
        else:
            if digits:
                parts.append((0, int(digits), digits))
                digits = ""
            text += ch
    if digits:
        parts.append((0, int(digits), digits))
    if text:
        parts.append((1, 0, text.casefold()))
    return tuple(parts)


class RunListing(TypedDict):
    """One row of the runs list: the run's name, agent, model and lineage (`families.lineage`), dataset, ablation,
    progress (finished final trajectories of planned), accuracy over them, their cost (None when none is priced),
    status (a running run whose process is gone: `interrupted`) and creation time."""

    name: str
    agent: str
    model: str | None
    family: str | None
    tier: str | None
    dataset: str
    dataset_repo: str | None
    dataset_revision: str | None
    ablation: str
    done: int
    planned: int
    accuracy: float | None
    cost_usd: float | None
    status: str
    created_at: str


def runs_table(store: Store) -> list[RunListing]:
    """Rows of the runs list: name, agent/model, dataset, progress, accuracy, cost, status. A run recorded as
    running whose process is gone (SIGKILL, a power cut: nothing could mark it) is shown as interrupted."""
    from storage.locks import holder
    from workbench.service.families import lineage

    rows: list[RunListing] = []
    for stored in store.runs():
        # a run whose process is gone (killed, machine rebooted) is interrupted: resumable
        gone = stored["status"] == "running" and holder(store.path, stored["name"]) is None
        r = {**stored, "status": "interrupted"} if gone else stored
        family, tier = lineage(r)
        rows.append(
            {
                "name": r["name"],
                "agent": r["agent"],
                "model": r["model"],
                "family": family,
                "tier": tier,
                "dataset": r["dataset"],
                "dataset_repo": r.get("dataset_repo"),  # the Hub repository and commit (None: not from the Hub)
                "dataset_revision": r.get("dataset_revision"),
                "ablation": r["ablation"],
                "done": r["done"],
                "planned": r["planned"],
                "accuracy": (r["n_correct"] / r["done"]) if r["done"] else None,
                "cost_usd": r["cost"] if r["n_costed"] else None,
                "status": r["status"],
                "created_at": r["created_at"],
            }
        )
    return rows


class TagError(ValueError):
    """A family or tier that cannot tag a run (the message names the field); nothing was written."""

    exit_code = 2


class RunTag(TypedDict):
    """A run's family and tier as stored after `tag_run`."""

    run: str
    family: str | None
    tier: str | None


def tag_run(store: Store, name: str, family: str | None = None, tier: str | None = None) -> RunTag:
    """Set a run's family and/or tier (`runs tag`, the runs screen's `t`); "auto" derives that one from the run's
    model again. Returns the run's (family, tier) as now stored. Raises StoreError for an unknown run and TagError
    for a bad value, before writing anything."""
    from workbench.service import families

    run = store.run(name)
    if family is None and tier is None:
        raise TagError("give --family, --tier or both")
    derived_family, derived_tier = families.derive(run.get("model"))
    fields: dict[str, str | None] = {}
    if family is not None:
        if family.strip().lower() == "auto":
            fields["family"] = derived_family
        elif families.family_problem(family):
            raise TagError(f"family: {families.family_problem(family)}")
        else:
            fields["family"] = families.normal_family(family)
    if tier is not None:
        if tier.strip().lower() == "auto":
            fields["tier"] = derived_tier
        elif families.tier_problem(tier):
            raise TagError(f"tier: {families.tier_problem(tier)}")
        else:
            fields["tier"] = families.normal_tier(tier)
    store.update_run(run["id"], **fields)
    stored = store.run(name)
    return {"run": name, "family": stored["family"], "tier": stored["tier"]}
