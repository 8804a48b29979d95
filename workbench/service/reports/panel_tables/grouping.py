"""How the further tables group the panel's runs and read their outcomes: a model's key (what makes runs
ablations, or separately stored runs, of one model), a row's tier, a run's replicate-0 outcome per item."""

from __future__ import annotations

from stats.axes import Table
from workbench.service.families import TIERS
from workbench.service.records.panel import PanelRow

ModelKey = tuple[str, str | None, str | None]  # agent, model, dataset


def model_key(row: PanelRow) -> ModelKey:
    """What makes runs ablations of one model: agent, model and dataset."""
    return (row["agent"], row["model"], row.get("dataset"))


def tier_of(row: PanelRow) -> str | None:
    """The row's tier when it is one of the paper's (`workbench.service.families.TIERS`), else None (untiered)."""
    tier = row.get("tier")
    return tier if tier in TIERS else None


def first_replicate(table: Table) -> dict[str, bool]:
    """Per item: the run's replicate-0 outcome (right or wrong)."""
    first = table["replicate"] == 0
    return dict(zip(table["item_id"][first].tolist(), table["correct"][first].astype(bool).tolist(), strict=True))
