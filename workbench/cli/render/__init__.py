"""Writing to stdout in the format asked for: a table (rich), JSON, CSV or markdown. The cells, labels and
wording come from `workbench.views` (the TUI shows the same); nothing here computes or words a value.

One module per command group: `run` (a run's report, a dry run's estimate), `panel`, `compare`, `leaderboard`,
`runs` (the runs list, merge), `items`, `scaling` (`scale`); `output` holds what they all write with."""
