"""The paper's Table 2 columns: each column's label and where its value sits in a run report, their groups
(Search, Synthesis, Tool use, Resources), and each column's ratio by its `stats.axes.ratio_terms` key. The panel
computes them (`workbench.service.reports`) and the views print them (`workbench.views`): one definition for both.
Their labels are the keys a panel's and a leaderboard's rows are filled under (`panel.PanelRow`,
`leaderboard.BoardRow`), so they live with the records."""

from __future__ import annotations

PANEL_COLUMNS = (
    ("accuracy", ("accuracy",)),
    ("PR st", ("axes", "search", "paper_recall", "st")),
    ("PR mt", ("axes", "search", "paper_recall", "mt")),
    ("SR st", ("axes", "search", "section_recall", "st")),
    ("SR mt", ("axes", "search", "section_recall", "mt")),
    ("Conv st", ("axes", "synthesis", "conversion", "st")),
    ("Conv mt", ("axes", "synthesis", "conversion", "mt")),
    ("calls/turn", ("axes", "tool_use", "calls_per_turn")),
    ("tokens", ("axes", "resource", "avg_tokens")),
    ("turns", ("axes", "resource", "avg_turns")),
    ("points", ("axes", "resource", "avg_points")),
    ("MaxTok", ("axes", "resource", "max_tokens_rate")),
    ("MaxTurn", ("axes", "resource", "max_turns_rate")),
    ("MaxBudget", ("axes", "resource", "max_budget_rate")),
)

PANEL_GROUPS = (
    ("", ("accuracy",)),
    ("Search", ("PR st", "PR mt", "SR st", "SR mt")),
    ("Synthesis", ("Conv st", "Conv mt")),
    ("Tool use", ("calls/turn",)),
    ("Resources", ("tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget")),
)

# the compared axes by their `stats.axes.ratio_terms` keys: one definition of each ratio for values and intervals
COLUMN_TERMS = {
    "accuracy": "accuracy",
    "PR st": "paper_recall.st",
    "PR mt": "paper_recall.mt",
    "SR st": "section_recall.st",
    "SR mt": "section_recall.mt",
    "Conv st": "conversion.st",
    "Conv mt": "conversion.mt",
    "calls/turn": "calls_per_turn",
    "tokens": "avg_tokens",
    "turns": "avg_turns",
    "points": "avg_points",
    "MaxTok": "max_tokens_rate",
    "MaxTurn": "max_turns_rate",
    "MaxBudget": "max_budget_rate",
}
