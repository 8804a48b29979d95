"""The registry-size ablation of the general-agent setting as one group (`scale tools`): the same items with 0, 8,
16, 40 … out-of-domain tools at each description detail, one run per level, then the registry-size table (the
scaling study's Table 8, arXiv 2602.18998 App. B.8; `workbench.service.reports.general.registry_table`).

Levels are named `NAME@plain` (count 0: the plain run, once, whatever the details) and `NAME@tools{N}-{detail}`,
grouped under NAME with kind `tools`; each is an ordinary run, so running the same command again resumes every
level, and a level with another setting than recorded is refused by its identity. The counts are nested by the
order seed (`sandbox.extra_tools.registry.select`): the 8 tools are among the 16, which are among the 40.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from storage import Store
from storage.rows import StoredRun
from workbench.service.records.sequential import ToolsReport
from workbench.service.scaling.sequential import ScalingInputError, recorded_scaling

DETAILS = ("full", "short", "names")
KIND = "tools"


def parse_counts(text: str) -> list[int]:
    """--counts as distinct whole numbers in increasing order (at least two, for a table to compare)."""
    try:
        counts = sorted({int(t) for t in text.split(",") if t.strip()})
    except ValueError:
        raise ScalingInputError(f"--counts must be whole numbers, e.g. 0,8,16,40; got {text!r}") from None
    if len(counts) < 2 or counts[0] < 0:
        raise ScalingInputError("--counts needs at least two tool counts of 0 or more, e.g. 0,8,16,40")
    return counts


def parse_details(text: str) -> list[str]:
    """--detail as levels of `DETAILS`, in that order."""
    wanted = {t.strip() for t in text.split(",") if t.strip()}
    unknown = wanted - set(DETAILS)
    if unknown or not wanted:
        raise ScalingInputError(f"--detail: choose from {', '.join(DETAILS)} (comma-separated), got {text!r}")
    return [d for d in DETAILS if d in wanted]


def level_name(group: str, count: int, detail: str) -> str:
    return f"{group}@plain" if count == 0 else f"{group}@tools{count}-{detail}"


def levels(counts: list[int], details: list[str]) -> list[tuple[int, str]]:
    """(count, detail) of every level: the plain run once, then each count at each detail."""
    out = [(0, "full")] if 0 in counts else []
    return out + [(c, d) for c in counts if c > 0 for d in details]


def tools_specs(
    group: str, counts: list[int], details: list[str], spec_of: Callable[[str, int, str], Any]
) -> list[Any]:
    """One RunSpec per level, grouped and marked; `spec_of(name, count, detail)` builds a level's spec (the launch
    service's, so a level is exactly the run `run --extra-tools … --extra-tools-count N` would make)."""
    specs = []
    for count, detail in levels(counts, details):
        spec = spec_of(level_name(group, count, detail), count, detail)
        specs.append(
            replace(
                spec,
                group=group,
                kind=KIND,
                scaling={"mode": KIND, "count": count, "detail": None if count == 0 else detail},
            )
        )
    return specs


def tools_group(store: Store, group: str) -> list[str]:
    """The names of a tools group's runs (plain first, then by count and detail)."""
    runs = [r for r in store.runs_in_group(group) if r["kind"] == KIND]
    if not runs:
        raise ScalingInputError(
            f"no registry-size runs in group '{group}' (`scale tools` makes them, its --run naming the group)"
        )

    def order(r: StoredRun) -> tuple[int, int]:
        s = recorded_scaling(r)
        return int(s.get("count") or 0), DETAILS.index(s["detail"]) if s.get("detail") in DETAILS else -1

    return [r["name"] for r in sorted(runs, key=order)]


def tools_report(store: Store, group: str, n_boot: int = 2_000) -> ToolsReport:
    """The group's registry-size table (`registry_table`), with the group's name."""
    from workbench.service.reports.general import registry_table

    table = registry_table(store, tools_group(store, group), n_boot=n_boot)
    if table is None:
        raise ScalingInputError(f"group '{group}' holds no run with extra tools")
    return ToolsReport(group=group, **table)
