"""A run's out-of-domain tool use in the general-agent setting (`stats.offdomain` over the store's tool calls)."""

from __future__ import annotations

from typing import Any

from stats import offdomain
from stats.ratio import Ratio
from storage import Store
from storage.rows import RunRow
from workbench.service.records.general import OffDomainMeasures, SettingShown

SETTING_KEYS = (
    "source",
    "count",
    "detail",
    "cost",
    "seed",
    "registry_size",
    "tool_block_tokens",
    "schema_tokens",
    "tokens_estimated",
)


def setting_of(run: RunRow) -> dict[str, Any] | None:
    """The run's recorded setting (`sandbox.extra_tools.registry.SettingRecord`; None: a plain run)."""
    setting = run["config"].get("extra_tools")
    return setting if isinstance(setting, dict) and setting else None


def setting_shown(setting: dict[str, Any]) -> SettingShown:
    """The fields of a recorded setting a report shows (None where the record lacks one)."""
    return {
        "source": setting.get("source"),
        "count": setting.get("count"),
        "detail": setting.get("detail"),
        "cost": setting.get("cost"),
        "seed": setting.get("seed"),
        "registry_size": setting.get("registry_size"),
        "tool_block_tokens": setting.get("tool_block_tokens"),
        "schema_tokens": setting.get("schema_tokens"),
        "tokens_estimated": setting.get("tokens_estimated"),
    }


def _pair(r: Ratio) -> list[float | int]:
    return r.as_list()


def offdomain_measures(store: Store, run: RunRow) -> OffDomainMeasures | None:
    """Out-of-domain call share (per run with its Wilson interval, per item, per tool, the share of trajectories
    with at least one), points and turns out of domain, of a run in the setting; None for a plain run."""
    setting = setting_of(run)
    if setting is None:
        return None
    ids = store.trajectory_columns(run["id"], ("id", "item_id"))
    by_id: dict[int, dict[str, Any]] = {  # `stats.offdomain.measures` input: item and calls
        tid: {"item_id": item, "calls": []} for tid, item in zip(ids["id"], ids["item_id"], strict=True)
    }
    for c in store.tool_calls(run["id"]):
        t = by_id.get(c["trajectory_id"])
        if t is not None:
            t["calls"].append(offdomain.Call(c["turn"], c["tool_name"], c["status"], c["cost"] or 0))
    m = offdomain.measures(list(by_id.values()), setting["tools"])
    return {
        "setting": setting_shown(setting),
        "share": m["share"].value,
        "share_counts": _pair(m["share"]),
        "share_interval": m["share_interval"],
        "trajectories_with_any": _pair(m["trajectories_with_any"]),
        "points": _pair(m["points"]),
        "points_per_trajectory": m["points_per_trajectory"].value,
        "turns": _pair(m["turns"]),
        "turns_per_trajectory": m["turns_per_trajectory"].value,
        "per_tool": m["per_tool"],
        "per_item": m["per_item"],
        "rejected": m["rejected"],
    }
