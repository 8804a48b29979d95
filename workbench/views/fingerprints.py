"""The panel's fingerprints as text cells (paper §4.2): each family's mean signature with the words its tests
support and its runs', the family-vs-the-rest tests, the top trigrams per family and why a run or a word is
missing. Shared by `report --panel` and the TUI's Panel screen."""

from __future__ import annotations

from typing import Any

from workbench.service.records.panel import PanelReport
from workbench.views.cells import NOT_MEASURED, num, pct, sig

SIGNATURE_LABELS = {
    "calls_per_turn": "calls/turn",
    "think_share": "think",
    "read_share": "read",
    "nav_share": "nav",
    "early_commit": "early commit",
    "verify_before_commit": "verify",
    "over_search": "over-search",
    "under_engagement": "no read",
    "search_volume": "searches",
}
SHARES = (
    "think_share",
    "read_share",
    "nav_share",
    "early_commit",
    "verify_before_commit",
    "over_search",
    "under_engagement",
)


def titled_tables(panel: PanelReport) -> list[tuple[str, tuple[tuple[str, ...], list[tuple[str, ...]]]]]:
    """The panel's tables after Table 2, titled, in the order every front end shows them."""
    return [
        (
            "fingerprints (paper §4.2): per family (mean of its runs, the words the tests support) and per run",
            fingerprint_table(panel),
        ),
        (
            "family vs the other families: difference, Holm-adjusted (all families' tests) permutation p over runs "
            "(* p < 0.05)",
            family_test_table(panel),
        ),
        (
            "family trigrams: each family's top trigram, share of trajectories per run, family − the others "
            "(Holm-adjusted permutation p over runs)",
            trigram_test_table(panel),
        ),
    ]


def signature_cell(key: str, value: float | None) -> str:
    """A share as a percentage, calls per turn and searches per trajectory as numbers."""
    return pct(value) if key in SHARES else num(value, 2)


def fingerprint_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per family: its mean row (with its words), then its runs' signatures."""
    fp = panel.get("fingerprints") or {}
    sigs = fp.get("signatures") or list(SIGNATURE_LABELS)
    header = ("family / run", *(SIGNATURE_LABELS[s] for s in sigs), "words")
    rows: list[tuple[str, ...]] = []
    families = fp.get("families") or {}
    members: dict[str, list[str]] = {}
    for run, fam in (fp.get("family_of") or {}).items():
        members.setdefault(fam, []).append(run)
    for fam in sorted(members):
        tests = families.get(fam, {}).get("signatures", {})
        means = [signature_cell(s, tests[s]["family_mean"]) if s in tests else NOT_MEASURED for s in sigs]
        words = ", ".join(families.get(fam, {}).get("words") or []) or NOT_MEASURED
        rows.append((f"{fam} (mean of {len(members[fam])})", *means, words))
        for run in sorted(members[fam]):
            rows.append((f"  {run}", *(signature_cell(s, fp["models"][run][s]["value"]) for s in sigs), ""))
    return header, rows


def effect_cell(key: str, test: dict[str, Any]) -> str:
    """`+12.0 pts p .031` (shares) or `+0.35 p .031`: the family minus the others, and the Holm-adjusted p."""
    if test.get("effect") is None:
        return NOT_MEASURED
    effect = f"{test['effect'] * 100:+.1f} pts" if key in SHARES else f"{test['effect']:+.2f}"
    mark = " *" if test.get("significant") else ""
    return f"{effect} p {sig(test['p_holm'])}{mark}"


def family_test_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per family and signature: family − mean of the other families' runs, with the Holm-adjusted permutation p
    (* where below 0.05)."""
    fp = panel.get("fingerprints") or {}
    sigs = fp.get("signatures") or list(SIGNATURE_LABELS)
    header = ("family vs the rest", *(SIGNATURE_LABELS[s] for s in sigs))
    families = fp.get("families") or {}
    if len(families) < 2:  # one family has no others to be tested against
        return header, []
    rows = [
        (fam, *(effect_cell(s, fam_tests["signatures"][s]) for s in sigs))
        for fam, fam_tests in sorted(families.items())
    ]
    return header, rows


def trigram_test_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per family: its top trigram, the family − others difference in the runs' shares, raw and Holm p."""
    header = ("family", "top trigram", "family − others", "p", "p (Holm)")
    tests = (panel.get("fingerprints") or {}).get("trigram_tests") or {}
    rows: list[tuple[str, ...]] = [
        (
            fam,
            " → ".join(t["trigram"]),
            NOT_MEASURED if t["effect"] is None else f"{t['effect'] * 100:+.1f} pts",
            sig(t["p"]),
            sig(t["p_holm"]) + (" *" if t.get("significant") else ""),
        )
        for fam, t in sorted(tests.items())
    ]
    return header, rows


def trigram_lines(panel: PanelReport) -> list[str]:
    """`Alpha: get_references → list_sections → read_section on 100.0% of its 120 trajectories (others 51.7%)`."""
    lines = []
    for fam, tops in sorted(((panel.get("fingerprints") or {}).get("trigrams") or {}).items()):
        for t in tops:
            lines.append(
                f"{fam}: {' → '.join(t['trigram'])} on {pct(t['share'])} of its {t['n']} trajectories "
                f"(other families' mean {pct(t['others_mean_share'])})"
            )
    return lines


def fingerprint_notes(panel: PanelReport) -> list[str]:
    """Runs left out of the fingerprints, and why; a note when fewer than two families could be compared."""
    fp = panel.get("fingerprints") or {}
    lines = [f"not in the fingerprints: {run} ({why})" for run, why in sorted((fp.get("excluded") or {}).items())]
    if fp and len(fp.get("families") or {}) < 2:
        lines.append("family tests need runs of at least two families")
    for fam, tests in sorted((fp.get("families") or {}).items()):
        floors = [t["min_p_holm"] for t in tests["signatures"].values() if t.get("min_p_holm") is not None]
        if not tests["words"] and floors and min(floors) >= 0.05:
            lines.append(
                f"{fam}: no word can be supported with these runs (the smallest attainable Holm-adjusted "
                f"p is {sig(min(floors))}: add runs to the family or to the others)"
            )
    return lines
