"""What an option means where the command that declares it gives it no words of its own.

`--help` listed --db, --format and every `synth` option bare. The words live here, one entry per flag (or per
(command, flag) where a command means something of its own by it), and `describe_options` gives them to every
option the parser (`workbench.cli.parser`) leaves without help; tests/test_newcomer_cli.py checks each has some.
"""

from __future__ import annotations

import argparse

# (command, flag) first, then the flag alone
OPTION_HELP = {
    "--db": "the results store (default: $AGENTHOP_DB or the user data dir)",
    "--format": "how to print: %(choices)s (default: %(default)s)",
    "--agent": "who plays: oracle, random, heuristic, llm (default: llm when --model is given, else heuristic)",
    "--workers": "episodes played at once (default: %(default)s)",
    "--limit": "at most this many items of the selection (default: all)",
    "--question-type": "only single-target (st) or multi-target (mt) items",
    "--depth": "only items whose gold papers are this many hops from the seed (1 or 2)",
    "--seed": "the agent's random seed, part of the run's identity (default: %(default)s)",
    "--replicates": "episodes per item (default: %(default)s)",
    "--budget": "points per episode (default: %(default)s)",
    "--max-turns": "turns per episode (default: %(default)s)",
    "--max-tokens-total": "prompt + completion tokens per episode (default: %(default)s)",
    "--ablation": "which tools the agent gets: %(choices)s (default: %(default)s)",
    "--top-k": "llm: top-k sampling (not every provider accepts it)",
    "--transport": "stdio for a client that starts the server, http to serve one at --host:--port "
    "(default: %(default)s)",
    "--reverse": "the sort reversed",
    "--quiet": "no progress on stderr",
    "--data": "the dataset: builtin, a release directory, or hf:OWNER/NAME[@REVISION] on the Hugging Face Hub "
    "(default: %(default)s)",
    "--reviewer": "who reviews (default: the one remembered, else your user name)",
    "--verdict": "the item's verdict: %(choices)s",
    "--note": "why, in a few words (kept with the verdict)",
    "--question-ok": "the question is answerable and unambiguous: yes or no",
    "--gold-supported": "the gold answer is supported by the gold papers: yes or no",
    "--labels-accurate": "the section labels point at the evidence: yes or no",
    "--action": "what to do with the label: %(choices)s",
    "--arxiv-id": "the labelled paper's arXiv id",
    "--axis": "the budget that grows along the grid: %(choices)s",
    "--correction": "the multiplicity correction over the transitions: %(choices)s (default: %(default)s)",
    "--boot-seed": "the bootstrap's random seed (default: %(default)s)",
    "--judge-base-url": "an OpenAI-compatible server for a model --judge (a local one needs no key)",
    ("import-reference", "--run"): "the name the imported run gets",
    ("import-inspect", "--run"): "the name the imported run gets",
    ("audit export", "--out"): "the directory the corrected release is written to (must not exist, or be empty)",
    ("scale sequential", "--budget"): "points per episode (default: 30, the protocol's; --axis points sets it at "
    "each level)",
    ("scale sequential", "--max-turns"): "turns per episode (default: 20, the protocol's; --axis turns sets it at "
    "each level)",
    ("scale sequential", "--max-tokens-total"): "prompt + completion tokens per episode (default: 200000, the "
    "protocol's; --axis tokens sets it at each level)",
    ("export", "--format"): "what to write (required): agenthop-summary (the reference's summary.json), jsonl "
    "(JSON Lines, a trajectory a line) or inspect (an Inspect AI log, with --out)",
    ("synth", "--out"): "the directory the benchmark is written to (must not exist, or be empty)",
    ("synth", "--preset"): "the sizes: demo (60 items, 240 papers) or paper (1,011 items, 7,205 papers) "
    "(default: %(default)s)",
    ("synth", "--seed"): "the generator's seed: the same seed and sizes write the same bytes (default: %(default)s)",
    ("synth", "--items"): "items to build, at most 5,000 (default: the preset's); the largest sizes build in under "
    "a minute",
    ("synth", "--papers"): "papers with full text in the pool, at most 10,000 (default: the preset's; too few for the "
    "items is refused with a number that builds)",
}


def describe_options(parser: argparse.ArgumentParser, command: str = "") -> None:
    """Give each option without help its OPTION_HELP words, in every command and subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                describe_options(sub, f"{command} {name}".strip())
        elif action.option_strings and not action.help:
            flag = action.option_strings[-1]
            action.help = OPTION_HELP.get((command, flag)) or OPTION_HELP.get(flag)
