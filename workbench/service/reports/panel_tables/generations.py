"""Figure 2: within-family generation gaps, every run of one generation of a family against every run of the next,
with the Table 2 axes that moved between them."""

from __future__ import annotations

import itertools
import re

from stats.axes import Table
from stats.significance import mcnemar_exact
from workbench.service.records.panel import GenerationGap, MovedAxis, PanelRow, cell
from workbench.service.reports.panel_tables.grouping import first_replicate

MOVED_AXES = ("PR st", "PR mt", "SR st", "SR mt", "Conv st", "Conv mt", "calls/turn")
GENERATION = re.compile(r"^[a-z]+[-_ ]?(\d+(?:\.\d+)?)(?![\d.])")
ACTIVE_PARAMETERS = re.compile(r"-a\d+(?:\.\d+)?b(?![a-z0-9])")  # `-a3b`, `-A4B`: a mixture of experts' active size


def architecture(model: str | None) -> str:
    """A model's architectural cohort for Figure 2: `moe` when its name carries an active-parameter suffix
    (`qwen3-30b-a3b`, `Qwen/Qwen3.6-35B-A3B`, `gemma-4-26b-a4b`), else `dense` (`qwen3-32b`, `gemma-3-27b-it`)."""
    name = (model or "").rsplit("/", 1)[-1].lower()
    return "moe" if ACTIVE_PARAMETERS.search(name) else "dense"


def generation(model: str | None) -> tuple[int, ...] | None:
    """The generation a model string names right after its lineage's name — `gemma-3-27b-it` → (3,),
    `qwen3.5-27b` → (3, 5), `Qwen/Qwen3.6-35B-A3B` → (3, 6) — or None (`claude-opus-4-6`, `deepseek-chat`: no
    number follows the name, so no generation can be read and the run is in no cohort)."""
    if not model:
        return None
    m = GENERATION.match(model.rsplit("/", 1)[-1].lower())
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def figure2(rows: list[PanelRow], tables: list[Table]) -> list[GenerationGap]:
    """Within-family generation gaps (see LEGEND["figure2"]): in each family and architectural cohort (dense with
    dense, MoE with MoE: `architecture`), the evaluated runs by the generation their model string names; every run
    of one generation against every run of the next (Gemma 3 → 4; dense Qwen 3 → 3.5; the Qwen MoE lineage 3.5 →
    3.6 — a dense → MoE step is no generation step), Δ accuracy and its McNemar p on one basis (replicate 0, the
    items both answered)."""
    cohorts: dict[tuple[str, str], dict[tuple[int, ...], list[int]]] = {}
    for i, row in enumerate(rows):
        gen, family = generation(row["model"]), row["family"]
        if family and gen is not None:
            cohorts.setdefault((family, architecture(row["model"])), {}).setdefault(gen, []).append(i)
    out = []
    for (fam, _arch), gens in sorted(cohorts.items()):
        steps = sorted(gens)
        for older_gen, newer_gen in itertools.pairwise(steps):
            for old in sorted(gens[older_gen], key=lambda i: rows[i]["run"]):
                for new in sorted(gens[newer_gen], key=lambda i: rows[i]["run"]):
                    out.append(_generation_gap(fam, rows[old], rows[new], tables[old], tables[new]))
                    out[-1]["generations"] = [".".join(map(str, older_gen)), ".".join(map(str, newer_gen))]
    return out


def _generation_gap(fam: str, old: PanelRow, new: PanelRow, t_old: Table, t_new: Table) -> GenerationGap:
    a, b = first_replicate(t_old), first_replicate(t_new)
    items = [i for i in a if i in b]
    test = mcnemar_exact([b[i] for i in items], [a[i] for i in items]) if items else None
    return {
        "run": new["run"],  # the row's run in the tidy CSV: the newer generation, whose gap it is
        "family": fam,
        "older": old["run"],
        "newer": new["run"],
        "delta": (sum(b[i] for i in items) - sum(a[i] for i in items)) / len(items) if items else None,
        "p": None if test is None else test["p"],
        "n": len(items),
        "moved": moved_axes(old, new),
    }


def moved_axes(old: PanelRow, new: PanelRow) -> list[MovedAxis]:
    """The Table 2 axes that moved from `old` to `new` by at least their step (calls per turn by 0.1, rates by 5
    points), the largest move first."""
    moved: list[MovedAxis] = []
    for axis in MOVED_AXES:
        x, y = cell(old, axis), cell(new, axis)
        least = 0.1 if axis == "calls/turn" else 0.05
        if x is not None and y is not None and abs(y - x) >= least:
            moved.append({"axis": axis, "delta": y - x})
    moved.sort(key=lambda m: -abs(m["delta"]))
    return moved
