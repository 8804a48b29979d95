"""The general-agent setting in the reports: out-of-domain tool use, the run against its plain counterpart, and the
registry-size table (the scaling study, arXiv 2602.18998 §2.2 and App. B.8, Tables 7–8).

A run in the setting records it in its config (`extra_tools`: which tools, how many, detail, cost, order seed,
the registry's tokens in the prompt). Its *plain counterpart* is the run of the same store with the same identity
apart from the setting (and the heuristic's distractible knob, which does nothing without extra tools): the same
agent, model, caps, seed, ablation and dataset. Against it the run's accuracy and four axes are compared on common
items by `compare_report` (Δ with a paired bootstrap interval, exact McNemar).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from statistics import median
from typing import Any, Final

from stats import offdomain
from storage import Store
from storage.json_types import JsonObject, JsonValue
from storage.rows import RunRow, StoredRun
from workbench.service.records.compare import CompareRow
from workbench.service.records.general import AgainstPlain, GeneralBlock, PlainRow
from workbench.service.records.panel import PanelReport
from workbench.service.records.report import RunReport, RunTransitions
from workbench.service.records.sequential import RegistryRow, RegistryTable
from workbench.service.reports import panel as _panel
from workbench.service.reports import run as _run
from workbench.service.reports.compare import compare_report
from workbench.service.reports.offdomain import offdomain_measures, setting_of

IGNORED_OPTIONS = ("distractible",)  # a knob that acts only when extra tools are offered


def _plain_identity(identity: JsonObject) -> JsonObject:
    """The identity of a run's plain counterpart: without the setting (and the scaling of a `scale tools` level),
    the knobs that act only with extra tools dropped, the extra tools' costs left out of the caps."""
    out = {k: v for k, v in identity.items() if k != "extra_tools"}
    if _object(identity.get("scaling")).get("mode") == "tools":  # a level of a `scale tools` group
        out.pop("scaling")
    options = _object(identity.get("agent_options"))
    out["agent_options"] = {k: v for k, v in options.items() if k not in IGNORED_OPTIONS}
    out["caps"] = _plain_caps(_object(out.get("caps")), _object(identity.get("extra_tools")).get("tools"))
    return out


def _object(value: JsonValue) -> JsonObject:
    """A JSON value read as an object: {} where it is absent or null."""
    return value if isinstance(value, dict) else {}


def _plain_caps(caps: JsonObject, extra_tools: JsonValue) -> JsonObject:
    """The caps without the costs of the extra tools (`extra_tools`: their names)."""
    out = dict(caps)
    costs = out.get("costs")
    if isinstance(costs, dict):
        tools = {t for t in extra_tools if isinstance(t, str)} if isinstance(extra_tools, list) else set()
        out["costs"] = {k: v for k, v in costs.items() if k not in tools}
    return out


def plain_counterpart(store: Store, run: RunRow) -> str | None:
    """The name of the run's plain counterpart in the store (the first created), or None."""
    want = _plain_identity(run.get("identity") or {})
    for other in store.runs():
        if (
            other["name"] != run["name"]
            and not (other.get("identity") or {}).get("extra_tools")
            and _plain_identity(other.get("identity") or {}) == want
        ):
            return other["name"]
    return None


def against_plain(store: Store, plain: str, name: str, n_boot: int = 10_000) -> AgainstPlain:
    """The run against the plain run on common items: accuracy and the axes with Δ, interval and McNemar p."""
    cmp = compare_report(store, plain, name, n_boot=n_boot)
    return {"plain": plain, "run": name, "n_common": cmp["n_common"], "rows": [plain_row(r) for r in cmp["rows"]]}


def plain_row(row: CompareRow) -> PlainRow:
    """A compare row cut to what the comparison with the plain run shows."""
    return {
        "axis": row["axis"],
        "a": row["a"],
        "b": row["b"],
        "delta": row["delta"],
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
        "p": row["p"],
        "n": row["n"],
    }


def general_block(store: Store, run: RunRow, n_boot: int = 10_000) -> GeneralBlock | None:
    """What `report` adds for a run in the setting: its measures, and the comparison with its plain counterpart."""
    setting = setting_of(run)
    measures = offdomain_measures(store, run)
    if setting is None or measures is None:
        return None
    plain = plain_counterpart(store, run)
    return {
        **measures,
        "against_plain": against_plain(store, plain, run["name"], n_boot) if plain else None,
        "transitions": other_transitions(store, run, setting["tools"]),
    }


def other_transitions(store: Store, run: RunRow, tools: Collection[str]) -> offdomain.TransitionMatrix:
    """The run's transition matrix with its out-of-domain calls (those not to the setting's `tools`) as one
    `other` tool (`stats.offdomain`)."""
    sequences = store.trajectory_columns(run["id"], ("tool_sequence",))["tool_sequence"]
    return offdomain.transitions_with_other([s or [] for s in sequences], tools)


def registry_table(store: Store, names: Sequence[str], n_boot: int = 2_000) -> RegistryTable | None:
    """The registry-size table over runs (the study's Table 8): per run its count, detail, the tools' tokens in the
    prompt (`tool_tokens`), accuracy with Δ against the plain run (exact McNemar p), the out-of-domain share, and the
    mechanism by the study's rule (`stats.offdomain.mechanism`). None when no run is in the setting.

    The plain run (the one among `names` without the setting, else the counterpart in the store) is the study's
    *irrelevant tools filtered* level: the general-setting prompt with every out-of-domain tool removed, only the
    task's own seven tools left. A level's accuracy is over the items it shares with the plain run, replicate 0 —
    the items its Δ and p are computed on — and the plain row's over the items every level shares with it.
    """
    runs = [store.run(n) for n in names]
    general = [(r, s) for r in runs if (s := setting_of(r))]
    if not general:
        return None
    plains = [r["name"] for r in runs if not setting_of(r)]
    plain = plains[0] if plains else plain_counterpart(store, general[0][0])
    rows, common_all = _level_rows(store, general, plain, n_boot)
    if plain:
        rows.insert(0, _plain_registry_row(store, plain, common_all))
    return RegistryTable(plain=plain, rows=rows, confusion_share=offdomain.CONFUSION_SHARE, rule=RULE)


def _level_rows(
    store: Store, general: list[tuple[StoredRun, dict[str, Any]]], plain: str | None, n_boot: int
) -> tuple[list[RegistryRow], set[str] | None]:
    """The rows of the runs in the setting (with their settings), in the table's order, and the items every one of
    them shares with the plain run (None without a plain run)."""
    rows: list[RegistryRow] = []
    common_all: set[str] | None = None
    for r, s in sorted(general, key=lambda run_setting: _registry_order(run_setting[1])):
        common = _common_with(store, plain, r) if plain else None
        if common is not None:
            common_all = common if common_all is None else common_all & common
        rows.append(_registry_row(store, r, s, plain, common, n_boot))
    return rows, common_all


def _common_with(store: Store, plain: str, run: RunRow) -> set[str]:
    """The items a run shares with the plain run (replicate 0): what its Δ and p are computed on."""
    return set(_first_replicates(store, store.run(plain)).keys() & _first_replicates(store, run).keys())


def _registry_row(
    store: Store,
    run: StoredRun,
    setting: dict[str, Any],
    plain: str | None,
    common: set[str] | None,
    n_boot: int,
) -> RegistryRow:
    """A level of the registry table: its setting, tokens, accuracy on the items shared with the plain run (all
    its trajectories without one), Δ and p against the plain run, out-of-domain share and mechanism."""
    m = offdomain_measures(store, run)
    delta = p = None
    if plain:
        acc = against_plain(store, plain, run["name"], n_boot)["rows"][0]
        delta, p = acc["delta"], acc["p"]
    share = m["share"] if m else None
    return RegistryRow(
        run=run["name"],
        count=setting["count"],
        detail=setting["detail"],
        tool_block_tokens=(setting.get("tool_block_tokens") or {}).get("extra"),
        tool_tokens=tool_tokens(setting),
        prompt_tokens=first_prompt_tokens(store, run),
        accuracy=_accuracy(store, run, common),
        delta=delta,
        p=p,
        share=share,
        share_counts=m["share_counts"] if m else None,
        mechanism=offdomain.mechanism(None if p is None else p < 0.05, delta, share),
    )


def _plain_registry_row(store: Store, plain: str, common_all: set[str] | None) -> RegistryRow:
    """The plain run's row (the study's filtered level): its accuracy over the items every level shares with it."""
    p_run = store.run(plain)
    return RegistryRow(
        run=plain,
        count=0,
        detail=FILTERED,
        tool_block_tokens=None,
        tool_tokens=tool_tokens(None),
        prompt_tokens=first_prompt_tokens(store, p_run),
        accuracy=_accuracy(store, p_run, common_all),
        delta=None,
        p=None,
        share=None,
        mechanism="plain",
    )


FILTERED: Final = "irrelevant tools filtered"  # the study's fourth level of Table 8: the plain run


def tool_tokens(setting: dict[str, Any] | None) -> int:
    """The tools' size in the prompt, estimated (characters / 4), as the study's Table 8 counts its registry: the
    system prompt's tool block and the request's tool schemas, the protocol's seven tools and the setting's extras
    (`sandbox.extra_tools.registry.setting_record`); None → the plain run's seven tools alone."""
    if setting is None:
        from sandbox.extra_tools.registry import estimated_tokens
        from sandbox.prompts import TOOL_SCHEMAS, TOOLS_BLOCK

        return estimated_tokens(TOOLS_BLOCK) + estimated_tokens(json.dumps(TOOL_SCHEMAS))
    parts = (setting.get(key) or {} for key in ("tool_block_tokens", "schema_tokens"))
    return sum(int(part.get("protocol") or 0) + int(part.get("extra") or 0) for part in parts)


def first_prompt_tokens(store: Store, run: StoredRun) -> float | None:
    """The measured input of a run's first model call (the median over its trajectories: system prompt, tools and
    task as the provider counted them); None when not measured (a scripted agent, estimated tokens)."""
    from sandbox.agents.continuation import PREFIX_MARK
    from sandbox.prompt_set import from_stored

    if not _run.measures_tokens(run) or _run.estimates_tokens(run):
        return None
    profile = store.context_profile(run["id"], from_stored(run.get("prompts")).stop, PREFIX_MARK)
    firsts = sorted(p["first_context"] for p in profile.values() if p["first_context"])
    return float(median(firsts)) if firsts else None


def _registry_order(setting: dict[str, Any]) -> tuple[int, int]:
    """The registry table's order: by count, then by detail (full, short, names; anything else last)."""
    details = ("full", "short", "names")
    return setting["count"], details.index(setting["detail"]) if setting["detail"] in details else 9


RULE = (
    "the study's rule (arXiv 2602.18998 App. B.8): a significant accuracy drop against the plain run (exact "
    f"McNemar p < 0.05 on common items) with an out-of-domain call share of at least "
    f"{offdomain.CONFUSION_SHARE:.0%} is tool confusion; a significant drop with fewer such calls is context "
    "overhead; otherwise no drop"
)


def _first_replicates(store: Store, run: RunRow) -> dict[str, bool]:
    """Item → correct of a run's replicate-0 trajectories (what `compare_report` pairs)."""
    cols = store.trajectory_columns(run["id"], ("item_id", "replicate", "correct"))
    return {i: bool(c) for i, r, c in zip(cols["item_id"], cols["replicate"], cols["correct"], strict=True) if not r}


def _accuracy(store: Store, run: RunRow, items: Collection[str] | None = None) -> list[int]:
    """[correct, n]: over every trajectory, or over replicate 0 of `items` (the common items of a comparison)."""
    if items is None:
        cols = store.trajectory_columns(run["id"], ("correct",))
        return [int(sum(bool(c) for c in cols["correct"])), len(cols["correct"])]
    first = _first_replicates(store, run)
    kept = [first[i] for i in items if i in first]
    return [sum(kept), len(kept)]


LEGEND = {
    "out-of-domain share": "calls to the setting's extra tools over all tool calls, rejected calls included (what the "
    "agent chose to do); Wilson 95% interval over calls (the study's tool-confusion measure, "
    "arXiv 2602.18998 §2.2, App. B.8)",
    "points out of domain": "points charged for executed out-of-domain calls over all points charged",
    "turns out of domain": "assistant turns whose every call was out of domain over turns with at least one call",
    "against plain": "the plain counterpart: the same identity without the setting (the distractible knob aside); "
    "Δ = setting − plain on common items, paired bootstrap 95% interval, exact McNemar",
    "n-grams": "out-of-domain calls are one 'other' tool for the n-gram analytics: outside the 7×7 family (49 "
    "bigrams, Bonferroni) and breaking adjacency, like any non-protocol call, so fingerprints stay "
    "comparable with plain runs; the transition matrix of a run in the setting adds an 'other' row and "
    "column (8×8)",
    "mechanism": RULE,
}


# The reports every front end calls, with the setting's blocks added for the runs in it. They wrap the plain ones
# (rather than being called from inside them) because the comparison with the plain run is `compare_report`'s,
# which itself reads `report_of`: `workbench.service.reports` exports these in place of the plain ones.


def diagnostics(store: Store, name: str, ci: bool = False, corpus: Any = None) -> RunReport:
    """`reports.run.diagnostics`, with `general_setting` (measures and the comparison with the plain run)."""
    report = _run.diagnostics(store, name, ci=ci, corpus=corpus)
    general = general_block(store, store.run(name))
    if general is not None:
        report["general_setting"] = general
        report["legend"] = {**report["legend"], **LEGEND}
    return report


def run_diagnostics(store: Store, name: str) -> tuple[RunReport, RunTransitions]:
    """`reports.run.run_diagnostics` (the TUI's tab), with `general_setting` for a run in the setting."""
    report, transitions = _run.run_diagnostics(store, name)
    general = general_block(store, store.run(name), n_boot=2_000)
    if general is not None:  # the heat map with the out-of-domain calls as one `other` tool
        report["general_setting"] = general
        tm = general["transitions"]
        transitions = {**transitions, "names": tm["tools"], "counts": tm["counts"], "rates": tm["probabilities"]}
    return report, transitions


def panel_report(
    store: Store, names: list[str], external: dict[str, float] | None = None, cache_dir: Any = None
) -> PanelReport:
    """`reports.panel.panel_report` (its arguments all passed on), with the registry-size table when runs of the
    setting are among `names`."""
    panel = _panel.panel_report(store, names, external, cache_dir=cache_dir)
    registry = registry_table(store, names)
    if registry is not None:
        panel["registry"] = registry
        panel["legend"] = {**panel["legend"], **LEGEND}
    return panel


def panel_at(store_path: Any, names: list[str], cache_dir: Any = None) -> PanelReport:
    """`panel_report` (with the setting's registry table, as the CLI's) over a read-only connection of its own: a
    front end's worker thread holds no store."""
    store = Store(store_path, readonly=True)
    try:
        return panel_report(store, names, cache_dir=cache_dir)
    finally:
        store.close()
