"""The leaderboard: every agent's runs grouped, ranked by accuracy with its Wilson interval, people apart."""

from __future__ import annotations

from typing import cast

from stats.axes import Table
from storage import Store
from storage.rows import LightTrajectoryRow, RunListRow
from workbench.service.records.columns import PANEL_COLUMNS
from workbench.service.records.leaderboard import Board, BoardRow, BoardTest
from workbench.service.reports.panel import per_item_terms, significant_best
from workbench.service.reports.run import _dig, measures_tokens, report_of

MIN_COVERAGE = 0.5  # a leaderboard row is ranked when it covers at least this share of the items people played


def leaderboard(store: Store, min_coverage: float = MIN_COVERAGE, n_boot: int = 10_000, seed: int = 0) -> list[Board]:
    """Per dataset that people have played: every player and every evaluation run on the items people played.

    A person is one row over all their sessions on the dataset (`human:NAME` runs combined, an item counted
    once: its first play); plays marked `resumed` or `replayed` (made after seeing the item's tool results or
    gold answer) are left out and counted in `excluded`. A model is one row per run. The items are those some
    person played (replicate 0, unmarked). Each row is `report_of` over its trajectories on those items, with
    `n` items covered and the Wilson score 95% interval of accuracy over them (`stats.wilson`; one play per
    item). Rows covering at least `min_coverage` of the items are ranked by accuracy (then items covered, then
    name); the others follow, unranked, saying why. Scaling levels and parallel runs are not evaluation runs and
    are left out.
    """
    from sandbox.agents.human import is_human

    runs = [r for r in store.runs() if r["kind"] == "eval"]
    return [
        _board(
            store, fingerprint, [r for r in runs if r["dataset_fingerprint"] == fingerprint], min_coverage, n_boot, seed
        )
        for fingerprint in dict.fromkeys(r["dataset_fingerprint"] for r in runs if is_human(r["agent"]))
    ]


def _entrants(same: list[RunListRow]) -> dict[str, list[RunListRow]]:
    """The runs on one dataset by entrant: a player (their agent, all their sessions) or a model run (its name)."""
    from sandbox.agents.human import is_human

    entrants: dict[str, list[RunListRow]] = {}
    for run in same:
        entrants.setdefault(run["agent"] if is_human(run["agent"]) else run["name"], []).append(run)
    return entrants


def _entrant_records(store: Store, group: list[RunListRow]) -> tuple[list[LightTrajectoryRow], int]:
    """One entrant's replicate-0 trajectories, an item counted once (its first play), and how many of a person's
    plays were left out as marked (`resumed`, `replayed`)."""
    from sandbox.agents.human import MARKED, is_human

    seen: set[str] = set()
    kept, marked = [], 0
    for run in group:
        for t in store.trajectories(run["id"], light=True):
            if t["replicate"] != 0:
                continue
            if is_human(run["agent"]) and t["error_kind"] in MARKED:
                marked += 1
                continue
            if t["item_id"] not in seen:
                seen.add(t["item_id"])
                kept.append(t)
    return kept, marked


def _board(
    store: Store, fingerprint: str, same: list[RunListRow], min_coverage: float, n_boot: int, seed: int
) -> Board:
    """The leaderboard of one dataset people played: its rows over the items people played, ranked, and the best."""
    from sandbox.agents.human import is_human

    entrants = _entrants(same)
    records: dict[str, list[LightTrajectoryRow]] = {}
    excluded: dict[str, int] = {}
    for key, group in entrants.items():
        records[key], excluded[key] = _entrant_records(store, group)
    played = _played_items(entrants, records)
    wanted = set(played)
    on_played = {key: [t for t in records[key] if t["item_id"] in wanted] for key in entrants}
    rows = [
        _board_row(key, group, on_played[key], len(played), excluded[key], min_coverage, n_boot, seed)
        for key, group in entrants.items()
        if on_played[key]
    ]
    ranked, unranked = _ranked(rows)
    best, best_tests = board_best(ranked, on_played)
    return {
        "dataset": next(r["dataset"] for r in same if is_human(r["agent"])),
        "fingerprint": fingerprint,
        "n_items": len(played),
        "items": played,
        "min_coverage": min_coverage,
        "rows": ranked + unranked,
        "best": best,
        "best_tests": best_tests,
        "n_boot": n_boot,
        "seed": seed,
    }


def _played_items(entrants: dict[str, list[RunListRow]], records: dict[str, list[LightTrajectoryRow]]) -> list[str]:
    """The items people played, in the order first played (the board's items)."""
    from sandbox.agents.human import is_human

    people = [key for key, group in entrants.items() if is_human(group[0]["agent"])]
    return list(dict.fromkeys(t["item_id"] for key in people for t in records[key]))


def _ranked(rows: list[BoardRow]) -> tuple[list[BoardRow], list[BoardRow]]:
    """The ranked rows in order, numbered (`rank`), and the unranked ones in the same order after them."""
    ranked = sorted((r for r in rows if r["ranked"]), key=_board_order)
    for rank, row in enumerate(ranked, 1):
        row["rank"] = rank
    return ranked, sorted((r for r in rows if not r["ranked"]), key=_board_order)


TOKEN_COLUMNS = ("tokens", "MaxTok")  # what a run without token counts (`measures_tokens`) does not measure


def board_best(
    ranked: list[BoardRow], records: dict[str, list[LightTrajectoryRow]]
) -> tuple[dict[str, list[str]], dict[str, BoardTest]]:
    """The leaderboard's best cells: the panel's `significant_best` over the ranked rows, each paired with a
    runner-up on the items both covered; then none in a token column while a ranked full-tool row does not
    measure tokens (a scripted agent, an MCP client): the mark claims the best of the board, and an unmeasured
    entrant may have used fewer. Returns (column → marked rows, column → the test or why there is none)."""
    best, tests = significant_best(ranked, {r["run"]: per_item_terms(Table.of(records[r["run"]])) for r in ranked})
    unmeasured = [r["run"] for r in ranked if not r["tokens_measured"] and r["ablation"] == "full"]
    if unmeasured:
        reason = f"tokens not measured for {', '.join(unmeasured)}"
        for col in TOKEN_COLUMNS:
            best.pop(col, None)
            tests[col] = _unmarked(tests.get(col), reason)
    return best, tests


def _unmarked(test: BoardTest | None, reason: str) -> BoardTest:
    """A column's test (or none) with its mark taken away, saying why."""
    if test is None:
        return {"best": [], "runner_up": [], "p": None, "marked": False, "reason": reason}
    return {**test, "marked": False, "reason": reason}


def _board_order(row: BoardRow) -> tuple[float, int, str]:
    return -(row["accuracy"] or 0.0), -row["n"], row["run"]


def _board_row(
    key: str,
    group: list[RunListRow],
    records: list[LightTrajectoryRow],
    n_items: int,
    excluded: int,
    min_coverage: float,
    n_boot: int,
    seed: int,
) -> BoardRow:
    """One leaderboard row: `report_of` over the entrant's trajectories, its coverage and accuracy interval."""
    from sandbox.agents.human import is_human
    from stats.wilson import wilson

    human = is_human(group[0]["agent"])
    entrant: RunListRow = {**group[0], "name": key}  # the report names the entrant, not its first session
    rep = report_of(entrant, records)
    sessions = [r["name"] for r in group]
    n = rep["n"]
    ci = wilson(rep["correct"], n) if n else None  # accuracy is a proportion: Wilson (one play per item)
    coverage = n / n_items if n_items else 0.0
    ranked = coverage >= min_coverage
    name = sessions[-1] + (f" +{len(sessions) - 1}" if len(sessions) > 1 else "")  # the latest session (+ others)
    row = {
        "run": key,
        "name": name,
        "runs": sessions,
        "agent": rep["agent"],
        "model": rep["model"],
        "ablation": rep["ablation"],
        "human": human,
        "n": n,
        "correct": rep["correct"],
        "coverage": coverage,
        "accuracy_ci": None if ci is None else [ci.low, ci.high],
        "excluded": excluded,
        "ranked": ranked,
        "tokens_measured": measures_tokens(group[0]),
        "rank": None,
        "unranked": None if ranked else f"covers {n} of the {n_items} items played (fewer than {min_coverage:.0%})",
        **{col: _dig(rep, path) for col, path in PANEL_COLUMNS},
    }
    return cast("BoardRow", row)  # the Table 2 columns by their labels, which a TypedDict literal cannot loop over
