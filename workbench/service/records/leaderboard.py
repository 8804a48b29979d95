"""The leaderboard of the people's plays (`leaderboard`, the TUI's board): its rows and the test beside each
column's best, as `workbench.service.reports.leaderboard` fills them."""

from __future__ import annotations

from typing import NotRequired, TypedDict

# One row: an entrant (a person over all their sessions, or one model run), then the Table 2 columns by their labels
# (`columns.PANEL_COLUMNS`; labels with spaces and slashes, hence the functional form).
BoardRow = TypedDict(
    "BoardRow",
    {
        "run": str,  # the entrant: a person's agent (`human:NAME`) or a model run's name
        "name": str,  # the latest session, `+N` for the others
        "runs": list[str],
        "agent": str,
        "model": str | None,
        "ablation": str,
        "human": bool,
        "n": int,
        "correct": int,
        "coverage": float,
        "accuracy_ci": list[float] | None,  # Wilson 95% [low, high] over the items covered
        "excluded": int,  # a person's plays left out as marked (resumed, replayed)
        "ranked": bool,
        "tokens_measured": bool,
        "rank": int | None,
        "unranked": str | None,  # why not ranked
        "accuracy": float | None,
        "PR st": float | None,
        "PR mt": float | None,
        "SR st": float | None,
        "SR mt": float | None,
        "Conv st": float | None,
        "Conv mt": float | None,
        "calls/turn": float | None,
        "tokens": float | None,
        "turns": float | None,
        "points": float | None,
        "MaxTok": float | None,
        "MaxTurn": float | None,
        "MaxBudget": float | None,
    },
)


class BoardTest(TypedDict):
    """The test beside a leaderboard column's best: the best run(s), the runner-up(s), whether the best is marked
    (the one best run beats every runner-up significantly), the weakest of those tests, or why none is marked."""

    best: list[str]
    runner_up: list[str]
    marked: bool
    test: NotRequired[str]
    n: NotRequired[int]
    best_better: NotRequired[int]
    runner_up_better: NotRequired[int]
    p: float | None
    reason: NotRequired[str]


class Board(TypedDict):
    """The leaderboard of one dataset people played: its rows over the items people played (ranked ones first), the
    best cells (`*`) and the test beside each column's mark."""

    dataset: str
    fingerprint: str
    n_items: int
    items: list[str]
    min_coverage: float
    rows: list[BoardRow]
    best: dict[str, list[str]]  # column label → the marked rows
    best_tests: dict[str, BoardTest]  # column label → `reports.panel.significant_best`'s test, or why none
    n_boot: int
    seed: int
