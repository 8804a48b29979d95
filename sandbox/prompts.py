"""What the agent is told: the system prompt, the first user message and the seven tool schemas (reference §2.2, §3.3).

One module so that a run can record the hash of exactly what its agents saw.
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from sandbox.records import Caps, Item

TOOL_SCHEMAS: list[dict] = [
    {
        "name": "get_paper_info",
        "description": "Get metadata for a paper: title, abstract, year, and venue.",
        "parameters": {
            "type": "object",
            "properties": {"paper_id": {"type": "string", "description": "The paper ID (Semantic Scholar paper ID)."}},
            "required": ["paper_id"],
        },
    },
    {
        "name": "get_references",
        "description": "Get the list of papers cited by this paper, with each reference's ID, title, year, and the citation context (the sentence where it was cited).",
        "parameters": {
            "type": "object",
            "properties": {"paper_id": {"type": "string", "description": "The paper ID (Semantic Scholar paper ID)."}},
            "required": ["paper_id"],
        },
    },
    {
        "name": "search_papers",
        "description": "Keyword search over the available pool of papers. Returns the top matching papers with their titles and abstracts.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Search keywords."},
                "top_k": {"type": "integer", "description": "Number of results to return (max: 10).", "default": 5},
            },
            "required": ["query"],
        },
    },
    {
        "name": "list_sections",
        "description": "List the section names of a paper, each labelled with an alphabet alias (A), (B), ... that can be used in read_section.",
        "parameters": {
            "type": "object",
            "properties": {"paper_id": {"type": "string", "description": "The paper ID (Semantic Scholar paper ID)."}},
            "required": ["paper_id"],
        },
    },
    {
        "name": "read_section",
        "description": "Read the full text of one section of a paper. This is the most expensive tool. The section may be given as its alias (\"(A)\" or \"A\"), its full header, or a case-insensitive unique substring of the header.",
        "parameters": {
            "type": "object",
            "properties": {
                "paper_id": {"type": "string", "description": "The paper ID (Semantic Scholar paper ID)."},
                "section": {"type": "string", "description": "Section alias, full header, or unique substring."},
            },
            "required": ["paper_id", "section"],
        },
    },
    {
        "name": "think",
        "description": "A free scratchpad for reasoning about the evidence gathered so far. Costs no budget.",
        "parameters": {
            "type": "object",
            "properties": {"reasoning": {"type": "string", "description": "Your reasoning."}},
            "required": ["reasoning"],
        },
    },
    {
        "name": "submit_answer",
        "description": "Submit your final answer. Choose exactly one option and include your reasoning. You may only submit once.",
        "parameters": {
            "type": "object",
            "properties": {
                "answer": {"type": "string", "enum": ["A", "B", "C", "D"], "description": "The option letter."},
                "reasoning": {"type": "string", "description": "Why this option is correct."},
            },
            "required": ["answer", "reasoning"],
        },
    },
]

ROLE = (
    "You are a research assistant answering a multi-hop scientific question by navigating a citation graph "
    "with tools, gathering evidence from papers to select the correct answer."
)
OVERVIEW = """## Task Overview
You start from a seed paper. The answer requires information from papers reachable through citations: papers cited by the seed, or papers cited by those (up to 2 hops). Explore the citation graph strategically, read the relevant sections, and synthesise the evidence to answer the question."""

TOOLS_BLOCK = """## Tools
You have seven tools. Each tool call costs budget points.

### Navigation Tools (1 point each)
- **get_paper_info**(paper_id) — Get a paper's title, authors, year and abstract.
- **get_references**(paper_id) — List the papers cited by a paper.
- **search_papers**(query, top_k=5) — Keyword search over the papers in the citation neighbourhood.
- **list_sections**(paper_id) — List a paper's sections with aliases (A), (B), ...

### Reading Tool (5 points)
- **read_section**(paper_id, section) — Read the full text of one section (alias, header, or unique substring).

### Free Tools (0 points)
- **think**(reasoning) — A scratchpad for your reasoning.
- **submit_answer**(answer, reasoning) — Submit your final answer (A, B, C, or D). You may only submit once."""

CONSTRAINTS = """## Constraints
Three independent limits apply; the run ends when any of them is hit:
- **Budget**: {budget} points (navigation tools 1 point each, read_section 5 points).
- **Turns**: at most {max_turns} conversational turns.
- **Tokens**: at most {max_tokens:,} cumulative prompt + completion tokens per sample.

After every tool result you will see a status line with counters only: `Turn: T  |  Tokens used: U  |  Budget used: B`. Track these against the limits above.

Resource management:
- Navigate first: use the cheap navigation tools to find the papers that matter.
- Read selectively: read_section is expensive, so read only the sections most likely to hold the answer.
- Submit when the evidence suffices: do not spend budget you do not need."""

TEXT_TOOLS_BLOCK = """## How to Call Tools
To call a tool, reply with a block of this form and nothing after it:
<tool_call>
{"name": "TOOL_NAME", "arguments": {"ARG": "VALUE"}}
</tool_call>
Call one tool per turn. For example, to submit an answer:
<tool_call>
{"name": "submit_answer", "arguments": {"answer": "B", "reasoning": "The target paper states ..."}}
</tool_call>"""

CLOSED_BOOK_ROLE = (
    "You are a research assistant answering a scientific multiple-choice question from your own knowledge. "
    "No tools for reading papers are available.\n\n"
    "Reason carefully about each option: consider what the seed paper is likely to build on, which claims are "
    "specific and which are generic, and eliminate options that are implausible."
)

FIRST_MESSAGE = "Please solve the question above using the available tools. Start by examining the seed paper."
CLOSED_BOOK_TAIL = "You MUST call submit_answer with your best guess."
CLOSED_BOOK_FIRST = "Please answer the question based on your knowledge. Reason carefully about each option, then call submit_answer."
NUDGE = "Please use the available tools to investigate, or call submit_answer if you're ready."
EXHAUSTED = "Budget exhausted. You MUST call submit_answer now with your best guess."
CONTINUE = ("Before finalizing your answer, take additional time to verify your reasoning, consider alternative "
            "approaches, and search for any missing information that could strengthen your response.")
STOP_NOW = ("**CRITICAL: You MUST provide your final answer immediately. Do NOT perform any more tool calling or "
            "reasoning. Return the final answer under the required format NOW.**")

ABLATIONS = ("full", "closed-book", "no-search", "gold-given")


def task_block(item: Item, gold_given: bool = False) -> str:
    """The seed, question and options, as the reference lays them out."""
    letters = "ABCD"
    options = "\n".join(f"({letters[i]}) {opt}" for i, opt in enumerate(item.options))
    gold = ""
    if gold_given:
        ids = "\n".join(f"- {g}" for g in item.gold_paper_ids)
        gold = f"\n\n## Target Papers\nThe answer is found in these papers (IDs in the citation graph):\n{ids}"
    tail = "Select exactly one option (A, B, C, or D) and submit using submit_answer."
    return (
        "## Seed Paper\nYour starting point in the citation graph:\n"
        f"- **ID**: {item.seed_paper_id}\n- **Title**: {item.seed_title}{gold}\n\n"
        f"## Question\n{item.question}\n\n## Answer Options\n{options}\n\n{tail}"
    )


def remove_disabled(tools_block: str, disabled: tuple[str, ...]) -> str:
    for name in disabled:
        tools_block = re.sub(rf"^- \*\*{re.escape(name)}\*\*\(.*\n?", "", tools_block, flags=re.M)
    return tools_block


@dataclass(frozen=True)
class Prompt:
    """The opening of an episode: system prompt, first user message and the tool schemas offered."""

    system: str
    first_message: str
    tools: tuple[dict, ...]
    texts: Any = None  # the `sandbox.prompt_set.Prompts` it came from (None: the defaults): the episode's other texts

    @property
    def digest(self) -> str:
        """Hash of the prompt template for this item (recorded per run via `prompt_template_hash`)."""
        payload = json.dumps([self.system, self.first_message, list(self.tools)], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


def build_prompt(item: Item, caps: Caps, ablation: str = "full", text_tools: bool = False, texts: Any = None) -> Prompt:
    """The reference's direct-strategy prompt, or the closed-book one, for this item and these caps.

    Closed-book (PROTOCOL §2) is the reference's `noretrieval` prompt — own knowledge, no tool
    or constraint prose, the task block, then the instruction to submit — with `submit_answer`
    the only tool (in text mode, how to write that call). `texts` is the prompt set in force
    (`sandbox.prompt_set.Prompts`, from `--prompts FILE`); None is ours, whose templates compose the
    texts above exactly as they always were.
    """
    from sandbox.prompt_set import DEFAULT_PROMPTS

    return (texts or DEFAULT_PROMPTS).opening(item, caps, ablation, text_tools)


def caps_for_ablation(caps: Caps, ablation: str) -> Caps:
    """The caps an ablation implies: closed-book offers only submit_answer; no-search disables search."""
    if ablation == "closed-book":
        disabled = tuple(s["name"] for s in TOOL_SCHEMAS if s["name"] != "submit_answer")
    elif ablation == "no-search":
        disabled = ("search_papers",)
    else:
        return caps
    return replace(caps, disabled_tools=tuple(sorted(set(caps.disabled_tools) | set(disabled))))


def template_hash() -> str:
    """Hash of every prompt template, recorded with each run so prompt changes are visible."""
    payload = json.dumps([TOOL_SCHEMAS, ROLE, OVERVIEW, TOOLS_BLOCK, CONSTRAINTS, TEXT_TOOLS_BLOCK, CLOSED_BOOK_ROLE,
                          CLOSED_BOOK_TAIL, FIRST_MESSAGE, CLOSED_BOOK_FIRST, NUDGE, EXHAUSTED, CONTINUE, STOP_NOW],
                         sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()
