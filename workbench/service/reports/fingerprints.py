"""The panel's fingerprints (AgentHop §4.2): each run's tool-call signature, each family's, the family-vs-rest
permutation tests over models with Holm across signatures, the words they support, and the top trigrams per family.

Part of `panel_report` (one call, so the CLI's `report --panel` and the TUI's Panel screen show the same numbers).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from stats import fingerprints as fp
from stats import ngrams
from stats.axes import Table

LEGEND = {
    "fingerprints": "Fingerprints (paper §4.2): per run (a model) over its own final trajectories, all replicates: "
    "calls/turn = tool calls ÷ turns with a call; think / read / nav share = think, read_section and "
    "navigation calls (search_papers, get_references, list_sections, get_paper_info) ÷ all calls; "
    f"early commit = share of submitting trajectories whose first submit had no delivered read before "
    f"it or came within {fp.EARLY_ACTIONS} actions of the first delivered gold read; verify = share of "
    "trajectories submitting after a gold read with a think or read_section between the last new "
    "evidence (the last delivered read of a paper not read before) and the submit; search volume = "
    "search_papers calls per trajectory. Full-tool runs with a family only (an ablation's tools are "
    "cut by construction). A family's value is the mean of its runs; its effect is that minus the "
    "mean of the other families' runs, with a two-sided permutation p over runs (exact where there "
    "are at most 20,000 relabellings), Holm-adjusted across the seven signatures of the family.",
    "fingerprint_words": "Words only where the tests support them (Holm p < 0.05, the effect's sign): commits early "
    "(early commit above the others), verifies (verify above), over-searches (search volume "
    "above); balanced where none of the signatures differs and the design could have shown it "
    "(the smallest attainable Holm p of early commit, verify and search volume is below 0.05); "
    "otherwise no word. Never from a family's name.",
    "family_trigrams": "Top trigrams per family: the share of the family's trajectories containing the trigram, "
    "beside the mean share over the other families (the paper's Table 14 per family).",
}


def run_fingerprint(row: dict[str, Any], table: Table, actions: list[Any]) -> dict[str, Any]:
    """One run's signature and trigram counts (its own final trajectories), or the reason it is left out."""
    if row["ablation"] != "full":
        return {"excluded": f"ablation {row['ablation']}"}
    if not row["family"]:
        return {"excluded": "no family (tag it: runs tag NAME --family F)"}
    trajectories = [
        {"actions": acts or [], "tool_calls": calls, "turns_with_calls": turns}
        for acts, calls, turns in zip(actions, table["tool_calls"], table["turns_with_calls"])
    ]
    names = [[a[0] for a in t["actions"]] for t in trajectories]
    return {
        "signature": fp.model_signature(trajectories),
        "trigrams": ngrams.ngram_counts(names, 3)["trajectories"],
        "n": len(trajectories),
    }


def panel_fingerprints(rows: list[dict[str, Any]], per_run: list[dict[str, Any]]) -> dict[str, Any]:
    """{"models": run → signature, "families": family → tests and words, "trigrams": family → top trigrams,
    "excluded": runs left out and why}, from each run's `run_fingerprint`."""
    per_model: dict[str, dict[str, Any]] = {}
    family_of: dict[str, str | None] = {}
    grams: dict[str, Counter] = {}
    n_traj: Counter = Counter()
    excluded = {}
    for row, one in zip(rows, per_run):
        if "excluded" in one:
            excluded[row["run"]] = one["excluded"]
            continue
        per_model[row["run"]] = one["signature"]
        family_of[row["run"]] = row["family"]
        grams.setdefault(row["family"], Counter()).update(one["trigrams"])
        n_traj[row["family"]] += one["n"]
    return {
        "signatures": list(fp.SIGNATURES),
        "models": per_model,
        "family_of": family_of,
        "families": fp.family_tests(per_model, family_of) if len(set(family_of.values())) >= 2 else {},
        "trigrams": fp.family_trigrams(grams, n_traj),
        "excluded": excluded,
    }
