"""The runs list (the TUI's home screen and `--batch runs`): progress, accuracy and cost per run.

Apart from `reports`, which loads numpy and the statistics, so that listing runs and the
TUI's first paint stay light: nothing here computes a metric, it only divides two counts.
"""
from __future__ import annotations

from typing import Any

from storage import Store


def runs_table(store: Store) -> list[dict[str, Any]]:
    """Rows of the runs list: name, agent/model, dataset, progress, accuracy, cost, status. A run recorded as
    running whose process is gone (SIGKILL, a power cut: nothing could mark it) is shown as interrupted."""
    from storage.locks import holder

    rows = []
    for r in store.runs():
        if r["status"] == "running" and holder(store.path, r["name"]) is None:
            r = {**r, "status": "interrupted"}  # its process is gone (killed, machine rebooted): resumable
        rows.append({
            "name": r["name"], "agent": r["agent"], "model": r["model"], "dataset": r["dataset"],
            "ablation": r["ablation"], "done": r["done"], "planned": r["planned"],
            "accuracy": (r["n_correct"] / r["done"]) if r["done"] else None,
            "cost_usd": r["cost"] if r["n_costed"] else None, "status": r["status"], "created_at": r["created_at"],
        })
    return rows
