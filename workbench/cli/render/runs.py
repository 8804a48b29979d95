"""What `runs` and `merge` print: the runs in the store, and what a merge copied per run."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from workbench.cli.render.output import console, print_json
from workbench.service.runlist import RunListing
from workbench.views.cells import fraction, usd


def print_runs(rows: list[RunListing], fmt: str) -> None:
    from workbench.views.cells import dataset_cell, lineage_cell

    if fmt == "json":
        print_json(rows)
        return
    table = Table(title="runs", title_justify="left")
    for col in ("name", "agent / model", "family · tier", "data", "done", "acc", "cost", "status"):
        table.add_column(col, justify="right" if col in ("done", "acc", "cost") else "left")
    for r in rows:
        agent = r["agent"] + (f" {r['model']}" if r["model"] else "")
        if r["ablation"] != "full":
            agent += f" [{r['ablation']}]"
        cost = "unpriced" if r["cost_usd"] is None and r["model"] else usd(r["cost_usd"])
        cells = (
            r["name"],
            agent,
            lineage_cell(r.get("family"), r.get("tier")),
            dataset_cell(r["dataset"], r.get("dataset_repo"), r.get("dataset_revision")),
            f"{r['done']}/{r['planned']}",
            fraction(r["accuracy"]),
            cost,
            r["status"],
        )
        table.add_row(*map(Text, cells))
    console().print(table)


def print_merge(rows: list[dict[str, Any]], dest: str, fmt: str) -> None:
    """What `merge` did, per run: copied, already there, left out as unfinished; the run's state after it."""
    if fmt == "json":
        print_json({"store": dest, "runs": rows})
        return
    table = Table(title=f"merged into {dest}", title_justify="left")
    for col in ("run", "copied", "identical", "unfinished left out", "done", "status"):
        table.add_column(col, justify="left" if col in ("run", "status") else "right")
    for r in rows:
        name = r["name"] + (" (new)" if r["created"] else "")
        table.add_row(
            *map(
                Text,
                (
                    name,
                    str(r["copied"]),
                    str(r["identical"]),
                    str(r["partial_skipped"]),
                    f"{r['finished']}/{r['planned']}",
                    r["status"],
                ),
            )
        )
    console().print(table)
