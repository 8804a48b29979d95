"""AgentHop and Inspect AI (the `inspect` extra): the task Inspect runs, its logs imported, our runs exported.

`task` builds the `agenthop` task (registered for Inspect by the top-level `agenthop_workbench` package), whose
every sample is an `Episode` of our own sandbox driven by Inspect's model; `conversation` converts between our
OpenAI-style messages and Inspect's; `log_import` replays an Inspect log into the store; `log_export` writes a
stored run as an Inspect log (docs/inspect.md). Every module imports `inspect_ai`: only the extra installs it.
"""
