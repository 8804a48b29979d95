"""The application layer: every module that turns a user's request into data.

Launch, play, audit, items, reports, scaling, summaries, estimates, relabelling, reference import, run names,
limits, config and paths. The only place where store queries meet `stats` and where a `RunSpec` is built or a
`Runner` started; every front end (`workbench.cli`, `workbench.tui`, `workbench.mcp`) calls it, so they can never
show different numbers or build different runs. It returns data (its typed records: `workbench.service.records`);
the words are `workbench.views`'.
"""
