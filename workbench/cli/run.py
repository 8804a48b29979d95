"""`run` and `scale`: a RunSpec from the flags, the runner, and how the run ended."""
from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from workbench.cli.context import _held, _open_store, _print_import, _report, until_signal
from workbench.cli.errors import ExitCode, UsageError
from workbench.cli.parser import SWEPT_CAP
from workbench.service.launch import LaunchRequest, run_spec


LIMIT_FLAGS = {"tokens": "--max-run-tokens", "cost": "--max-run-cost"}


# How the CLI names each field of a launch request in a message: its flag
FLAGS = {**{key: "--" + key.replace("_", "-") for key in LaunchRequest.__dataclass_fields__},
         "name": "--run", "dataset": "--data"}


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
        dataset=args.data, agent=args.agent, name=args.run_name, model=args.model, base_url=args.base_url,
        client=args.client, api_key_env=args.api_key_env, env_file=args.env_file, temperature=args.temperature,
        top_p=args.top_p, top_k=args.top_k, max_tokens=args.max_tokens, reasoning_effort=args.reasoning_effort,
        text_tools=args.text_tools, timeout=args.timeout, concurrency=args.concurrency, rpm=args.rpm,
        ablation=args.ablation, budget=args.budget, max_turns=args.max_turns, max_tokens_total=args.max_tokens_total,
        workers=args.workers, replicates=args.replicates, seed=args.seed, ids=_item_ids(args.ids),
        question_type=args.question_type, depth=args.depth, limit=args.limit, max_run_tokens=args.max_run_tokens,
        max_run_cost=args.max_run_cost, shard=getattr(args, "shard", None))


def build_spec(args: argparse.Namespace):
    """The corpus, the RunSpec (the launch service's) and its items from the run flags; fails before anything is
    written."""
    from sandbox.datasets import open_dataset
    from sandbox.runner import select_items
    from workbench.service import paths

    spec = run_spec(launch_request(args), names=FLAGS)
    if args.agent == "llm":
        _read_env(args)
    corpus, imported = open_dataset(args.data, paths.cache_dir())
    if imported is not None:
        _print_import(imported, args.data)
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
        sys.stderr.write(f"warning: --api-key-env {args.api_key_env}: that variable is not set; the calls to "
                         f"{args.base_url} go without a key\n")


def _check_model(spec) -> None:
    """The model can be reached as configured (a key, a local model installed) before the run is created."""
    from sandbox.agents.llm import ConfigError, config_from_options
    from sandbox.agents.local_model import LOCAL_PREFIX, LocalModelUnavailable, check_installed

    try:
        if spec.model.startswith(LOCAL_PREFIX):
            check_installed(spec.model[len(LOCAL_PREFIX):])
        else:
            config_from_options({"model": spec.model, **spec.agent_options}).check()
    except (ConfigError, LocalModelUnavailable) as exc:
        raise UsageError(str(exc)) from None


def execute(spec, corpus, store, quiet: bool) -> dict[str, Any]:
    """Run one spec with progress on stderr; say so when a run-wide limit stopped it."""
    from sandbox.runner import Runner
    from workbench.cli.progress import Progress

    progress = Progress(spec.name, quiet=quiet)
    try:
        result = asyncio.run(until_signal(Runner(spec, corpus, store, on_event=progress.update).run()))
    finally:
        progress.close()
    if result.get("limit"):  # the same limit would stop a rerun at once
        flag = LIMIT_FLAGS[result["limit"]]
        sys.stderr.write(f"stopped early: {result['stop_reason']}; the run is incomplete ({result['done']} of "
                         f"{result['planned']}): raise {flag} and run the command again to continue\n")
    elif result.get("unreachable"):  # a rerun redoes the episodes it cut short, once the server listens again
        sys.stderr.write(f"stopped early: {result['stop_reason']}; the run is incomplete ({result['done']} of "
                         f"{result['planned']}): start the server (or wait until it listens) and run the same "
                         "command again to continue\n")
    elif result.get("stop_reason"):
        sys.stderr.write(f"stopped early: {result['stop_reason']}; run the same command again to continue\n")
    return result


def finished_status(*results: dict[str, Any]) -> int:
    """0, or ExitCode.INCOMPLETE when a run-wide limit or an unreachable model server left a run unfinished (a
    script must not take it for done)."""
    stopped = any((r.get("limit") or r.get("unreachable")) and r["done"] < r["planned"] for r in results)
    return ExitCode.INCOMPLETE if stopped else ExitCode.OK


def cmd_run(args: argparse.Namespace) -> int:
    from storage import Store
    from workbench.service import paths
    from workbench.cli.render import print_report

    corpus, spec, items = build_spec(args)
    if args.dry_run:
        from workbench.service.estimate import print_estimate

        print_estimate(spec, items, paths.store_path(args.db), args.format)
        return ExitCode.OK
    store = _held(Store(paths.new_store_path(args.db)))
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
        raise UsageError(f"--{swept.replace('_', '-')} conflicts with --axis {args.axis}: the grid sets it at each level")
    defaults = Caps()
    for flag in SWEPT_CAP.values():
        if getattr(args, flag) is None:
            setattr(args, flag, getattr(defaults, flag))


def _plateau_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"population": args.population, "alpha": args.alpha, "correction": args.correction,
            "n_boot": args.boot, "seed": args.boot_seed,
            "two_stage": {"auto": None, "on": True, "off": False}[args.two_stage]}


def cmd_scale(args: argparse.Namespace) -> int:
    from workbench.service import scaling
    from workbench.cli.render import print_plateau

    if args.scale_command == "plateau":
        if args.scores:
            result = scaling.file_plateau(Path(args.scores), args.study, matched_trials=args.matched_trials,
                                          **_plateau_options(args))
        else:
            if args.matched_trials:
                raise UsageError("--matched-trials is for --scores; a group pairs trials as its recorded protocol says")
            result = scaling.group_plateau(_open_store(args.db), args.group, **_plateau_options(args))
        print_plateau(result, args.format)
        return ExitCode.OK
    from storage import Store
    from workbench.service import paths

    if args.scale_command == "sequential":
        grid = scaling.parse_grid(args.grid, args.axis)
        _sequential_caps(args)
        corpus, base, _ = build_spec(args)
        specs = scaling.sequential_specs(base, args.axis, grid, args.protocol)  # validated before the store opens
        store = _held(Store(paths.new_store_path(args.db)))
        scaling.check_group(store, base.name, specs)
        results = []
        for spec in specs:
            results.append(execute(spec, corpus, store, args.quiet))
            if _cut_short(results[-1]):
                return _sweep_stopped(spec.name, specs[len(results):], results)
        print_plateau(scaling.group_plateau(store, base.name, **_plateau_options(args)), args.format)
        return finished_status(*results)
    return _scale_parallel(args)


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
        sys.stderr.write(f"the sweep stopped at {level}: not run yet: {names}; run the same command again to "
                         "continue\n")
    return finished_status(*results)


def _scale_parallel(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from storage import Store
    from workbench.service import paths, scaling
    from workbench.cli.render import print_parallel

    try:
        ks = sorted({int(k) for k in args.k.split(",") if k.strip()})
    except ValueError:
        raise UsageError(f"--k must be whole numbers, got {args.k!r}") from None
    if not ks or ks[0] < 1:
        raise UsageError("--k needs positive sample counts")
    corpus, spec, _ = build_spec(args)
    spec = replace(spec, replicates=max(ks), kind="parallel",
                   scaling={"mode": "parallel", "ks": ks, "judge": args.judge, "orders": args.orders})
    judge = _judge(args, spec)
    store = _held(Store(paths.new_store_path(args.db)))
    result = execute(spec, corpus, store, args.quiet)
    report = asyncio.run(scaling.parallel_report(store, spec.name, corpus, ks, judge, n_orders=args.orders,
                                                 seed=args.seed))
    print_parallel(report, args.format)
    return finished_status(result)


def _judge(args: argparse.Namespace, spec):
    from sandbox import judges
    from sandbox.agents.llm import ConfigError

    if args.judge == "none":
        return None
    if args.judge == "evidence":
        return judges.EvidenceJudge()
    model = spec.model if args.judge == "same" else args.judge
    if not model:
        raise UsageError("--judge same needs an LLM run (--agent llm --model …)")
    base_url = args.judge_base_url or (spec.agent_options.get("base_url") if args.judge == "same" else None)
    try:
        return judges.LLMJudge(model, base_url=base_url, api_key_env=spec.agent_options.get("api_key_env")
                               if args.judge == "same" else None,
                               client=(spec.agent_options.get("client") or "auto") if args.judge == "same" else "auto")
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
