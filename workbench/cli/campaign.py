"""`campaign init | run | status | report`: a campaign file written, its runs executed (resuming what is missing),
how far it is, and its panel and studies' tables."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.cli.context import _held, _writing, open_data, until_signal
from workbench.cli.errors import ExitCode, UsageError
from workbench.views.cells import counted

if TYPE_CHECKING:
    from workbench.service.campaign import CampaignOutcome, CampaignPlan, RunState


def cmd_campaign(args: argparse.Namespace) -> int:
    command = {"init": _init, "run": _run, "status": _status, "report": _report}[args.campaign_command]
    return command(args)


def _init(args: argparse.Namespace) -> int:
    """Write the commented example (to stdout without a file); an existing file is kept unless --force."""
    from workbench.service.campaign import EXAMPLE

    if args.file is None:
        sys.stdout.write(EXAMPLE)
        return ExitCode.OK
    path = Path(args.file)
    if path.exists() and not args.force:
        raise UsageError(f"{path} exists: choose another file, or --force to write over it")
    with _writing(args.file):
        path.write_text(EXAMPLE, encoding="utf-8")
    sys.stderr.write(f"wrote {path}: edit it, then `agenthop-tui --batch campaign run {path}`\n")
    return ExitCode.OK


def _plan(args: argparse.Namespace) -> CampaignPlan:
    """The file read and planned (CampaignFileError: file, line, key; exit 2), before anything is opened."""
    from workbench.service.campaign import load_campaign, plan_campaign

    return plan_campaign(load_campaign(args.file), shard=getattr(args, "shard", None))


def _check_models(plan: CampaignPlan) -> None:
    """Every LLM run's model can be reached as configured (its key, a local model installed), before anything is
    written (exit 2 otherwise); a key variable that is not set for a server is warned about, as `run` warns."""
    import os

    from workbench.service.campaign import check_models
    from workbench.service.errors import ConfigError, LocalModelUnavailable

    warned: set[str] = set()
    for run in plan.runs:
        options = run.spec.agent_options
        variable, url = options.get("api_key_env"), options.get("base_url")
        if run.spec.agent == "llm" and variable and url and not os.environ.get(variable) and variable not in warned:
            warned.add(variable)
            sys.stderr.write(
                f"warning: api_key_env {variable}: that variable is not set; the calls to {url} go without a key\n"
            )
    try:
        check_models(plan)
    except (ConfigError, LocalModelUnavailable) as exc:
        raise UsageError(str(exc)) from None


def _run(args: argparse.Namespace) -> int:
    """Every run of the file that is not finished, the endpoints' lanes at once; then the panel and the studies."""
    from workbench.service import paths
    from workbench.service.campaign import campaign_status, check_against_store
    from workbench.service.stores import open_store

    plan = _plan(args)
    _check_models(plan)
    corpus = open_data(plan.campaign.data, args.quiet)
    campaign_status(None, plan, corpus)  # every run's slice selects items (InvalidSlice: exit 2, nothing written)
    store = _held(open_store(paths.new_store_path(args.db)))
    check_against_store(store, plan, corpus.fingerprint)
    outcome = _execute(plan, store, corpus, campaign_status(store, plan, corpus), args.quiet)
    states = campaign_status(store, plan, corpus)
    if plan.shard is None:
        _print_tables(store, plan, states, corpus, args)
    else:
        sys.stderr.write(
            f"shard {plan.shard} of campaign '{plan.campaign.name}': {sum(s.done for s in states)} of "
            f"{sum(s.planned for s in states)} episodes; merge the shards' stores, then `campaign report` on it\n"
        )
    return _ended(outcome)


def _execute(plan: CampaignPlan, store: Any, corpus: Any, states: list[RunState], quiet: bool) -> CampaignOutcome:
    """The campaign's runs on the store, with the one progress display on stderr."""
    from workbench.cli.progress import CampaignProgress
    from workbench.service.campaign import PlannedRun, execute_campaign
    from workbench.service.execution import runner

    progress = CampaignProgress(plan.campaign.name, states, quiet=quiet)

    async def run_one(run: PlannedRun):
        result = await runner(run.spec, corpus, store, on_event=lambda event: progress.update(run.name, event)).run()
        progress.ended(run.name, result)
        return result

    try:
        finished = {s.name for s in states if s.finished}
        outcome = asyncio.run(until_signal(execute_campaign(plan, run_one, finished)))
    finally:
        progress.close()
    for o in outcome.outcomes:
        if o.not_started:
            progress.skipped(o.run.name)
    return outcome


def _ended(outcome: CampaignOutcome) -> int:
    """0, or ExitCode.INCOMPLETE naming each unreachable endpoint's unfinished runs (a script must not take the
    campaign for done); the same command resumes them once the endpoint listens."""
    unreachable = outcome.unreachable()
    for endpoint, runs in unreachable.items():
        sys.stderr.write(
            f"endpoint {endpoint} is unreachable: not finished: {', '.join(runs)}; start it (or wait until it "
            "listens) and run the same command again\n"
        )
    limited = [o.run.name for o in outcome.outcomes if o.result is not None and o.result.get("limit")]
    if limited:
        sys.stderr.write(f"stopped by a run-wide limit: {', '.join(limited)}\n")
    return ExitCode.INCOMPLETE if unreachable or limited else ExitCode.OK


def _status(args: argparse.Namespace) -> int:
    """Each run's episodes done and left, and the totals; nothing is run or written."""
    from workbench.service import paths
    from workbench.service.campaign import campaign_status
    from workbench.service.stores import open_store

    plan = _plan(args)
    corpus = open_data(plan.campaign.data, quiet=True)
    path = paths.store_path(args.db)
    store = _held(open_store(path, readonly=True)) if path.exists() else None
    states = campaign_status(store, plan, corpus)
    if args.format == "json":
        import json

        sys.stdout.write(json.dumps([s.to_json() for s in states], indent=2) + "\n")
        return ExitCode.OK
    _print_states(plan.campaign.name, states)
    return ExitCode.OK


def _print_states(name: str, states: list[RunState]) -> None:
    from rich.table import Table
    from rich.text import Text

    from workbench.cli.render.output import console

    table = Table(title=Text(f"campaign '{name}'"), title_justify="left")
    for column in ("run", "model", "endpoint", "done", "left", "status"):
        table.add_column(column, justify="right" if column in ("done", "left") else "left")
    for s in states:
        table.add_row(*map(Text, (s.name, s.model, s.endpoint, f"{s.done}/{s.planned}", str(s.left), s.status)))
    out = console()
    out.print(table)
    finished = sum(s.finished for s in states)
    left = sum(s.left for s in states)
    out.print(
        f"{finished} of {counted(len(states), 'run')} done; {counted(left, 'episode')} left"
        if left
        else ("the run is done" if len(states) == 1 else f"all {len(states)} runs done"),
        markup=False,
    )


def _report(args: argparse.Namespace) -> int:
    """The panel over the campaign's finished runs and its studies' tables (a model judge is asked what it was not)."""
    from workbench.service import paths
    from workbench.service.campaign import campaign_status
    from workbench.service.stores import open_store

    plan = _plan(args)
    corpus = open_data(plan.campaign.data, args.quiet)
    path = paths.store_path(args.db)
    if not path.exists():
        raise UsageError(f"no store at {path}: run the campaign first")
    store = _held(open_store(path))
    _print_tables(store, plan, campaign_status(store, plan, corpus), corpus, args)
    return ExitCode.OK


def _print_tables(
    store: Any, plan: CampaignPlan, states: list[RunState], corpus: Any, args: argparse.Namespace
) -> None:
    from workbench.cli.progress import JudgingProgress
    from workbench.cli.render.panel import print_panel
    from workbench.cli.render.scaling import print_parallel, print_plateau, print_strategies
    from workbench.service import paths
    from workbench.service.campaign import campaign_tables

    tables = asyncio.run(
        campaign_tables(
            store, plan, states, corpus, paths.cache_dir(), judging=lambda name: JudgingProgress(name, args.quiet)
        )
    )
    if tables.left_out:
        sys.stderr.write(f"not in the tables (not finished): {', '.join(tables.left_out)}\n")
    if tables.panel is not None:
        print_panel(tables.panel, args.format)
    for _, plateau in tables.plateaus:
        print_plateau(plateau, "table")
    for _, comparison in tables.comparisons:
        print_strategies(comparison, "table")
    for report in tables.parallel:
        print_parallel(report, "table")
