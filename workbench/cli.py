"""`agenthop-tui`: the Textual workbench, or with `--batch` the same operations headless.

Exit status: 0 success, 2 bad input (dataset, flags, run conflicts; nothing written),
1 an internal failure (with a traceback), 3 a run stopped incomplete by --max-run-tokens/--max-run-cost, 130 interrupted (128 + the signal: 143 SIGTERM, 129 SIGHUP). The `--batch` path never
imports textual, and litellm only when an LLM agent runs.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import traceback
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from workbench.argparser import Parser  # stdlib only: the parser stays light

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
LIMIT_FLAGS = {"tokens": "--max-run-tokens", "cost": "--max-run-cost"}
FORMATS = ("table", "json", "csv", "markdown")


class UsageError(Exception):
    """A user's mistake in flags or names: reported in one line, exit 2."""


class Terminated(Exception):
    """SIGTERM or SIGHUP ended a run (as Ctrl-C does): exit 128 + the signal's number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="agenthop-tui --batch", description="AgentHop Workbench, headless.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run an agent on a dataset and store every step")
    add_run_arguments(run)
    run.add_argument("--shard", type=_shard, metavar="I/N",
                     help="run only shard I of N of the selected items × replicates (a stable hash: the same on "
                          "every host); `merge` then joins the shards' stores into one run")

    serve = sub.add_parser("serve-mcp", help="serve a run to an MCP client (any MCP-capable agent), under the same "
                                             "ledger; needs the [mcp] extra")
    add_serve_arguments(serve)

    merge = sub.add_parser("merge", help="copy runs from other stores into this one; shards of a run become one run")
    merge.add_argument("sources", nargs="+", metavar="SRC.db")
    merge.add_argument("--db", help="the store merged into (default: $AGENTHOP_DB or the user data dir)")
    merge.add_argument("--runs", help="comma-separated run names (default: every run of the sources)")
    merge.add_argument("--include-partial", action="store_true",
                       help="also copy unfinished trajectories (default: finished ones only)")
    merge.add_argument("--format", choices=("table", "json"), default="table")

    runs = sub.add_parser("runs", help="list the runs in the store")
    runs.add_argument("--db")
    runs.add_argument("--format", choices=("table", "json"), default="table")

    report = sub.add_parser("report", help="the four-axis report of one or more runs")
    report.add_argument("names", nargs="+", metavar="NAME")
    report.add_argument("--db")
    report.add_argument("--format", choices=FORMATS, default="table")
    report.add_argument("--panel", action="store_true", help="one table over all the runs (the paper's Table 2)")
    report.add_argument("--ci", action="store_true", help="bootstrap 95%% intervals (B = 10,000, seeded)")
    report.add_argument("--external", help="CSV of run,score for a Spearman correlation with run accuracy (--panel)")

    board = sub.add_parser("leaderboard", help="people and models on the items people have played (four axes)")
    board.add_argument("--db")
    board.add_argument("--format", choices=("table", "json"), default="table")
    board.add_argument("--min-coverage", type=float, default=None, metavar="SHARE",
                       help="rank only rows covering at least this share of the items people played (default 0.5)")

    delete = sub.add_parser("delete", help="delete a run with its trajectories and steps (asks unless --yes)")
    delete.add_argument("name", metavar="NAME")
    delete.add_argument("--yes", action="store_true", help="do not ask (needed when stdin is not a terminal)")
    delete.add_argument("--db")

    rename = sub.add_parser("rename", help="give a run another name")
    rename.add_argument("old", metavar="OLD")
    rename.add_argument("new", metavar="NEW", type=_run_name)
    rename.add_argument("--db")

    compare = sub.add_parser("compare", help="two runs side by side on their common items")
    compare.add_argument("a", metavar="RUN_A")
    compare.add_argument("b", metavar="RUN_B")
    compare.add_argument("--db")
    compare.add_argument("--format", choices=("table", "json"), default="table")

    from workbench.items import KINDS, OUTCOMES, SORTS  # stdlib only: the parser stays light

    items = sub.add_parser("items", help="a dataset's items with how many runs got each right; --show one item")
    items.add_argument("--data", default="builtin", help="'builtin' or a release directory")
    items.add_argument("--db", help="results store whose runs are counted (default: $AGENTHOP_DB or the user data dir)")
    items.add_argument("--type", dest="kind", choices=KINDS, help="single- or multi-target items")
    items.add_argument("--depth", type=int, choices=(1, 2))
    items.add_argument("--reasoning", help="a reasoning type of the dataset (e.g. METHOD)")
    items.add_argument("--tier", help="a consensus tier of the dataset (e.g. gold)")
    items.add_argument("--right", choices=tuple(OUTCOMES), help=" / ".join(f"{k}: {v}" for k, v in OUTCOMES.items()))
    items.add_argument("--text", default="", help="words that must all appear in the id or the question")
    items.add_argument("--sort", default="file", choices=SORTS, help="file order, or a column (right: share right)")
    items.add_argument("--reverse", action="store_true")
    items.add_argument("--show", metavar="ITEM_ID", help="one item: question, options, neighbourhood tree, trajectories")
    items.add_argument("--format", choices=("table", "json"), default="table")

    export = sub.add_parser("export", help="a run as the reference's summary.json, or as JSON Lines")
    export.add_argument("name")
    export.add_argument("--format", choices=("agenthop-summary", "jsonl"), required=True)
    export.add_argument("--out", help="file to write (default: stdout)")
    export.add_argument("--all-attempts", action="store_true", help="jsonl: every attempt, not only the final ones")
    export.add_argument("--db")

    imp = sub.add_parser("import-reference", help="bring reference-harness trajectories in, by replay through our sandbox")
    imp.add_argument("dir", help="experiments/{model} (or experiments/ with --model)")
    imp.add_argument("--data", required=True, help="the release directory the trajectories were run on")
    imp.add_argument("--run", dest="run_name", required=True, type=_run_name)
    imp.add_argument("--model", help="the model subdirectory to import, when DIR holds several")
    imp.add_argument("--db")
    imp.add_argument("--format", choices=("table", "json"), default="table")
    imp.add_argument("--quiet", action="store_true")
    imp.add_argument("--force", action="store_true",
                     help="import even when the logs do not match --data (unknown ids, another correct_index)")

    audit = sub.add_parser("audit", help="benchmark audit: verdicts, label edits, the corrected release")
    audit_sub = audit.add_subparsers(dest="audit_command", required=True, metavar="ACTION")
    show = audit_sub.add_parser("show", help="an item's question, options, gold answer and labelled evidence")
    verdict = audit_sub.add_parser("verdict", help="record Pass / Flag / Remove with a note and the three checks")
    label = audit_sub.add_parser("label", help="add, remove or re-classify a section label")
    undo = audit_sub.add_parser("undo", help="undo a label edit (recorded as an edit of its own; history is kept)")
    for p in (show, verdict, label, undo):
        p.add_argument("item")
    undo.add_argument("--edit", type=int, help="the edit's id (`audit show` lists them; default: the item's latest)")
    verdict.add_argument("--verdict", choices=("pass", "flag", "remove"), required=True)
    verdict.add_argument("--note", default="")
    for check in ("question-ok", "gold-supported", "labels-accurate"):
        verdict.add_argument(f"--{check}", choices=("yes", "no"))
    label.add_argument("--action", choices=("add", "remove", "reclassify"), required=True)
    label.add_argument("--arxiv-id", required=True)
    label.add_argument("--section", required=True, help="a header (or text that resolves to one), or with add an "
                                                         "alias such as C as `audit show` and the errors list them")
    label.add_argument("--relevance", choices=("direct", "supporting"), help="required with add and reclassify")
    export_audit = audit_sub.add_parser("export", help="write the corrected dataset in the release format")
    export_audit.add_argument("--out", required=True)
    for p in (show, verdict, label, undo, export_audit):
        p.add_argument("--data", default="builtin")
        p.add_argument("--db")
    for p in (verdict, label, undo):
        p.add_argument("--reviewer", required=True, type=_nonblank("reviewer"))

    scale = sub.add_parser("scale", help="test-time scaling: sequential budgets, the plateau, parallel sampling")
    scale_sub = scale.add_subparsers(dest="scale_command", required=True, metavar="MODE")
    seq = scale_sub.add_parser("sequential", help="the same items at each budget of a grid, then the plateau")
    seq.add_argument("--axis", choices=("tokens", "points", "turns"), required=True)
    seq.add_argument("--grid", required=True, help="budgets, e.g. 8k,16k,32k (tokens) or 10,20,30 (points)")
    seq.add_argument("--protocol", choices=("fresh", "continuation"), default="fresh",
                     help="fresh start per budget, or continue from the level below (token axis)")
    add_plateau_arguments(seq)
    add_run_arguments(seq, formats=("table", "json", "csv"))
    # unset unless given, so a flag for the swept axis's own cap is seen and refused (cmd_scale fills the rest)
    seq.set_defaults(**{flag: None for flag in SWEPT_CAP.values()})
    plat = scale_sub.add_parser("plateau", help="the scaling plateau of per-item scores (a file, or a sequential group)")
    source = plat.add_mutually_exclusive_group(required=True)
    source.add_argument("--scores", help='JSON {"<budget>": {"<item>": score or [trial scores]}} or CSV '
                                         'item,budget,score[,trial] (an empty score or null is missing; '
                                         'booleans are refused: write 1/0)')
    source.add_argument("--group", help="a sequential run group in the store (the --run given to scale sequential)")
    plat.add_argument("--study", help="with --scores: the study, when the JSON holds several")
    plat.add_argument("--matched-trials", action="store_true",
                      help="with --scores and several trials per item: trial t is one chain across budgets "
                           "(continuation), so differences pair within the trial index")
    plat.add_argument("--db")
    plat.add_argument("--format", choices=("table", "json", "csv"), default="table")
    add_plateau_arguments(plat)
    para = scale_sub.add_parser("parallel", help="K samples per item, committed by vote and by judges; the gap")
    para.add_argument("--k", default="1,2,4,8", help="sample counts, e.g. 1,2,4,8,16 (K = the largest)")
    para.add_argument("--judge", default="evidence",
                      help="'evidence' (offline), 'none', 'same' (the run's model) or a litellm model string")
    para.add_argument("--judge-base-url")
    para.add_argument("--orders", type=_positive, default=8, help="random orders for pairwise selection")
    add_run_arguments(para, formats=("table", "json", "csv"))

    synth = sub.add_parser("synth", help="write a generated benchmark in the release format")
    synth.add_argument("--out", required=True)
    synth.add_argument("--preset", choices=("demo", "paper"), default="demo")
    synth.add_argument("--seed", type=_bounded("seed"), default=0)
    synth.add_argument("--items", type=_positive)
    synth.add_argument("--papers", type=_positive)
    return parser


def add_plateau_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--population", type=_positive, help="size N of the task population (finite population correction)")
    p.add_argument("--alpha", type=_real("alpha"), default=0.05, help="family-wise level (above 0, at most 0.5)")
    p.add_argument("--correction", choices=("bonferroni", "holm"), default="bonferroni")
    p.add_argument("--boot", type=_at_least(2, "the bootstrap SD needs two replicates"), default=10_000,
                   help="bootstrap replicates B (at least 2)")
    p.add_argument("--boot-seed", type=_bounded("seed"), default=0)
    p.add_argument("--two-stage", choices=("auto", "on", "off"), default="auto",
                   help="with T > 1 trials per item: also resample trials inside items (auto: when --population "
                        "is given, so the FPC does not erase run-to-run variance)")


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of `serve-mcp`: the run's name, data, slice and caps, and the transport."""
    from sandbox.records import Caps

    p.add_argument("--data", default="builtin", help="'builtin' or a release directory")
    p.add_argument("--run", dest="run_name", type=_run_name, required=True, help="run name (re-use it to resume)")
    p.add_argument("--db", help="results store (default: $AGENTHOP_DB or the user data dir)")
    p.add_argument("--limit", type=_bounded("limit"))
    p.add_argument("--ids", help="comma-separated item ids")
    p.add_argument("--question-type", choices=("single-target", "multi-target", "st", "mt"))
    p.add_argument("--depth", type=int, choices=(1, 2))
    p.add_argument("--replicates", type=_bounded("replicates"), default=1)
    p.add_argument("--budget", type=_bounded("budget"), default=Caps.budget)
    p.add_argument("--max-turns", type=_bounded("max_turns"), default=Caps.max_turns)
    p.add_argument("--max-tokens-total", type=_bounded("max_tokens_total"), default=Caps.max_tokens_total)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: the address to listen on")
    p.add_argument("--port", type=int, default=8765, help="http: the port (0: any free one, printed on stderr)")


def add_run_arguments(p: argparse.ArgumentParser, formats: tuple[str, ...] = ("table", "json")) -> None:
    """The flags of `run`, shared by `scale sequential` and `scale parallel` (their names are a contract)."""
    from sandbox.records import Caps  # the protocol's caps are the flags' defaults

    p.add_argument("--data", default="builtin", help="'builtin' or a release directory")
    p.add_argument("--agent", default="heuristic", type=_agent, metavar="{" + ",".join(BATCH_AGENTS) + "}")
    p.add_argument("--run", dest="run_name", type=_run_name, help="run name (re-use it to resume)")
    p.add_argument("--db", help="results store (default: $AGENTHOP_DB or the user data dir)")
    p.add_argument("--workers", type=_bounded("workers"), default=8)
    p.add_argument("--limit", type=_bounded("limit"))
    p.add_argument("--ids", help="comma-separated item ids")
    p.add_argument("--question-type", choices=("single-target", "multi-target", "st", "mt"))
    p.add_argument("--depth", type=int, choices=(1, 2))
    p.add_argument("--seed", type=_bounded("seed"), default=0)
    p.add_argument("--replicates", type=_bounded("replicates"), default=1)
    p.add_argument("--budget", type=_bounded("budget"), default=Caps.budget)
    p.add_argument("--max-turns", type=_bounded("max_turns"), default=Caps.max_turns)
    p.add_argument("--max-tokens-total", type=_bounded("max_tokens_total"), default=Caps.max_tokens_total)
    p.add_argument("--ablation", default="full", choices=("full", "closed-book", "no-search", "gold-given"))
    p.add_argument("--format", choices=formats, default="table", help="format of the final report")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    llm = p.add_argument_group("LLM agent (--agent llm)")
    llm.add_argument("--model", help="any litellm model string, e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5")
    llm.add_argument("--base-url", help="an OpenAI-compatible server (vLLM, sglang, llama.cpp)")
    llm.add_argument("--api-key-env", help="the environment variable holding the key (default: the provider's)")
    llm.add_argument("--env-file", help="a .env file to read keys from (never written anywhere)")
    llm.add_argument("--temperature", type=_real("temperature"), help="0 to 2")
    llm.add_argument("--top-p", type=_real("top_p"), help="above 0, at most 1")
    llm.add_argument("--top-k", type=_bounded("top_k"))
    llm.add_argument("--max-tokens", type=_bounded("max_tokens"), help="per-call generation cap (default 16384 or the preset)")
    llm.add_argument("--reasoning-effort", type=_effort,
                     help="none|minimal|low|medium|high; for Anthropic models also a number of thinking tokens "
                          "(below --max-tokens)")
    llm.add_argument("--text-tools", action="store_true", help="tools described in the prompt, calls parsed from text")
    llm.add_argument("--timeout", type=_real("timeout"), help="seconds per model call (default 600)")
    llm.add_argument("--client", choices=("auto", "native", "litellm"),
                     help="who sends the calls: native (a pooled HTTP client, for OpenAI-compatible servers: openai/…, "
                          "hosted_vllm/…, local/…), litellm (every provider), auto (default: native where it can)")
    llm.add_argument("--concurrency", type=_bounded("concurrency"), help="at most this many calls in flight to the provider")
    llm.add_argument("--rpm", type=_real("rpm"), help="at most this many requests per minute")
    llm.add_argument("--max-run-tokens", type=_bounded("max_run_tokens"), default=0, help="stop the run past this many tokens")
    llm.add_argument("--max-run-cost", type=_real("max_run_cost"), default=0.0, help="stop the run past this many USD")
    llm.add_argument("--dry-run", action="store_true", help="print the items, caps and a cost estimate; run nothing")


BATCH_AGENTS = ("oracle", "random", "heuristic", "llm")


def _agent(text: str) -> str:
    """One of BATCH_AGENTS, or `human:NAME`, which `build_spec` refuses in one line with where to play instead."""
    from sandbox.agents.human import is_human

    if text in BATCH_AGENTS or is_human(text):
        return text
    raise argparse.ArgumentTypeError(f"invalid choice: '{text}' (choose from {', '.join(BATCH_AGENTS)})")


def refuse_human(agent: str) -> None:
    from sandbox.agents.human import is_human

    if is_human(agent):
        raise UsageError(f"'{agent}' is a person, and people play in the TUI, not in --batch: run agenthop-tui and "
                         "press P (or ctrl+p, 'Play the benchmark…'); --batch leaderboard, report and compare then "
                         "read the play")


def _at_least(low: int, why: str = ""):
    """An argparse type for a whole number of at least `low` (`why` says where the bound comes from)."""
    def parse(text: str) -> int:
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}" + (f" ({why})" if why else ""))
        return value
    parse.__name__ = "int"  # argparse names the type in "invalid int value: 'x'"
    return parse


_positive = _at_least(1)


def _nonblank(what: str):
    """An argparse type for a name that is recorded (a reviewer): empty or only spaces is refused."""
    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"a {what} name cannot be empty")
        return text.strip()
    return parse


def _run_name(text: str) -> str:
    """An argparse type for a run name, by the launch form's rule (`workbench.runname`): stripped, non-empty, at most
    80 printable characters."""
    from workbench.runname import name_problem

    if not text.strip():
        raise argparse.ArgumentTypeError("a run needs a name: got an empty one (leave out --run for a generated name)")
    problem = name_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text.strip()


def _shard(text: str):
    """An argparse type for `--shard I/N` (1 ≤ I ≤ N)."""
    from sandbox.shard import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _real(name: str):
    """An argparse type for the real number `name`, within `workbench.limits.FLOAT_BOUNDS` (argparse exits 2)."""
    from workbench.limits import float_out_of_bounds

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
        problem = float_out_of_bounds(name, value)
        if problem:
            raise argparse.ArgumentTypeError(f"{problem}, got {text}")
        return value

    parse.__name__ = name
    return parse


def _effort(text: str) -> str:
    from sandbox.agents.providers import REASONING_EFFORTS, valid_effort

    if valid_effort(text):
        return text
    raise argparse.ArgumentTypeError(f"invalid choice: '{text}' (choose from {', '.join(REASONING_EFFORTS)}, or a "
                                     "number of thinking tokens for Anthropic models)")


# The flags only the LLM agent reads, as (dest, flag); their defaults are None or False
LLM_ONLY = (("model", "--model"), ("base_url", "--base-url"), ("api_key_env", "--api-key-env"),
            ("env_file", "--env-file"), ("temperature", "--temperature"), ("top_p", "--top-p"), ("top_k", "--top-k"),
            ("max_tokens", "--max-tokens"), ("reasoning_effort", "--reasoning-effort"),
            ("text_tools", "--text-tools"), ("timeout", "--timeout"), ("concurrency", "--concurrency"),
            ("rpm", "--rpm"), ("client", "--client"))


def refuse_llm_flags(args: argparse.Namespace) -> None:
    """A scripted agent ignores the model's flags: saying nothing would let `--agent oracle --model x` look
    like a model run."""
    given = [flag for dest, flag in LLM_ONLY if getattr(args, dest, None) not in (None, False)]
    if args.agent != "llm" and given:
        verb = "applies" if len(given) == 1 else "apply"
        raise UsageError(f"{', '.join(given)} {verb} to --agent llm only")


def _item_ids(text: str | None) -> tuple[str, ...]:
    """--ids as a tuple; given but naming nothing (`--ids ""`) is refused: it would silently run every item."""
    if text is None:
        return ()
    ids = tuple(i.strip() for i in text.split(",") if i.strip())
    if not ids:
        raise UsageError("--ids is empty: name the items (comma-separated), or leave --ids out to run them all")
    return ids


def _bounded(name: str):
    """An argparse type for the run number `name`, within `workbench.limits.RUN_BOUNDS` (argparse exits 2)."""
    from workbench.limits import out_of_bounds

    def parse(text: str) -> int:
        try:
            value = int(text.strip().replace("_", ""))
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        problem = out_of_bounds(name, value)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value

    parse.__name__ = name  # argparse names the type in its messages
    return parse


# ---------------------------------------------------------------- commands


def build_spec(args: argparse.Namespace):
    """The corpus, the RunSpec and its items from the run flags; fails before anything is written."""
    from sandbox.datasets import dataset_key, open_dataset
    from sandbox.records import Caps
    from sandbox.runner import RunSpec, select_items
    from workbench import paths

    refuse_human(args.agent)
    refuse_llm_flags(args)
    item_ids = _item_ids(args.ids)
    corpus, imported = open_dataset(args.data, paths.cache_dir())
    if imported is not None:
        _print_import(imported, args.data)
    caps = Caps(budget=args.budget, max_turns=args.max_turns, max_tokens_total=args.max_tokens_total)
    model = args.model if args.agent == "llm" else None
    spec = RunSpec(
        name=args.run_name or _default_name(args, model),
        dataset=dataset_key(args.data), agent=args.agent,
        model=model, seed=args.seed, caps=caps, ablation=args.ablation, replicates=args.replicates,
        workers=args.workers, item_ids=item_ids,
        question_type=args.question_type, depth=args.depth, limit=args.limit,
        agent_options=_llm_options(args) if args.agent == "llm" else {},
        max_run_tokens=args.max_run_tokens, max_run_cost=args.max_run_cost,
        shard=getattr(args, "shard", None),
    )
    items = select_items(corpus, spec)
    if args.agent == "llm":
        from sandbox.agents.llm import ConfigError, check_cost_limit, config_from_options
        from sandbox.agents.local_model import LOCAL_PREFIX, LocalModelUnavailable, check_installed

        try:
            check_cost_limit(model, spec.agent_options, spec.max_run_cost)
            if args.dry_run:
                pass
            elif model.startswith(LOCAL_PREFIX):
                check_installed(model[len(LOCAL_PREFIX):])
            else:
                config_from_options({"model": model, **spec.agent_options}).check()
        except (ConfigError, LocalModelUnavailable) as exc:
            raise UsageError(str(exc)) from None
    return corpus, spec, items


def execute(spec, corpus, store, quiet: bool) -> dict[str, Any]:
    """Run one spec with progress on stderr; say so when a run-wide limit stopped it."""
    from sandbox.runner import Runner
    from workbench.progress import Progress

    progress = Progress(spec.name, quiet=quiet)
    try:
        result = asyncio.run(until_signal(Runner(spec, corpus, store, on_event=progress.update).run()))
    finally:
        progress.close()
    if result.get("limit"):  # the same limit would stop a rerun at once
        flag = LIMIT_FLAGS[result["limit"]]
        sys.stderr.write(f"stopped early: {result['stop_reason']}; the run is incomplete ({result['done']} of "
                         f"{result['planned']}): raise {flag} and run the command again to continue\n")
    elif result.get("stop_reason"):
        sys.stderr.write(f"stopped early: {result['stop_reason']}; run the same command again to continue\n")
    return result


def finished_status(*results: dict[str, Any]) -> int:
    """0, or EXIT_INCOMPLETE when a run-wide limit left a run unfinished (a script must not take it for done)."""
    return EXIT_INCOMPLETE if any(r.get("limit") and r["done"] < r["planned"] for r in results) else EXIT_OK


async def until_signal(work: Any) -> Any:
    """Await `work`, ending it on SIGTERM or SIGHUP as asyncio.run ends it on SIGINT: by cancelling it, so the
    runner marks the run interrupted (resumable) instead of dying with it `running` (kill, systemd, a closed
    terminal or a dropped SSH session would otherwise end the process without a word)."""
    import signal

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        task.cancel()

    signums = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    for signum in signums:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        return await work
    except asyncio.CancelledError:
        if received:
            raise Terminated(received[0]) from None
        raise
    finally:
        for signum in signums:
            loop.remove_signal_handler(signum)


def cmd_run(args: argparse.Namespace) -> int:
    from storage import Store
    from workbench import paths
    from workbench.render import print_report

    corpus, spec, items = build_spec(args)
    if args.dry_run:
        from workbench.estimate import print_estimate

        print_estimate(spec, items, paths.store_path(args.db), args.format)
        return EXIT_OK
    store = _held(Store(paths.store_path(args.db)))
    result = execute(spec, corpus, store, args.quiet)
    if args.format == "table":  # the four axes only: the analytics and the reference block are `report`'s
        from workbench.reports import run_report

        print_report(run_report(store, spec.name), args.format, brief=True)
    else:
        print_report(_report(store, spec.name, corpus=corpus), args.format)
    return finished_status(result)


# The run flag whose cap each sequential axis sets per level: giving it too would be silently overridden.
SWEPT_CAP = {"points": "budget", "turns": "max_turns", "tokens": "max_tokens_total"}


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
    from workbench import scaling
    from workbench.render import print_plateau

    if args.scale_command == "plateau":
        if args.scores:
            result = scaling.file_plateau(Path(args.scores), args.study, matched_trials=args.matched_trials,
                                          **_plateau_options(args))
        else:
            if args.matched_trials:
                raise UsageError("--matched-trials is for --scores; a group pairs trials as its recorded protocol says")
            result = scaling.group_plateau(_open_store(args.db), args.group, **_plateau_options(args))
        print_plateau(result, args.format)
        return EXIT_OK
    from storage import Store
    from workbench import paths

    if args.scale_command == "sequential":
        grid = scaling.parse_grid(args.grid, args.axis)
        _sequential_caps(args)
        corpus, base, _ = build_spec(args)
        specs = scaling.sequential_specs(base, args.axis, grid, args.protocol)  # validated before the store opens
        store = _held(Store(paths.store_path(args.db)))
        scaling.check_group(store, base.name, specs)
        results = [execute(spec, corpus, store, args.quiet) for spec in specs]
        print_plateau(scaling.group_plateau(store, base.name, **_plateau_options(args)), args.format)
        return finished_status(*results)
    return _scale_parallel(args)


def _scale_parallel(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from storage import Store
    from workbench import paths, scaling
    from workbench.render import print_parallel

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
    store = _held(Store(paths.store_path(args.db)))
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


def _default_name(args: argparse.Namespace, model: str | None) -> str:
    from workbench.runname import default_name

    return default_name(args.agent, model, args.data, args.ablation, args.seed)


def _llm_options(args: argparse.Namespace) -> dict[str, Any]:
    """The LLM settings a run records (the key's variable name, never the key); reads --env-file first."""
    if not args.model:
        raise UsageError("--agent llm needs --model (a litellm model string such as openai/gpt-4.1)")
    if args.env_file:
        from workbench.envfile import load_env_file

        load_env_file(Path(args.env_file))
    if args.api_key_env and args.base_url and not os.environ.get(args.api_key_env):
        # a local server may need no key, so this is not refused; but a typo in the name would send none
        sys.stderr.write(f"warning: --api-key-env {args.api_key_env}: that variable is not set; the calls to "
                         f"{args.base_url} go without a key\n")
    from workbench.config import pricing_overrides

    options: dict[str, Any] = {
        "base_url": args.base_url, "api_key_env": args.api_key_env, "temperature": args.temperature,
        "top_p": args.top_p, "top_k": args.top_k, "max_tokens": args.max_tokens,
        "reasoning_effort": args.reasoning_effort, "text_tools": args.text_tools, "timeout_s": args.timeout,
        "concurrency": args.concurrency, "rpm": args.rpm, "client": args.client,
    }
    pricing = pricing_overrides()
    if pricing:
        options["pricing"] = pricing
    return {k: v for k, v in options.items() if v is not None}


def cmd_runs(args: argparse.Namespace) -> int:
    from workbench.render import print_runs

    store = _open_store(args.db)
    print_runs(_runs(store), args.format)
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    panel = args.panel or len(args.names) > 1
    if panel and args.ci:
        raise UsageError("--ci gives intervals for one run's report; a panel has none (compare two runs for "
                         "paired intervals)")
    if args.external and not panel:
        raise UsageError("--external needs --panel: it correlates the accuracies of several runs with your scores")
    store = _open_store(args.db)
    for name in args.names:
        store.run(name)  # an unknown run is a user's mistake, told before the statistics are loaded
    _current_label_resolution(args.db, args.names)
    from workbench import reports
    from workbench.render import print_panel, print_report

    if panel:
        external = _external_scores(Path(args.external)) if args.external else None
        print_panel(reports.panel_report(store, args.names, external), args.format)
        return EXIT_OK
    print_report(_report(store, args.names[0], ci=args.ci), args.format)
    return EXIT_OK


def _external_scores(path: Path) -> dict[str, float]:
    """run,score rows (a header line is allowed) for the Spearman correlation."""
    import csv

    try:
        rows = list(csv.reader(path.read_text().splitlines()))
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    out = {}
    for lineno, row in enumerate(rows, 1):
        if len(row) < 2 or not row[0].strip():
            continue
        try:
            out[row[0].strip()] = float(row[1])
        except ValueError:
            if lineno == 1:
                continue
            raise UsageError(f"{path}:{lineno}: field 'score' must be a number, got {row[1]!r}") from None
    return out


def cmd_delete(args: argparse.Namespace) -> int:
    """Delete a run. It cannot be undone, so it asks on a terminal and otherwise needs --yes."""
    store = _writable_store(args.db)
    run = store.run(args.name)
    n = len(store.trajectories(run["id"], final_only=False, light=True))
    what = f"run '{args.name}' ({n} trajector{'y' if n == 1 else 'ies'}, status {run['status']})"
    if not args.yes:
        if not sys.stdin.isatty():
            raise UsageError(f"deleting {what} cannot be undone: add --yes")
        sys.stderr.write(f"delete {what}? [y/N] ")
        sys.stderr.flush()
        if input().strip().lower() not in ("y", "yes"):
            print(f"kept {what}")  # the user's answer, not a failure
            return EXIT_OK
    from storage.locks import RunLock

    with RunLock(store.path, args.name):  # never under a process that is writing it
        store.delete_run(args.name)
    print(f"deleted {what}")
    return EXIT_OK


def cmd_rename(args: argparse.Namespace) -> int:
    if not args.new.strip():
        raise UsageError("the new name is empty")
    store = _writable_store(args.db)
    store.rename_run(args.old, args.new)
    print(f"renamed run '{args.old}' to '{args.new}'")
    return EXIT_OK


def _writable_store(flag: str | None):
    """The store, opened to change it; one that does not exist is a mistake here, never created."""
    from storage import Store, StoreError
    from workbench import paths

    path = paths.store_path(flag)
    if not path.exists():
        raise StoreError(f"no store at {path}")
    return _held(Store(path))


def cmd_serve_mcp(args: argparse.Namespace) -> int:
    """Serve the run to MCP clients until the client leaves (stdio) or a signal (http); resumable like any run."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise UsageError("serve-mcp needs the MCP SDK, an optional extra: pip install 'agenthop-workbench[mcp]' "
                         "(or pip install mcp)")
    from sandbox.datasets import dataset_key, open_dataset
    from sandbox.records import Caps
    from sandbox.runner import RunSpec, select_items
    from storage import Store
    from storage.locks import RunLock
    from workbench import paths

    corpus, imported = open_dataset(args.data, paths.cache_dir())
    if imported is not None:
        _print_import(imported)
    base = RunSpec(name=args.run_name, dataset=dataset_key(args.data), agent="mcp:", workers=1,
                   caps=Caps(budget=args.budget, max_turns=args.max_turns, max_tokens_total=args.max_tokens_total),
                   replicates=args.replicates, item_ids=_item_ids(args.ids), question_type=args.question_type,
                   depth=args.depth, limit=args.limit)
    select_items(corpus, base)  # a slice that selects nothing is refused before anything is served
    sock = _listen(args.host, args.port) if args.transport == "http" else None
    store = Store(paths.store_path(args.db))
    from workbench.mcp_server import Campaign, serve_http, serve_stdio

    with RunLock(store.path, args.run_name):  # a second server on the run is refused here
        if sock is None:
            sys.stderr.write(f"serving run '{args.run_name}' over stdio\n")
            asyncio.run(until_signal(serve_stdio(Campaign(base, corpus, store))))
            return EXIT_OK
        received = asyncio.run(serve_http(Campaign(base, corpus, store), sock))
    if received:
        sys.stderr.write("stopped: finished trajectories are stored; serve the same run again to resume\n")
        return 128 + received
    return EXIT_OK


def _listen(host: str, port: int):
    """A bound, listening socket (before the store is touched: a port in use is a usage error)."""
    import socket

    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be 0 to 65535, got {port}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family = infos[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def cmd_merge(args: argparse.Namespace) -> int:
    """Copy runs from other stores into this one (shards of a run become one run); all or nothing."""
    from storage import Store, StoreError
    from storage.merge import merge_stores
    from workbench import paths
    from workbench.render import print_merge

    names = [n.strip() for n in args.runs.split(",") if n.strip()] if args.runs is not None else None
    if names is not None and not names:
        raise UsageError("--runs is empty: name the runs (comma-separated), or leave --runs out to merge them all")
    missing = [s for s in args.sources if not Path(s).is_file()]
    if missing:
        raise UsageError(f"no store at {', '.join(missing)}")
    sources = [Store(Path(s), readonly=True) for s in args.sources]  # an older store is migrated first
    path = paths.store_path(args.db)
    created = not path.exists()
    dest = Store(path)
    try:
        merged = merge_stores(dest, sources, names, include_partial=args.include_partial, item_order=_item_order)
    except StoreError:
        dest.close()
        if created:  # refused: leave no trace of a store this command made
            _remove_store(path)
        raise
    print_merge([m.as_dict() for m in merged], str(path), args.format)
    return EXIT_OK


def _item_order(run: dict[str, Any]) -> dict[str, int] | None:
    """Each item's position in the run's dataset, so merged trajectories are stored in a single host's order
    (None when the dataset cannot be opened here: item ids order them then)."""
    corpus, _ = _run_corpus(run)
    if corpus is None or corpus.fingerprint != run["dataset_fingerprint"]:
        return None
    return {item.id: i for i, item in enumerate(corpus.items)}


def _remove_store(path: Path) -> None:
    import shutil

    for extra in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + extra).unlink(missing_ok=True)
    shutil.rmtree(path.with_name(path.name + ".locks"), ignore_errors=True)


def cmd_compare(args: argparse.Namespace) -> int:
    from workbench.reports import compare_report
    from workbench.render import print_compare

    store = _open_store(args.db)
    store.run(args.a), store.run(args.b)
    _current_label_resolution(args.db, [args.a, args.b])
    print_compare(compare_report(store, args.a, args.b), args.format)
    return EXIT_OK


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from workbench.reports import MIN_COVERAGE, leaderboard
    from workbench.render import print_leaderboard

    share = MIN_COVERAGE if args.min_coverage is None else args.min_coverage
    if not 0.0 <= share <= 1.0:
        raise UsageError(f"--min-coverage is a share between 0 and 1, got {share:g}")
    store = _open_store(args.db)
    _current_label_resolution(args.db, [r["name"] for r in store.runs() if r["kind"] == "eval"])
    print_leaderboard(leaderboard(store, min_coverage=share), args.format)
    return EXIT_OK


def cmd_export(args: argparse.Namespace) -> int:
    store = _open_store(args.db)
    if args.format == "jsonl":
        from storage.export import export_jsonl

        with _writing(args.out):
            n = export_jsonl(store, args.name, Path(args.out) if args.out else sys.stdout, all_attempts=args.all_attempts)
        if args.out:
            sys.stderr.write(f"wrote {n} trajectories to {args.out}\n")
        return EXIT_OK
    from sandbox.datasets import open_dataset
    from workbench import paths
    from workbench.summary import agenthop_summary

    run = store.run(args.name)
    corpus, _ = open_dataset(run["dataset"], paths.cache_dir())
    summary = agenthop_summary(store, args.name, corpus)
    for warning in summary.get("workbench_warnings", []):
        sys.stderr.write(f"warning: {warning}\n")
    text = json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    if args.out:
        from storage.export import atomic_text_file

        with _writing(args.out), atomic_text_file(Path(args.out)) as fh:
            fh.write(text)
        sys.stderr.write(f"wrote {args.out}\n")
    else:
        sys.stdout.write(text)
    return EXIT_OK


@contextmanager
def _writing(out: str | None) -> Iterator[None]:
    """Turn a failure to write the user's --out (missing folder, a directory, no permission) into the one-line
    usage error; anything else is left to be a bug."""
    try:
        yield
    except OSError as exc:
        if out is None or isinstance(exc, BrokenPipeError):
            raise
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None


def cmd_import_reference(args: argparse.Namespace) -> int:
    from sandbox.datasets import open_dataset
    from storage import Store
    from workbench import paths
    from workbench.progress import Progress
    from workbench.reference_import import import_reference, load_logs
    from sandbox.datasets import dataset_key

    corpus, imported = open_dataset(args.data, paths.cache_dir())
    if imported is not None:
        _print_import(imported, args.data)
    load_logs(Path(args.dir), corpus, args.model, force=args.force)  # refused before the store exists
    store = _held(Store(paths.store_path(args.db)))
    progress = Progress(args.run_name, quiet=args.quiet)
    try:
        summary = import_reference(Path(args.dir), corpus, store, args.run_name, model=args.model,
                                   dataset=dataset_key(args.data), on_event=progress.update, force=args.force)
    finally:
        progress.close()
    result = summary.as_dict()
    if args.format == "json":
        sys.stdout.write(json.dumps(result, indent=2, default=str) + "\n")
    else:
        sys.stdout.write(_import_text(result))
    return EXIT_OK


def _import_text(result: dict[str, Any]) -> str:
    """The import summary for a person: `key: value` lines, mappings as `k v · k v`, lists of set-aside files one
    per line (JSON has the same keys as data)."""
    lines = []
    for key, value in result.items():
        if key == "examples":
            continue
        if isinstance(value, list):
            lines.append(f"{key}: {len(value)}")
            lines += ["  " + _readable(entry) for entry in value]
        else:
            lines.append(f"{key}: {_readable(value)}")
    lines += ["  mismatch: " + _readable(example) for example in result.get("examples") or []]
    return "".join(line + "\n" for line in lines)


def _readable(value: Any) -> str:
    """A value as plain words, not a Python repr: {'budget': 30} → 'budget 30', [a, b] → 'a, b', None → '—'."""
    if isinstance(value, dict):
        return " · ".join(f"{k} {_readable(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_readable(v) for v in value) + "]"
    return "—" if value is None else str(value)


def cmd_audit(args: argparse.Namespace) -> int:
    from sandbox.datasets import open_dataset
    from storage import Store
    from workbench import audit, paths

    if args.audit_command == "label" and args.action != "remove" and args.relevance is None:
        raise UsageError(f"--action {args.action} needs --relevance direct or supporting")
    corpus, _ = open_dataset(args.data, paths.cache_dir())
    path = paths.store_path(args.db)
    if args.audit_command == "show":  # the labels as edited so far, when a store exists (none is created)
        store = Store(path, readonly=True) if path.exists() else None
        try:
            print(json.dumps(audit.evidence(corpus, args.item, store), indent=2, ensure_ascii=False))
        finally:
            if store is not None:
                store.close()
        return EXIT_OK
    if args.audit_command == "export":
        store = _open_store(args.db)
        with _writing(args.out):
            counts = audit.write_corrected(corpus, store, Path(args.out))
        print(json.dumps({"out": args.out, **counts}))
        return EXIT_OK
    audit.evidence(corpus, args.item)  # an unknown item fails before the store is touched
    if args.audit_command == "label":  # checked against the item as it stands, then stored
        done = audit.record_edit(corpus, path, args.item, args.reviewer, args.action, args.arxiv_id, args.section,
                                 args.relevance)
    elif args.audit_command == "undo":
        done = audit.undo_edit(corpus, path, args.item, args.reviewer, args.edit)
    else:
        checks = {k.replace("-", "_"): None if getattr(args, k.replace("-", "_")) is None else
                  getattr(args, k.replace("-", "_")) == "yes" for k in ("question-ok", "gold-supported", "labels-accurate")}
        store = Store(path)
        try:
            store.add_verdict(corpus.fingerprint, args.item, args.reviewer, args.verdict, args.note, checks)
        finally:
            store.close()
        done = f"verdict {args.verdict}"
    print(json.dumps({"item": args.item, "recorded": args.audit_command, "done": done}, ensure_ascii=False))
    return EXIT_OK


def cmd_items(args: argparse.Namespace) -> int:
    from sandbox.datasets import dataset_key, open_dataset
    from workbench import items, paths
    from workbench.render import print_item, print_items

    flt = items.ItemFilter(kind=args.kind, depth=args.depth, reasoning=args.reasoning, tier=args.tier,
                           right=args.right, text=args.text)
    if args.show and (flt.active() or args.sort != "file" or args.reverse):
        raise UsageError("--show ITEM_ID takes no filters or sort")
    store = _items_store(args.db)
    corpus, imported = open_dataset(args.data, paths.cache_dir())
    if imported is not None:
        _print_import(imported, args.data)
    if args.show:
        detail, lines = items.item_detail(corpus, args.show, store)
        print_item(detail, lines, args.format)
        return EXIT_OK
    spec = dataset_key(args.data)
    view = items.browse(corpus, spec, store)
    flt = items.check_filter(flt, view.rows)
    rows = items.sort_rows(items.filter_rows(view.rows, flt), args.sort, args.reverse)
    print_items(view, rows, flt, args.format)
    return EXIT_OK


def _items_store(flag: str | None):
    """The store read-only; None when the default store does not exist yet (nothing ran). A --db that does not
    exist is a mistake (exit 2), and nothing is ever created."""
    from storage import Store
    from workbench import paths

    path = paths.store_path(flag)
    if not path.exists():
        if flag:
            raise UsageError(f"no store at {path}")
        sys.stderr.write(f"no store at {path} yet: no runs counted\n")
        return None
    return _held(Store(path, readonly=True))


def cmd_synth(args: argparse.Namespace) -> int:
    from sandbox import synth

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out} exists and is not a directory")
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} exists and is not empty")
    try:  # built in memory, written to a hidden sibling and renamed: a failure leaves nothing under `out`
        synth.generate(out, seed=args.seed, preset=args.preset, items=args.items, papers=args.papers)
    except synth.NotEnoughPapers as exc:
        raise UsageError(f"{exc.papers} papers are too few for {exc.wanted} items (only {exc.built} could be "
                         f"built): try --papers {exc.suggested_papers}") from None
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror}") from None
    print(json.dumps({"out": str(out), "preset": args.preset, "seed": args.seed}))
    return EXIT_OK


def _open_store(flag: str | None):
    from storage import Store
    from workbench import paths

    return _held(Store(paths.store_path(flag), readonly=True))


def _report(store, name: str, ci: bool = False, corpus=None) -> dict[str, Any]:
    """The full diagnostics; beside them the reference evaluator's own numbers when the run's dataset opens."""
    from workbench.reports import diagnostics

    reason = None
    if corpus is None:
        corpus, reason = _run_corpus(store.run(name))
    report = diagnostics(store, name, ci=ci, corpus=corpus)
    if reason is not None:
        report["reference"] = {"unavailable": reason}
    return report


def _current_label_resolution(flag: str | None, names: list[str]) -> None:
    """Bring the named runs' section recall under the current label rules (`workbench.relabel`); notes on stderr."""
    from workbench import paths
    from workbench.relabel import bring_current

    for note in bring_current(paths.store_path(flag), names, _run_corpus):
        sys.stderr.write(f"note: {note}\n")


def _run_corpus(run: dict[str, Any]):
    """(the run's dataset, None), or (None, why it cannot be opened): the reference block needs it, the rest not."""
    from workbench import paths
    from workbench.relabel import run_corpus

    return run_corpus(run, paths.cache_dir())


def _runs(store) -> list[dict[str, Any]]:
    from workbench.runlist import runs_table

    return runs_table(store)


IMPORT_WARNINGS = {  # what each counted import problem means to the user ({n}: how many)
    "gold_beyond_depth": "{n} item(s) whose gold paper no citation path from the seed reaches within the item's "
                         "depth (only search_papers finds it)",
    "no_labels_file": "no audit/recall_labels.jsonl: section recall cannot be measured",
    "empty_arxiv_id": "{n} recall label(s) without an arxiv_id (ignored, as the reference evaluator does)",
    "unknown_arxiv_id": "{n} recall label(s) whose arxiv_id is not in the paper pool",
    "unknown_sample": "{n} recall label row(s) for an item the dataset does not have",
    "unresolved_section": "{n} recall label(s) whose section matches no section of the paper",
    "duplicate_sample": "{n} repeated recall label row(s) for one item (the last row counts)",
    "gold_arxiv_ids_differ": "{n} item(s) whose gold_arxiv_ids differ from their graph nodes' arxivId (the "
                             "graph's are used: they are what the tools read)",
    "bridge_arxiv_ids_differ": "{n} item(s) whose bridge_arxiv_ids differ from their graph nodes' arxivId (the "
                               "graph's are used)",
    "seed_arxiv_id_differs": "{n} item(s) whose seed_arxiv_id differs from the seed node's arxivId",
    "lone_surrogates": "{n} string(s) with a lone surrogate escape (half an emoji), stored with U+FFFD in its place",
}


def _print_import(report: Any, dataset: str | None = None) -> None:
    """What an import found, on stderr. The built-in benchmark copies some of the real release's defects on
    purpose (`synth.DELIBERATE_DEFECTS`): those are one note saying so, not warnings about the user's data."""
    sys.stderr.write(
        f"imported dataset: {report.items} items, {report.papers} papers with text, {report.nodes} graph nodes "
        f"({report.metadata_only} metadata-only); {report.labels_resolved}/{report.labels} recall labels resolved\n"
    )
    deliberate: dict[str, str] = {}
    if dataset == "builtin":
        from sandbox.synth import DELIBERATE_DEFECTS

        deliberate = DELIBERATE_DEFECTS
    found = {**report.label_warnings, **report.data_warnings}
    copied = [IMPORT_WARNINGS[k].format(n=n) for k, n in sorted(found.items()) if k in deliberate]
    if copied:
        sys.stderr.write(f"note: the built-in benchmark copies the real release's defects on purpose: "
                         f"{'; '.join(copied)}\n")
    for kind, n in sorted(found.items()):
        if kind in deliberate:
            continue
        text = IMPORT_WARNINGS.get(kind, f"{{n}} import problem(s): {kind.replace('_', ' ')}")
        sys.stderr.write(f"warning: {text.format(n=n)}\n")


COMMANDS = {"run": cmd_run, "runs": cmd_runs, "report": cmd_report, "delete": cmd_delete, "rename": cmd_rename,
            "compare": cmd_compare, "scale": cmd_scale, "export": cmd_export, "audit": cmd_audit, "items": cmd_items,
            "leaderboard": cmd_leaderboard, "import-reference": cmd_import_reference, "synth": cmd_synth,
            "merge": cmd_merge, "serve-mcp": cmd_serve_mcp}


# The user-mistake exceptions of every command, by module: looked up only when something was raised, so a
# command imports just what it uses (`runs` must not pay for scipy because `scale` has an error class).
USER_ERRORS = (
    ("sandbox.release", "DatasetError"), ("sandbox.runner", "InvalidSlice"), ("storage.store", "StoreError"),
    ("workbench.config", "ConfigFileError"), ("workbench.audit", "AuditError"),
    ("workbench.reference_import", "ReferenceImportError"), ("workbench.scaling", "ScalingInputError"),
    ("workbench.summary", "SummaryError"), ("workbench.items", "ItemFilterError"),
)


def is_user_error(exc: BaseException) -> bool:
    """Whether `exc` is a user's mistake. A class whose module was never imported cannot have been raised, so
    only the modules already loaded are consulted."""
    if isinstance(exc, UsageError):
        return True
    for module, name in USER_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(exc, cls):
            return True
    return False


_RESOURCES: ContextVar[ExitStack | None] = ContextVar("agenthop_command_resources", default=None)


def _held(resource: Any) -> Any:
    """`resource` (a store), closed when the command ends however it ends: `batch` owns the stack. In-process
    callers (the TUI's jobs, the tests) would otherwise leave a store open with commits still in its WAL."""
    stack = _RESOURCES.get()
    if stack is not None:
        stack.callback(resource.close)
    return resource


COMMON_OPTIONS = {"--db": True, "--format": True, "--quiet": False}  # flag → takes a value


def hoist_common_options(argv: list[str]) -> list[str]:
    """Move the options every command shares (`--db`, `--format`, `--quiet`) from before the command to after it,
    so `agenthop-tui --db X --batch runs` means `runs --db X`. Each command still checks them as its own (a
    `--format` it does not offer is refused by its parser), so there is one definition of each flag per command."""
    leading: list[str] = []
    i = 0
    while i < len(argv):
        flag = argv[i].split("=", 1)[0]
        if flag not in COMMON_OPTIONS:
            break
        takes_value = COMMON_OPTIONS[flag] and "=" not in argv[i]
        leading += argv[i:i + 1 + takes_value]
        i += 1 + takes_value
    return argv[i:] + leading


def batch(argv: list[str]) -> int:
    """Run one headless command; map user mistakes to exit 2 and our bugs to exit 1 with a traceback."""
    parser = build_parser()
    args = parser.parse_args(hoist_common_options(argv))
    with ExitStack() as resources:
        token = _RESOURCES.set(resources)
        try:
            return _dispatch(args)
        finally:
            _RESOURCES.reset(token)


def _dispatch(args: argparse.Namespace) -> int:
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: finished trajectories are stored; run the same command again to resume\n")
        return EXIT_INTERRUPTED
    except Terminated as exc:
        import signal

        try:  # after SIGHUP the terminal may be gone
            sys.stderr.write(f"stopped by {signal.Signals(exc.signum).name}: finished trajectories are stored; "
                             "run the same command again to resume\n")
            sys.stderr.flush()
        except OSError:
            pass
        return 128 + exc.signum
    except Exception as exc:
        if isinstance(exc, BrokenPipeError):
            raise  # the reader of stdout went away: `main` ends quietly
        if is_user_error(exc):
            sys.stderr.write(f"error: {exc}\n")
            return EXIT_USAGE
        sys.stderr.write(f"internal error in '{args.command}' (please report it):\n{traceback.format_exc()}")
        return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if "--batch" in argv:
            argv.remove("--batch")
            status = batch(argv)
        else:
            from workbench.app import run_app

            status = run_app(argv)
        sys.stdout.flush()  # a broken pipe shows here, not in the flush at exit (which would print a traceback)
        return status
    except BrokenPipeError:
        return broken_pipe()
    except SystemExit as exc:
        if isinstance(exc.__context__, BrokenPipeError):  # rich's answer to a broken pipe is SystemExit(1)
            return broken_pipe()
        raise


def broken_pipe() -> int:
    """`… | head -1`: the reader has what it wanted, which is no failure; exit 0 without a word. As Python's
    docs advise, stdout is pointed at /dev/null so the interpreter's final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
