"""The typed records the application layer returns: what a report, a comparison, an estimate, a panel or a scaling
study holds, field by field. The application fills them and every front end and view reads them, so each is
defined once, here, on a floor of its own under the views (which word them) and above the settings; they import
neither the views nor the application modules that fill them. One module per family: `estimate`, `ratio` (a
ratio's counts, which every report carries), `report` (a run's report and its axes), `general` (the general-agent
setting's blocks), `compare`, `leaderboard`, `panel`, `sequential`, `parallel`, `campaign` (a campaign's
totals); and `columns`, the paper's Table 2 columns the panel's and the leaderboard's rows are keyed by.

They hold data only (no wording, no I/O). Where a JSON document is the contract (`--format json`, the exports) a
record is a TypedDict, so the document is the record itself and mypy checks every field written and read.
"""
