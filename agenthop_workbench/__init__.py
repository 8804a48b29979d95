"""AgentHop as an Inspect AI task: `inspect eval agenthop_workbench/agenthop --model …` (the `inspect` extra).

Inspect finds this package by its `inspect_ai` entry point and names what it registers after the installed
distribution it finds the module in, so the task's name is `agenthop_workbench/agenthop`. Where the distribution is
not found as installed (run from the source tree, whose `agenthop_workbench.egg-info` is met first on the path) the
same task is also registered under that full name, so it is found by it either way. `workbench.service.inspect.task`
builds the task (docs/inspect.md).
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.util import registry_info

from workbench.service.inspect.task import TASK_NAME, TaskOptions, build_task

PACKAGE = "agenthop_workbench"


def _agenthop(
    data: str = "builtin",
    limit: int | None = None,
    ablation: str = "full",
    budget: int = 30,
    max_turns: int = 20,
    extra_tools: str | None = None,
    prompts: str | None = None,
) -> Task:
    """AgentHop: multi-hop scientific QA over a citation graph with seven tools under a point budget."""
    return build_task(TaskOptions(data, limit, ablation, budget, max_turns, extra_tools, prompts))


agenthop = task(name=TASK_NAME)(_agenthop)
if registry_info(agenthop).name != f"{PACKAGE}/{TASK_NAME}":
    agenthop = task(name=f"{PACKAGE}/{TASK_NAME}")(_agenthop)
