"""Many episodes at once (asyncio workers), each step committed as it happens, resumable by run name.

`Runner` executes a `RunSpec` against a corpus and a store and tells its caller each `RunEvent`; `select_items`
names a run's items (`InvalidSlice` when they select none). Its modules: `spec` (what defines a run), `selection`
(its items), `factory` (the agent of each attempt), `runner` (the workers, each attempt's episode, run-wide limits),
`events` (what the caller is told), `store_records` (an episode flattened for the store), `run_row` (the run's row
as created and as resumed), `collector` (the garbage collector while a run executes).
"""

from sandbox.runner.events import RunEvent
from sandbox.runner.factory import AgentFactory, default_factory
from sandbox.runner.runner import Runner
from sandbox.runner.selection import InvalidSlice, select_items
from sandbox.runner.spec import RunSpec

__all__ = ["AgentFactory", "InvalidSlice", "RunEvent", "RunSpec", "Runner", "default_factory", "select_items"]
