"""`run` and `scale`: a RunSpec from the flags, the runner, and how the run ended."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from workbench.cli.context import _held, _open_store, _report, open_data, until_signal
from workbench.cli.errors import ExitCode, UsageError
from workbench.cli.parser import SWEPT_CAP
from workbench.service.launch import LaunchRequest, run_spec

if TYPE_CHECKING:
    from sandbox.records import VerifierOptions
    from workbench.service.records.sequential import StrategyName

LIMIT_FLAGS = {"tokens": "--max-run-tokens", "cost": "--max-run-cost"}


# How the CLI names each field of a launch request in a message: its flag
FLAGS = {
    **{key: "--" + key.replace("_", "-") for key in LaunchRequest.__dataclass_fields__},
    "name": "--run",
    "dataset": "--data",
}


def _item_ids(text: str | None) -> tuple[str, ...]:
    """--ids as a tuple; given but naming nothing (`--ids ""`) is refused: it would silently run every item."""
    if text is None:
        return ()
    ids = tuple(i.strip() for i in text.split(",") if i.strip())
    if not ids:
        raise UsageError("--ids is empty: name the items (comma-separated), or leave --ids out to run them all")
    return ids


def launch_request(args: argparse.Namespace) -> LaunchRequest:
    """The run flags as the launch service's request (the flags' own types have parsed them)."""
    return LaunchRequest(
        dataset=args.data,
        agent=args.agent,
        name=args.run_name,
        model=args.model,
        base_url=args.base_url,
        client=args.client,
        api_key_env=args.api_key_env,
        env_file=args.env_file,
        temperature=args.temperature,
        top_p=args.top_p,
        top_k=args.top_k,
        max_tokens=args.max_tokens,
        reasoning_effort=args.reasoning_effort,
        text_tools=args.text_tools,
        timeout=args.timeout,
        concurrency=args.concurrency,
        rpm=args.rpm,
        local_threads=getattr(args, "local_threads", None),
        ablation=args.ablation,
        budget=args.budget,
        max_turns=args.max_turns,
        max_tokens_total=args.max_tokens_total,
        workers=args.workers,
        replicates=args.replicates,
        seed=args.seed,
        ids=_item_ids(args.ids),
        question_type=args.question_type,
        depth=args.depth,
        limit=args.limit,
        max_run_tokens=args.max_run_tokens,
        max_run_cost=args.max_run_cost,
        shard=getattr(args, "shard", None),
        extra_tools=getattr(args, "extra_tools", None),
        extra_tools_count=getattr(args, "extra_tools_count", None),
        extra_tools_detail=getattr(args, "extra_tools_detail", "full"),
        extra_tools_timeout=getattr(args, "extra_tools_timeout", 30.0),
        extra_tools_cost=getattr(args, "extra_tools_cost", 1),
        distractible=getattr(args, "distractible", None),
        prompts=getattr(args, "prompts", None),
        family=getattr(args, "family", None),
        tier=getattr(args, "tier", None),
    )


def build_spec(args: argparse.Namespace):
    """The corpus, the RunSpec (the launch service's) and its items from the run flags; fails before anything is
    written."""
    from workbench.service.execution import select_items

    spec = run_spec(launch_request(args), names=FLAGS)
    if args.agent == "llm":
        _read_env(args)
    corpus = open_data(args.data, args.quiet)
    items = select_items(corpus, spec)
    if args.agent == "llm" and not args.dry_run:
        _check_model(spec)
    return corpus, spec, items


def _read_env(args: argparse.Namespace) -> None:
    """Read --env-file into the environment, and warn when the key's variable is still unset for a server."""
    if args.env_file:
        from workbench.service.envfile import load_env_file

        load_env_file(Path(args.env_file))
    if args.api_key_env and args.base_url and not os.environ.get(args.api_key_env):
        # a local server may need no key, so this is not refused; but a typo in the name would send none
        sys.stderr.write(
            f"warning: --api-key-env {args.api_key_env}: that variable is not set; the calls to "
            f"{args.base_url} go without a key\n"
        )


def _check_model(spec) -> None:
    """The model can be reached as configured (a key, a local model installed) before the run is created."""
    from workbench.service.agents import check_model
    from workbench.service.errors import ConfigError, LocalModelUnavailable

    try:
        check_model(spec.model, spec.agent_options)
    except (ConfigError, LocalModelUnavailable) as exc:
        raise UsageError(str(exc)) from None


def execute(spec, corpus, store, quiet: bool) -> dict[str, Any]:
    """Run one spec with progress on stderr; say so when a run-wide limit, a server gone or a full disk stopped it."""
    from workbench.cli.progress import Progress
    from workbench.service.execution import runner

    progress = Progress(spec.name, quiet=quiet)
    try:
        result = asyncio.run(until_signal(runner(spec, corpus, store, on_event=progress.update).run()))
    finally:
        progress.close()
    if result.get("store_full"):  # nothing more could be committed: a rerun redoes the episodes it cut short
        sys.stderr.write(
            f"stopped early: {result['store_full']}; the run is incomplete ({result['done']} of "
            f"{result['planned']}, every finished trajectory kept): free space on the store's disk and run the "
            "same command again to continue\n"
        )
    elif result.get("limit"):  # the same limit would stop a rerun at once
        flag = LIMIT_FLAGS[result["limit"]]
        sys.stderr.write(
            f"stopped early: {result['stop_reason']}; the run is incomplete ({result['done']} of "
            f"{result['planned']}): raise {flag} and run the command again to continue\n"
        )
    elif result.get("unreachable"):  # a rerun redoes the episodes it cut short, once the server listens again
        sys.stderr.write(
            f"stopped early: {result['stop_reason']}; the run is incomplete ({result['done']} of "
            f"{result['planned']}): start the server (or wait until it listens) and run the same "
            "command again to continue\n"
        )
    elif result.get("stop_reason"):
        sys.stderr.write(f"stopped early: {result['stop_reason']}; run the same command again to continue\n")
    return result


def finished_status(*results: dict[str, Any]) -> int:
    """0, or ExitCode.INCOMPLETE when a run-wide limit, an unreachable model server or a full disk left a run
    unfinished (a script must not take it for done)."""
    stopped = any(
        r.get("store_full") or ((r.get("limit") or r.get("unreachable")) and r["done"] < r["planned"]) for r in results
    )
    return ExitCode.INCOMPLETE if stopped else ExitCode.OK


def cmd_run(args: argparse.Namespace) -> int:
    from workbench.cli.render.run import print_report
    from workbench.service import paths
    from workbench.service.stores import open_store

    corpus, spec, items = build_spec(args)
    if args.dry_run:
        from workbench.cli.render.run import print_estimate
        from workbench.service.estimate import estimate

        est = estimate(spec, items, paths.store_path(args.db))
        print_estimate(est, [i.id for i in items], spec.agent == "llm", args.format)
        return ExitCode.OK
    store = _held(open_store(paths.new_store_path(args.db)))
    result = execute(spec, corpus, store, args.quiet)
    if args.format == "table":  # the four axes only: the analytics and the reference block are `report`'s
        from workbench.service.reports import run_report

        print_report(run_report(store, spec.name), args.format, brief=True)
    else:
        print_report(_report(store, spec.name, corpus=corpus), args.format)
    return finished_status(result)


def _sequential_caps(args: argparse.Namespace) -> None:
    """Refuse the swept axis's own cap flag; give the other caps their protocol defaults when not set."""
    from sandbox.records import Caps

    swept = SWEPT_CAP[args.axis]
    if getattr(args, swept) is not None:
        raise UsageError(
            f"--{swept.replace('_', '-')} conflicts with --axis {args.axis}: the grid sets it at each level"
        )
    defaults = Caps()
    for flag in SWEPT_CAP.values():
        if getattr(args, flag) is None:
            setattr(args, flag, getattr(defaults, flag))


class PlateauOptions(TypedDict):
    """The plateau test's settings as the `scale` flags give them (`stats.plateau`'s keyword arguments)."""

    population: int | None
    alpha: float
    correction: str
    n_boot: int
    seed: int
    two_stage: bool | None  # None: auto


def _plateau_options(args: argparse.Namespace) -> PlateauOptions:
    return {
        "population": args.population,
        "alpha": args.alpha,
        "correction": args.correction,
        "n_boot": args.boot,
        "seed": args.boot_seed,
        "two_stage": {"auto": None, "on": True, "off": False}[args.two_stage],
    }


def cmd_scale(args: argparse.Namespace) -> int:
    """`scale plateau | strategies | sequential | tools | parallel`."""
    scale = {
        "plateau": _scale_plateau,
        "strategies": _scale_strategies,
        "sequential": _scale_sequential,
        "tools": _scale_tools,
    }.get(args.scale_command, _scale_parallel)
    return scale(args)


def _scale_plateau(args: argparse.Namespace) -> int:
    """The plateau of a scores file's study (`--scores`) or of a stored group."""
    from workbench.cli.render.scaling import print_plateau
    from workbench.service import scaling

    if args.scores:
        result = scaling.file_plateau(
            Path(args.scores), args.study, matched_trials=args.matched_trials, **_plateau_options(args)
        )
    else:
        if args.matched_trials:
            raise UsageError("--matched-trials is for --scores; a group pairs trials as its recorded protocol says")
        result = scaling.group_plateau(
            _open_store(args.db), args.group, cost_mode=args.cost_mode, **_plateau_options(args)
        )
    print_plateau(result, args.format)
    return ExitCode.OK


def _scale_strategies(args: argparse.Namespace) -> int:
    """The stored sequential groups' strategies compared."""
    from workbench.cli.render.scaling import print_strategies
    from workbench.service import scaling

    print_strategies(
        scaling.strategy_comparison(
            _open_store(args.db), args.groups, cost_mode=args.cost_mode, **_plateau_options(args)
        ),
        args.format,
    )
    return ExitCode.OK


def _scale_sequential(args: argparse.Namespace) -> int:
    """Run a sequential sweep per strategy (every group's specs checked before anything runs), then show the
    plateau, or the strategies compared when there are several."""
    from workbench.service import paths, scaling
    from workbench.service.stores import open_store

    grid = scaling.parse_grid(args.grid, args.axis)
    _sequential_caps(args)
    corpus, base, _ = build_spec(args)
    _check_verifier(args, base)
    groups = scaling.strategy_groups(base.name, args.strategy or [None])
    sweeps = [_sweep(args, base, grid, group, strategy) for group, strategy in groups]
    store = _held(open_store(paths.new_store_path(args.db)))
    for (group, _), specs in zip(groups, sweeps, strict=True):
        scaling.check_group(store, group, specs)
    specs = [spec for sweep in sweeps for spec in sweep]
    results = []
    for spec in specs:
        results.append(execute(spec, corpus, store, args.quiet))
        if _cut_short(results[-1]):
            return _sweep_stopped(spec.name, specs[len(results) :], results)
    _print_sequential(args, store, base.name, [g for g, _ in groups])
    return finished_status(*results)


def _sweep(args: argparse.Namespace, base, grid: list[str], group: str, strategy: StrategyName | None) -> list:
    """One strategy's group: a spec per level of the grid."""
    from workbench.service import scaling

    spec = replace(base, name=group, verifier_options=_verifier_options(args))
    return scaling.sequential_specs(
        spec, args.axis, grid, args.protocol, strategy, args.verifier if strategy == "verifier" else None
    )


def _print_sequential(args: argparse.Namespace, store, name: str, groups: list[str]) -> None:
    """The strategies compared when the sweep ran several, else the one group's plateau."""
    from workbench.cli.render.scaling import print_plateau, print_strategies
    from workbench.service import scaling

    if len(groups) > 1:
        print_strategies(
            scaling.strategy_comparison(store, groups, cost_mode=args.cost_mode, **_plateau_options(args)), args.format
        )
    else:
        print_plateau(
            scaling.group_plateau(store, name, cost_mode=args.cost_mode, **_plateau_options(args)), args.format
        )


def _verifier_options(args: argparse.Namespace) -> VerifierOptions:
    """How to reach a model verifier: execution options, not the group's identity (those given only)."""
    options: VerifierOptions = {}
    if args.verifier_base_url is not None:
        options["base_url"] = args.verifier_base_url
    if args.verifier_timeout is not None:
        options["timeout_s"] = args.verifier_timeout
    return options


def _check_verifier(args: argparse.Namespace, base) -> None:
    """A model verifier can be configured (its key, its server) before anything runs or is written."""
    if "verifier" not in (args.strategy or []):
        for flag in ("verifier", "verifier_base_url", "verifier_timeout"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag.replace('_', '-')} is for --strategy verifier")
        return
    from workbench.service.scaling import check_verifier

    check_verifier(args.verifier or "evidence", args.verifier_base_url)


def _scale_tools(args: argparse.Namespace) -> int:
    """The registry-size ablation: each level is the run `run --extra-tools … --extra-tools-count N
    --extra-tools-detail D` makes, grouped; then the registry-size table."""
    from dataclasses import replace

    from workbench.cli.render.scaling import print_registry
    from workbench.service import paths, scaling
    from workbench.service.stores import open_store

    counts, details = scaling.parse_counts(args.counts), scaling.parse_details(args.details)
    if args.extra_tools_count is not None or args.extra_tools_detail != "full":
        raise UsageError("scale tools sets the count and detail of each level: use --counts and --detail")
    request = launch_request(args)
    group = request.name or f"{run_spec(replace(request, extra_tools=None), names=FLAGS).name}-tools"

    def spec_of(name: str, count: int, detail: str):
        level = replace(
            request,
            name=name,
            extra_tools=request.extra_tools if count else None,
            extra_tools_count=count if count else None,
            extra_tools_detail=detail if count else "full",
        )
        return run_spec(level, names=FLAGS)

    specs = scaling.tools_specs(group, counts, details, spec_of)  # every registry read before the store opens
    corpus = open_data(args.data, args.quiet)
    store = _held(open_store(paths.new_store_path(args.db)))
    results = []
    for spec in specs:
        results.append(execute(spec, corpus, store, args.quiet))
        if _cut_short(results[-1]):
            return _sweep_stopped(spec.name, specs[len(results) :], results)
    print_registry(scaling.tools_report(store, group), args.format)
    return finished_status(*results)


def _cut_short(result: dict[str, Any]) -> bool:
    """A level that stopped before its last item (a run-wide limit or an unreachable model server; a signal ends the
    command instead)."""
    return bool(result["stop_reason"]) and result["done"] < result["planned"]


def _sweep_stopped(level: str, rest: list, results: list[dict[str, Any]]) -> int:
    """A sweep stops at the first level cut short: under the continuation protocol the next level would start that
    level's unfinished items afresh (they have no prefix) and store them as final, and a rerun could never redo
    them; under any protocol the same limit or dead server would cut the next levels short too. Rerunning the
    command resumes the level and then runs the rest."""
    names = ", ".join(spec.name for spec in rest)
    if names:
        sys.stderr.write(
            f"the sweep stopped at {level}: not run yet: {names}; run the same command again to continue\n"
        )
    return finished_status(*results)


def _scale_parallel(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from workbench.cli.progress import JudgingProgress
    from workbench.cli.render.scaling import print_parallel
    from workbench.service import paths, scaling
    from workbench.service.scaling.studies import identical_samples_note
    from workbench.service.stores import open_store

    if args.scores:
        return _scale_parallel_scores(args)
    if args.studies:
        raise UsageError("--study is for --scores (a file of several studies)")
    if args.tasks:
        raise UsageError("--tasks is for --scores (the tasks of a file to read)")
    ks = scaling.parse_ks(args.k or "1,2,4,8")  # a bad --k is ScalingInputError: one line, exit 2
    corpus, spec, _ = build_spec(args)
    spec = replace(
        spec,
        replicates=max(ks),
        kind="parallel",
        scaling={
            "mode": "parallel",
            "ks": ks,
            "judge": args.judge,
            "orders": args.orders,
            "tie_rule": args.tie_rule,
            "judge_trials": args.judge_trials,
            "cost_mode": args.cost_mode,
        },
    )
    judge = _judge(args, spec)
    if args.judge_trials > 1 and judge is None:
        raise UsageError("--judge-trials needs a judge (--judge evidence, same or a model)")
    note = identical_samples_note(spec)
    if note:
        sys.stderr.write(f"warning: {note}\n")
    store = _held(open_store(paths.new_store_path(args.db)))
    result = execute(spec, corpus, store, args.quiet)
    report = asyncio.run(
        scaling.parallel_report(
            store,
            spec.name,
            corpus,
            ks,
            judge,
            n_orders=args.orders,
            seed=args.seed,
            tie_rule=args.tie_rule,
            judge_trials=args.judge_trials,
            cost_mode=args.cost_mode,
            progress=JudgingProgress(spec.name, args.quiet),
        )
    )
    print_parallel(report, args.format)
    return finished_status(result)


def _scale_parallel_scores(args: argparse.Namespace) -> int:
    """`scale parallel --scores FILE`: a study measured elsewhere read as a sampled one; nothing is run or stored."""
    from workbench.cli.render.scaling import print_parallel_files
    from workbench.service import scaling

    sampling = {"run_name": "--run", "limit": "--limit", "ids": "--ids", "judge_base_url": "--judge-base-url"}
    given = [flag for name, flag in sampling.items() if getattr(args, name, None) is not None]
    if given:
        raise UsageError(f"{', '.join(given)}: for sampling here; --scores reads a study measured elsewhere")
    ks = scaling.parse_ks(args.k) if args.k else None
    tasks = scaling.task_subset(args.tasks) if args.tasks else None  # a bad --tasks is ScalingInputError: exit 2
    studies = scaling.file_parallel(Path(args.scores), args.studies, ks, seed=args.seed, tasks=tasks)
    print_parallel_files([s.to_json() for s in studies], args.format, args.scores)
    return ExitCode.OK


def _judge(args: argparse.Namespace, spec):
    from workbench.service.errors import ConfigError
    from workbench.service.scaling.judging import make_judge

    try:
        return make_judge(args.judge, spec, args.judge_base_url)
    except (ConfigError, ValueError) as exc:
        raise UsageError(str(exc)) from None
