"""The `--batch` command line: one parser per command, the bounded number types every numeric flag uses,
and the options every command shares (before or after the command)."""

from __future__ import annotations

import argparse
import re

from workbench.cli.argparser import Parser  # stdlib only: the parser stays light
from workbench.cli.option_help import describe_options

FORMATS = ("table", "json", "csv", "markdown")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="agenthop-tui --batch", description="AgentHop Workbench, headless.")
    parser.add_version()
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run an agent on a dataset and store every step")
    add_run_arguments(run)
    run.add_argument(
        "--shard",
        type=_shard,
        metavar="I/N",
        help="run only shard I of N of the selected items × replicates, counted from 1 (1/4 … 4/4; a stable "
        "hash: the same on every host); `merge` then joins the shards' stores into one run",
    )

    serve = sub.add_parser(
        "serve-mcp",
        help="serve a run to an MCP client (any MCP-capable agent), under the same ledger; needs the [mcp] extra",
    )
    add_serve_arguments(serve)

    merge = sub.add_parser("merge", help="copy runs from other stores into this one; shards of a run become one run")
    merge.add_argument("sources", nargs="+", metavar="SRC.db")
    merge.add_argument("--db", help="the store merged into (default: $AGENTHOP_DB or the user data dir)")
    merge.add_argument("--runs", help="comma-separated run names (default: every run of the sources)")
    merge.add_argument(
        "--include-partial", action="store_true", help="also copy unfinished trajectories (default: finished ones only)"
    )
    merge.add_argument("--format", choices=("table", "json"), default="table")

    campaign = sub.add_parser("campaign", help="a panel and its studies as one TOML file: write it, run it, follow it")
    actions = campaign.add_subparsers(dest="campaign_command", required=True, metavar="ACTION")
    c_init = actions.add_parser("init", help="write a commented example campaign file to start from")
    c_init.add_argument("file", nargs="?", metavar="FILE.toml", help="the file to write (default: stdout)")
    c_init.add_argument("--force", action="store_true", help="write over an existing file")
    c_run = actions.add_parser("run", help="run what is not finished (endpoints at once), then the panel and tables")
    c_status = actions.add_parser("status", help="each run of the file: episodes done and left; runs nothing")
    c_report = actions.add_parser("report", help="the panel over the file's finished runs and its studies' tables")
    for p, formats in (
        (c_run, ("table", "markdown")),
        (c_status, ("table", "json")),
        (c_report, ("table", "markdown")),
    ):
        p.add_argument("file", metavar="FILE.toml", help="the campaign file (`campaign init` writes an example)")
        p.add_argument("--db")
        p.add_argument("--format", choices=formats, default="table")
    for p in (c_run, c_status):
        p.add_argument(
            "--shard", type=_shard, metavar="I/N", help="only shard I of N of every run (`merge` joins them)"
        )
    for p in (c_run, c_report):
        p.add_argument("--quiet", action="store_true")

    runs = sub.add_parser("runs", help="list the runs in the store; `runs tag NAME` sets a run's family and tier")
    runs.add_argument("--db")
    runs.add_argument("--format", choices=("table", "json"), default="table")
    runs_sub = runs.add_subparsers(dest="runs_command", metavar="{tag}")
    tag = runs_sub.add_parser("tag", help="set a run's model family and/or capability tier (the panel groups by them)")
    tag.add_argument("name", metavar="NAME")
    tag.add_argument("--family", help="a family name (e.g. GPT, Claude, Qwen); 'auto' derives it from the model again")
    tag.add_argument("--tier", help="closed-frontier, open-frontier or compute-efficient; 'auto' derives it again")
    tag.add_argument("--db", default=argparse.SUPPRESS)  # also before `tag`: `runs --db X tag NAME`

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
    board.add_argument(
        "--min-coverage",
        type=float,
        default=None,
        metavar="SHARE",
        help="rank only rows covering at least this share of the items people played (default 0.5)",
    )

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

    from workbench.service.items import KINDS, OUTCOMES, SORTS  # stdlib only: the parser stays light

    items = sub.add_parser("items", help="a dataset's items with how many runs got each right; --show one item")
    items.add_argument("--data", default="builtin", help=DATA_HELP)
    items.add_argument("--db", help="results store whose runs are counted (default: $AGENTHOP_DB or the user data dir)")
    items.add_argument("--type", dest="kind", choices=KINDS, help="single- or multi-target items")
    items.add_argument("--depth", type=int, choices=(1, 2))
    items.add_argument("--reasoning", help="a reasoning type of the dataset (e.g. METHOD)")
    items.add_argument("--tier", help="a consensus tier of the dataset (e.g. gold)")
    items.add_argument("--right", choices=tuple(OUTCOMES), help=" / ".join(f"{k}: {v}" for k, v in OUTCOMES.items()))
    items.add_argument("--text", default="", help="words that must all appear in the id or the question")
    items.add_argument("--sort", default="file", choices=SORTS, help="file order, or a column (right: share right)")
    items.add_argument("--reverse", action="store_true")
    items.add_argument(
        "--show", metavar="ITEM_ID", help="one item: question, options, neighbourhood tree, trajectories"
    )
    items.add_argument("--format", choices=("table", "json"), default="table")

    export = sub.add_parser(
        "export", help="a run as the reference's summary.json, as JSON Lines, or as an Inspect AI log"
    )
    export.add_argument("name")
    export.add_argument("--format", choices=("agenthop-summary", "jsonl", "inspect"), required=True)
    export.add_argument("--out", help="file to write (default: stdout; inspect: required, FILE.eval or FILE.json)")
    export.add_argument("--all-attempts", action="store_true", help="jsonl: every attempt, not only the final ones")
    export.add_argument("--db")

    imp = sub.add_parser(
        "import-reference", help="bring reference-harness trajectories in, by replay through our sandbox"
    )
    imp.add_argument("dir", help="experiments/{model} (or experiments/ with --model)")
    imp.add_argument("--data", required=True, help="the release directory the trajectories were run on")
    imp.add_argument("--run", dest="run_name", required=True, type=_run_name)
    imp.add_argument("--model", help="the model subdirectory to import, when DIR holds several")
    imp.add_argument("--family", help="the run's model family (default: derived from the logged model)")
    imp.add_argument("--tier", help="closed-frontier, open-frontier or compute-efficient (default: derived)")
    imp.add_argument("--db")
    imp.add_argument("--format", choices=("table", "json"), default="table")
    imp.add_argument("--quiet", action="store_true")
    imp.add_argument(
        "--force",
        action="store_true",
        help="import even when the logs do not match --data (unknown ids, another correct_index)",
    )

    inspect_logs = sub.add_parser(
        "import-inspect", help="bring Inspect AI logs of the agenthop task in, by replay through our sandbox"
    )
    inspect_logs.add_argument("logs", nargs="+", metavar="LOG", help="Inspect logs (.eval or .json) of one setting")
    inspect_logs.add_argument("--run", dest="run_name", required=True, type=_run_name)
    inspect_logs.add_argument("--data", help="the dataset the logs were run on (default: the one the logs name)")
    inspect_logs.add_argument(
        "--prompts",
        metavar="FILE.toml",
        help="the prompts file the task was given (-T prompts), which the replay sends",
    )
    inspect_logs.add_argument("--family", help="the run's model family (default: derived from the logged model)")
    inspect_logs.add_argument("--tier", help="closed-frontier, open-frontier or compute-efficient (default: derived)")
    inspect_logs.add_argument("--db")
    inspect_logs.add_argument("--format", choices=("table", "json"), default="table")
    inspect_logs.add_argument("--quiet", action="store_true")

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
    label.add_argument(
        "--section",
        required=True,
        help="a header (or text that resolves to one), or with add an "
        "alias such as C as `audit show` and the errors list them",
    )
    label.add_argument("--relevance", choices=("direct", "supporting"), help="required with add and reclassify")
    export_audit = audit_sub.add_parser("export", help="write the corrected dataset in the release format")
    export_audit.add_argument("--out", required=True)
    for p in (show, verdict, label, undo, export_audit):
        p.add_argument("--data", default="builtin", help=DATA_HELP)
        p.add_argument("--db")
    for p in (verdict, label, undo):
        p.add_argument("--reviewer", required=True, type=_nonblank("reviewer"))

    scale = sub.add_parser("scale", help="test-time scaling: sequential budgets, the plateau, parallel sampling")
    scale_sub = scale.add_subparsers(dest="scale_command", required=True, metavar="MODE")
    seq = scale_sub.add_parser("sequential", help="the same items at each budget of a grid, then the plateau")
    seq.add_argument("--axis", choices=("tokens", "points", "turns"), required=True)
    seq.add_argument("--grid", required=True, help="budgets, e.g. 8k,16k,32k (tokens) or 10,20,30 (points)")
    seq.add_argument(
        "--protocol",
        choices=("fresh", "continuation"),
        default="fresh",
        help="fresh start per budget, or continue from the level below (token axis)",
    )
    seq.add_argument(
        "--strategy",
        type=_strategies,
        help="continue|summarize|verifier, or several comma-separated (one group NAME.strategy each, "
        "then compared); default: the original rule (continue on the token axis, the cap only on "
        "points and turns)",
    )
    seq.add_argument(
        "--verifier",
        help="with --strategy verifier: 'evidence' (scripted, offline; the default) or a "
        "model string, asked through the native client or litellm",
    )
    seq.add_argument("--verifier-base-url", help="an OpenAI-compatible server for the verifier model")
    seq.add_argument("--verifier-timeout", type=_real("timeout"), help="seconds per verifier call (default 120)")
    add_plateau_arguments(seq)
    _add_cost_mode(seq)
    add_run_arguments(seq, formats=("table", "json", "csv"))
    # unset unless given, so a flag for the swept axis's own cap is seen and refused (cmd_scale fills the rest)
    seq.set_defaults(**{flag: None for flag in SWEPT_CAP.values()})
    tools = scale_sub.add_parser(
        "tools",
        help="the general-agent setting's registry-size ablation: the same items "
        "among 0, 8, 16, 40 … out-of-domain tools at each detail, one group",
    )
    tools.add_argument("--counts", default="0,8,16,40", help="numbers of extra tools (0: the plain run)")
    tools.add_argument(
        "--detail",
        dest="details",
        default="full,short,names",
        help="description levels: full, short (one line), names (names and parameters only)",
    )
    add_run_arguments(tools, formats=("table", "json"))
    tools.set_defaults(extra_tools="builtin")
    plat = scale_sub.add_parser(
        "plateau", help="the scaling plateau of per-item scores (a file, or a sequential group)"
    )
    source = plat.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--scores",
        help='JSON {"<budget>": {"<item>": score or [trial scores]}} or CSV '
        "item,budget,score[,trial] (an empty score or null is missing; "
        "booleans are refused: write 1/0)",
    )
    source.add_argument("--group", help="a sequential run group in the store (the --run given to scale sequential)")
    plat.add_argument("--study", help="with --scores: the study, when the JSON holds several")
    plat.add_argument(
        "--matched-trials",
        action="store_true",
        help="with --scores and several trials per item: trial t is one chain across budgets "
        "(continuation), so differences pair within the trial index",
    )
    plat.add_argument("--db")
    plat.add_argument("--format", choices=("table", "json", "csv"), default="table")
    add_plateau_arguments(plat)
    _add_cost_mode(plat)
    strat = scale_sub.add_parser(
        "strategies", help="sequential groups (one per strategy) overlaid: k* and cost per level"
    )
    strat.add_argument(
        "--group", action="append", required=True, dest="groups", help="a sequential group; repeat it, one per strategy"
    )
    strat.add_argument("--db")
    strat.add_argument("--format", choices=("table", "json", "csv"), default="table")
    add_plateau_arguments(strat)
    _add_cost_mode(strat)
    para = scale_sub.add_parser("parallel", help="K samples per item, committed by vote and by judges; the gap")
    para.add_argument(
        "--k", help="sample counts, e.g. 1,2,4,8,16 (K = the largest; default 1,2,4,8, with --scores 1..K)"
    )
    para.add_argument(
        "--scores",
        help='a study measured elsewhere, instead of sampling here: JSON {"data": {study: {"tasks": {task: '
        '{"s": [score per sample], judge: [true/false/null per sample], "bump_best": [outcome per k]}}}}} '
        "or CSV study,task,sample,score[,judge,verdict] (null scores count 0; booleans are refused as scores)",
    )
    para.add_argument(
        "--study",
        dest="studies",
        nargs="+",
        action="extend",
        metavar="NAME",
        help="with --scores: the studies to read (default: every study in the file)",
    )
    tasks = "with --scores: only these tasks (a file of task names, one a line; or tau2-47: the Tool-use table's 47)"
    para.add_argument("--tasks", metavar="FILE|NAME", help=tasks)
    para.add_argument(
        "--judge",
        default="evidence",
        help="'evidence' (offline), 'none', 'same' (the run's model) or a litellm model string",
    )
    para.add_argument("--judge-base-url")
    para.add_argument(
        "--orders",
        type=_positive,
        default=8,
        help="random orders for pairwise selection; 1: one fixed order, the samples' own (the study's)",
    )
    para.add_argument(
        "--tie-rule",
        choices=("split", "first"),
        default="split",
        help="majority-vote ties: split evenly (ours) or the earliest sample's among the tied (the study's)",
    )
    para.add_argument(
        "--judge-trials",
        type=_positive,
        default=1,
        help="ask the judge N times (the trial is part of the verdict's key): agreement and the gap's "
        "spread over trials (the study's Table 6)",
    )
    _add_cost_mode(para)
    add_run_arguments(para, formats=("table", "json", "csv"))

    prompts = sub.add_parser("prompts", help="the texts sent to agents and judges: export ours, show a run's")
    prompts_sub = prompts.add_subparsers(dest="prompts_command", required=True, metavar="ACTION")
    p_export = prompts_sub.add_parser("export", help="today's defaults as a commented prompts file (for --prompts)")
    p_export.add_argument("--out", help="file to write (default: stdout)")
    p_show = prompts_sub.add_parser("show", help="the prompts file a stored run used, exactly")
    p_show.add_argument("name", metavar="RUN")
    p_show.add_argument("--db")

    synth = sub.add_parser("synth", help="write a generated benchmark in the release format")
    synth.add_argument("--out", required=True)
    synth.add_argument("--preset", choices=("demo", "paper"), default="demo")
    synth.add_argument("--seed", type=_bounded("seed"), default=0)
    synth.add_argument("--items", type=_bounded("synth_items"))
    synth.add_argument("--papers", type=_bounded("synth_papers"))
    describe_options(parser)
    return parser


def _add_cost_mode(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cost-mode",
        choices=("cache-aware", "study"),
        default="cache-aware",
        help="cache-aware (ours: each call as priced) or study (App. C.1: all input at the input price)",
    )


def add_plateau_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--population", type=_positive, help="size N of the task population (finite population correction)")
    p.add_argument("--alpha", type=_real("alpha"), default=0.05, help="family-wise level (above 0, at most 0.5)")
    p.add_argument("--correction", choices=("bonferroni", "holm"), default="bonferroni")
    p.add_argument(
        "--boot",
        type=_at_least(2, "the bootstrap SD needs two replicates"),
        default=10_000,
        help="bootstrap replicates B (at least 2)",
    )
    p.add_argument("--boot-seed", type=_bounded("seed"), default=0)
    p.add_argument(
        "--two-stage",
        choices=("auto", "on", "off"),
        default="auto",
        help="with T > 1 trials per item: also resample trials inside items (auto: when --population "
        "is given, so the FPC does not erase run-to-run variance)",
    )


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of `serve-mcp`: the run's name, data, slice and caps, and the transport."""
    from sandbox.records import Caps

    p.add_argument("--data", default="builtin", help=DATA_HELP)
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
    add_prompts_argument(p)
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    p.add_argument("--host", default="127.0.0.1", help="http: the address to listen on")
    p.add_argument("--port", type=int, default=8765, help="http: the port (0: any free one, printed on stderr)")
    p.add_argument(
        "--token-env",
        metavar="VAR",
        help="http: every request must carry the bearer token read from the environment variable VAR (its name is "
        "recorded, never the token); required on a host other than loopback (127.0.0.0/8, ::1, localhost)",
    )


def add_prompts_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--prompts",
        metavar="FILE.toml",
        help="replace the texts sent to the agent and the judges (`prompts export` writes ours to start "
        "from); part of the run's identity",
    )


def add_run_arguments(p: argparse.ArgumentParser, formats: tuple[str, ...] = ("table", "json")) -> None:
    """The flags of `run`, shared by `scale sequential` and `scale parallel` (their names are a contract)."""
    from sandbox.records import DEFAULT_WORKERS, Caps  # the protocol's caps are the flags' defaults

    p.add_argument("--data", default="builtin", help=DATA_HELP)
    p.add_argument("--agent", type=_agent, metavar="{" + ",".join(BATCH_AGENTS) + "}")  # default: `imply_agent`
    p.add_argument("--run", dest="run_name", type=_run_name, help="run name (re-use it to resume)")
    p.add_argument("--db", help="results store (default: $AGENTHOP_DB or the user data dir)")
    p.add_argument("--workers", type=_bounded("workers"), default=DEFAULT_WORKERS)
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
    p.add_argument(
        "--family",
        help="the model family the panel groups the run under (default: derived from --model, "
        "e.g. GPT, Claude, Gemini, DeepSeek, Qwen; scripted agents have none)",
    )
    p.add_argument(
        "--tier",
        help="the capability tier: closed-frontier, open-frontier or compute-efficient (default: derived from --model)",
    )
    p.add_argument("--format", choices=formats, default="table", help="format of the final report")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    general = p.add_argument_group("the general-agent setting (AgentHop among out-of-domain tools)")
    general.add_argument(
        "--extra-tools",
        metavar="builtin|FILE.json|mcp:COMMAND",
        help="offer out-of-domain tools too: the built-in registry, a JSON file of OpenAI-format "
        "schemas each with a canned 'result', or the tools of an MCP server (started by COMMAND)",
    )
    general.add_argument(
        "--extra-tools-count",
        type=_bounded("extra_tools_count"),
        metavar="N",
        help="how many of the registry's tools (a seeded draw, nested across counts; default all)",
    )
    general.add_argument(
        "--extra-tools-detail",
        choices=("full", "short", "names"),
        default="full",
        help="their descriptions: full, one-line summaries, or names and parameters only",
    )
    general.add_argument(
        "--extra-tools-cost",
        type=_bounded("extra_tools_cost"),
        default=1,
        metavar="C",
        help="points an out-of-domain call costs (default 1)",
    )
    general.add_argument(
        "--extra-tools-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="an mcp: registry's per-call timeout (default 30; execution, not identity)",
    )
    general.add_argument(
        "--distractible",
        type=_real("distractible"),
        metavar="P",
        help="heuristic agent: each call is an out-of-domain one with probability P (0 to 1)",
    )
    add_prompts_argument(p)
    llm = p.add_argument_group("LLM agent (--agent llm)")
    llm.add_argument("--model", help="any litellm model string, e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5")
    llm.add_argument("--base-url", help="an OpenAI-compatible server (vLLM, sglang, llama.cpp)")
    llm.add_argument("--api-key-env", help="the environment variable holding the key (default: the provider's)")
    llm.add_argument("--env-file", help="a .env file to read keys from (never written anywhere)")
    llm.add_argument("--temperature", type=_real("temperature"), help="0 to 2")
    llm.add_argument("--top-p", type=_real("top_p"), help="above 0, at most 1")
    llm.add_argument("--top-k", type=_bounded("top_k"))
    llm.add_argument(
        "--max-tokens", type=_bounded("max_tokens"), help="per-call generation cap (default 16384 or the preset)"
    )
    llm.add_argument(
        "--reasoning-effort",
        type=_effort,
        help="none|minimal|low|medium|high; for Anthropic models also a number of thinking tokens (below --max-tokens)",
    )
    llm.add_argument(
        "--text-tools",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="tools described in the prompt, calls parsed from text (default: the model's own: on for "
        "local/ models, off for the rest; --no-text-tools turns it off)",
    )
    llm.add_argument(
        "--local-threads",
        type=_bounded("local_threads"),
        help="threads of a local/ model's server (default: one less than the cores)",
    )
    llm.add_argument("--timeout", type=_real("timeout"), help="seconds per model call (default 600)")
    llm.add_argument(
        "--client",
        choices=("auto", "native", "litellm"),
        help="who sends the calls: native (a pooled HTTP client, for OpenAI-compatible servers: openai/…, "
        "hosted_vllm/…, local/…), litellm (every provider), auto (default: native where it can)",
    )
    llm.add_argument(
        "--concurrency", type=_bounded("concurrency"), help="at most this many calls in flight to the provider"
    )
    llm.add_argument("--rpm", type=_real("rpm"), help="at most this many requests per minute")
    llm.add_argument(
        "--max-run-tokens", type=_bounded("max_run_tokens"), default=0, help="stop the run past this many tokens"
    )
    llm.add_argument("--max-run-cost", type=_real("max_run_cost"), default=0.0, help="stop the run past this many USD")
    llm.add_argument("--dry-run", action="store_true", help="print the items, caps and a cost estimate; run nothing")


BATCH_AGENTS = ("oracle", "random", "heuristic", "llm")


def _strategies(text: str) -> list[str]:
    """--strategy: one or several of the sequential strategies (`sandbox.strategies.STRATEGIES`), each once."""
    from workbench.service.scaling.strategies import STRATEGIES

    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in STRATEGIES]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"invalid strategy {', '.join(bad) or repr(text)} (choose from {', '.join(STRATEGIES)}, comma-separated)"
        )
    if len(set(names)) < len(names):
        raise argparse.ArgumentTypeError(f"a strategy is named twice in {text!r}")
    return names


def imply_agent(args: argparse.Namespace) -> argparse.Namespace:
    """`--agent` left out: the LLM agent when `--model` names a model (only it plays one), else the heuristic. Given,
    it stays as given: `--agent heuristic --model M` is still refused by the launch service as contradictory."""
    if "agent" in args and args.agent is None:
        args.agent = "llm" if getattr(args, "model", None) else "heuristic"
    return args


def _agent(text: str) -> str:
    """One of BATCH_AGENTS, or `human:NAME`, which `build_spec` refuses in one line with where to play instead."""
    from workbench.service.agents import is_human

    if text in BATCH_AGENTS or is_human(text):
        return text
    raise argparse.ArgumentTypeError(f"invalid choice: '{text}' (choose from {', '.join(BATCH_AGENTS)})")


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
    """An argparse type for a run name, by the launch form's rule (`workbench.service.runname`): stripped,
    non-empty, at most 80 printable characters."""
    from workbench.service.runname import name_problem

    if not text.strip():
        raise argparse.ArgumentTypeError("a run needs a name: got an empty one (leave out --run for a generated name)")
    problem = name_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text.strip()


def _shard(text: str):
    """An argparse type for `--shard I/N` (1 ≤ I ≤ N)."""
    from workbench.service.execution import parse_shard

    try:
        return parse_shard(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _real(name: str):
    """An argparse type for the real number `name`, within `workbench.service.limits.FLOAT_BOUNDS` (argparse
    exits 2)."""
    from workbench.service.limits import float_out_of_bounds

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
    from workbench.service.agents import reasoning_efforts, valid_effort

    if valid_effort(text):
        return text
    raise argparse.ArgumentTypeError(
        f"invalid choice: '{text}' (choose from {', '.join(reasoning_efforts())}, or a "
        "number of thinking tokens for Anthropic models)"
    )


def _bounded(name: str):
    """An argparse type for the run number `name`, within `workbench.service.limits.RUN_BOUNDS` (argparse exits 2)."""
    from workbench.service.limits import out_of_bounds

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


# The run flag whose cap each sequential axis sets per level: giving it too would be silently overridden.
SWEPT_CAP = {"points": "budget", "turns": "max_turns", "tokens": "max_tokens_total"}


DATA_HELP = "'builtin', a release directory, or hf:OWNER/NAME[@REVISION] (a release on the Hugging Face Hub)"
COMMON_OPTIONS = {"--db": True, "--format": True, "--quiet": False}  # flag → takes a value


LIST_FLAGS = ("--grid", "--k")  # flags whose value is a comma-separated list of numbers
_NEGATIVE_LIST = re.compile(r"^-[\d.]+[a-zA-Z]?(,-?[\d.]*[a-zA-Z]?)*$")


def attach_list_values(argv: list[str]) -> list[str]:
    """`--grid -10,20` as `--grid=-10,20`: argparse takes a value that starts with a minus and is not a plain
    negative number for a flag ("expected one argument"), so the grid never reached the check that refuses
    its negative budget by name."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in LIST_FLAGS and _NEGATIVE_LIST.match(arg):
            out[-1] = f"{out[-1]}={arg}"
            continue
        out.append(arg)
    return out


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
        leading += argv[i : i + 1 + takes_value]
        i += 1 + takes_value
    return argv[i:] + leading
