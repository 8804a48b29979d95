"""The AgentHop sandbox: corpus, items, the seven tools, the ledger, the episode loop, agents and the runner.

Nothing here imports textual, litellm (except lazily inside the LLM agent), `stats` or `workbench`.
"""
