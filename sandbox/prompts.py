"""What the agent is told: the system prompt, the first user message and the seven tool schemas
(docs/protocol.md#what-the-agent-sees).

One module so that a run can record the hash of exactly what its agents saw.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, fields, replace
from typing import Any

from sandbox.records import Caps, Item, ToolSchema

TOOL_SCHEMAS: list[ToolSchema] = [
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
        "description": (
            "Get the list of papers cited by this paper, with each reference's ID, title, year, "
            "and the citation context (the sentence where it was cited)."
        ),
        "parameters": {
            "type": "object",
            "properties": {"paper_id": {"type": "string", "description": "The paper ID (Semantic Scholar paper ID)."}},
            "required": ["paper_id"],
        },
    },
    {
        "name": "search_papers",
        "description": (
            "Keyword search over the available pool of papers. "
            "Returns the top matching papers with their titles and abstracts."
        ),
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
        "description": (
            "List the section names of a paper, each labelled with an alphabet alias (A), (B), ... "
            "that can be used in read_section."
        ),
        "parameters": {
            "type": "object",
            "properties": {"paper_id": {"type": "string", "description": "The paper ID (Semantic Scholar paper ID)."}},
            "required": ["paper_id"],
        },
    },
    {
        "name": "read_section",
        "description": (
            "Read the full text of one section of a paper. This is the most expensive tool. "
            'The section may be given as its alias ("(A)" or "A"), its full header, '
            "or a case-insensitive unique substring of the header."
        ),
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
        "description": (
            "Submit your final answer. Choose exactly one option and include your reasoning. You may only submit once."
        ),
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
You start from a seed paper. The answer requires information from papers reachable through citations: \
papers cited by the seed, or papers cited by those (up to 2 hops). Explore the citation graph strategically, \
read the relevant sections, and synthesise the evidence to answer the question."""

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

After every tool result you will see a status line with counters only: \
`Turn: T  |  Tokens used: U  |  Budget used: B`. Track these against the limits above.

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
CLOSED_BOOK_FIRST = (
    "Please answer the question based on your knowledge. Reason carefully about each option, then call submit_answer."
)
NUDGE = "Please use the available tools to investigate, or call submit_answer if you're ready."
EXHAUSTED = "Budget exhausted. You MUST call submit_answer now with your best guess."
CONTINUE = (
    "Before finalizing your answer, take additional time to verify your reasoning, consider alternative "
    "approaches, and search for any missing information that could strengthen your response."
)
STOP_NOW = (
    "**CRITICAL: You MUST provide your final answer immediately. Do NOT perform any more tool calling or "
    "reasoning. Return the final answer under the required format NOW.**"
)

# Sequential-scaling strategies (the scaling study §4.3): what wraps the agent's summary and the verifier's
# assessment when they go back to the agent (the summarize request and the verifier's instructions are
# `Prompts.summarize` and `Prompts.verifier`, below, replaceable from a prompts file); see sandbox.strategies.
SUMMARY_HEAD = "Summary of your work so far (it replaces the earlier conversation):"
REVISION_HEAD = "Not yet. A reviewer summarized your work so far:"
REVISION_TAIL = "Continue working, then submit your answer."
# The judges' system messages (parallel scaling; the scaling study §3.4–3.5, in our words)
POINTWISE_SYSTEM = (
    "You are a rigorous Lead Researcher auditing autonomous research agents. First check the final answer, then the "
    "steps: logic errors, hallucination, tool misuse. Mark the answer Correct if it is factually correct even when the "
    "reasoning was flawed; note process errors separately. Cite evidence from the trajectory and don't trust the "
    "answers too much. End with <judgment>YOUR FINAL JUDGMENT</judgment>, choosing only Correct or Wrong."
)
PAIRWISE_SYSTEM = (
    "You are a rigorous Lead Researcher comparing two autonomous research agents that answered the same question. "
    "Decide which final answer is better supported by the evidence each agent gathered. End with "
    "<choice>1</choice> or <choice>2</choice>."
)
# Their user messages: the trajectories (JSON, texts cut), the task and the answers, then the question put to them
POINTWISE_USER = (
    "## Trajectory\n{trajectory}\n---\n## Task Description\n{task}\nSubmitted answer: {answer}\n---\n"
    "Judge whether the final answer is correct. Put Correct or Wrong in <judgment></judgment> tags."
)
PAIRWISE_USER = (
    "## Task Description\n{task}\n---\n## Agent 1 (answer {answer_1})\n{trajectory_1}\n---\n"
    "## Agent 2 (answer {answer_2})\n{trajectory_2}\n---\nWhich agent's final answer is better "
    "supported? Answer <choice>1</choice> or <choice>2</choice>."
)

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
    tools: tuple[ToolSchema, ...]
    texts: Any = None  # the `Prompts` it came from (None: the defaults): the episode's other texts

    @property
    def digest(self) -> str:
        """Hash of the prompt template for this item (recorded per run via `prompt_template_hash`)."""
        payload = json.dumps([self.system, self.first_message, list(self.tools)], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()


def build_prompt(
    item: Item, caps: Caps, ablation: str = "full", text_tools: bool = False, texts: Any = None, extra_tools: Any = None
) -> Prompt:
    """The reference's direct-strategy prompt, or the closed-book one, for this item and these caps.

    Closed-book (docs/protocol.md "Rules") is the reference's `noretrieval` prompt — own knowledge, no tool
    or constraint prose, the task block, then the instruction to submit — with `submit_answer`
    the only tool (in text mode, how to write that call). `texts` is the prompt set in force
    (`Prompts`, from `--prompts FILE`); None is ours, whose templates compose the
    texts above exactly as they always were. `extra_tools` (a `sandbox.extra_tools.registry.ExtraTools`, the
    general-agent setting) adds its out-of-domain tools to the tool block and the schemas.
    """
    return (texts or DEFAULT_PROMPTS).opening(item, caps, ablation, text_tools, extra_tools)


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
    payload = json.dumps(
        [
            TOOL_SCHEMAS,
            ROLE,
            OVERVIEW,
            TOOLS_BLOCK,
            CONSTRAINTS,
            TEXT_TOOLS_BLOCK,
            CLOSED_BOOK_ROLE,
            CLOSED_BOOK_TAIL,
            FIRST_MESSAGE,
            CLOSED_BOOK_FIRST,
            NUDGE,
            EXHAUSTED,
            CONTINUE,
            STOP_NOW,
        ],
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


# ---------------------------------------------------------------- the prompt set (--prompts FILE.toml)
# Every text sent to an agent or a judge as one replaceable set. The templates below compose the texts above exactly
# as they always were; `sandbox.prompt_set` reads and writes the file, checks it, and names its keys.

SYSTEM = "\n\n".join([ROLE, OVERVIEW, "{tools_block}", CONSTRAINTS, "{task_block}"])
CLOSED_BOOK = CLOSED_BOOK_ROLE + "\n\n{tools_block}{task_block}\n\n" + CLOSED_BOOK_TAIL
STATUS_FOOTER = "\nTurn: {turn}  |  Tokens used: {tokens:,}  |  Budget used: {points_used}"
# Sequential scaling's strategies: the summarize request and the verifier's instructions (`Prompts.summarize`,
# `Prompts.verifier`)
SUMMARIZE_PROMPT = (
    "Not yet: before you continue, write a summary of your work so far. It will replace the "
    "conversation above, so include everything you still need: (1) the approaches you tried and what "
    "each gave; (2) the information you collected, with paper ids and sections; (3) the current state "
    "of your answer and how sure you are; (4) what remains to check. Reply with the summary as plain "
    "text and call no tool in this reply."
)
VERIFIER_PROMPT = (
    "You review the work of a research agent answering a multiple-choice question about papers. "
    "Summarize its trajectory factually: what it tried, what it found (papers and sections read, what "
    "they say), and the answer it currently gives. Do not judge whether the answer is right, do not "
    "suggest next steps, and give no hints."
)


class _NotMeasured:
    """The footer's token count when nobody measured it: "not measured" under any format spec (`{tokens:,}`)."""

    def __format__(self, spec: str) -> str:
        return "not measured"


NOT_MEASURED_TOKENS = _NotMeasured()
FILE_KEY = {"continue_": "continue"}  # the attribute whose file key is a Python keyword


@dataclass(frozen=True)
class Prompts:
    """The texts in force: the runner builds each episode's opening from it, the episode its nudges, stop and continue
    instructions and status footer, the judges their system messages, sequential scaling's strategies their
    summarize and verifier prompts. `no_search=None` follows `system`; `tools` holds only the tool descriptions an
    explicit `[tools]` table replaced (the protocol's are part of what is measured)."""

    system: str = SYSTEM
    closed_book: str = CLOSED_BOOK
    no_search: str | None = None
    first_user: str = FIRST_MESSAGE
    closed_book_first_user: str = CLOSED_BOOK_FIRST
    status_footer: str = STATUS_FOOTER
    nudge: str = NUDGE
    exhausted_nudge: str = EXHAUSTED
    continue_: str = CONTINUE
    stop: str = STOP_NOW
    summarize: str = SUMMARIZE_PROMPT
    summary_head: str = SUMMARY_HEAD
    verifier: str = VERIFIER_PROMPT
    revision_head: str = REVISION_HEAD
    revision_tail: str = REVISION_TAIL
    judge_pointwise: str = POINTWISE_SYSTEM
    judge_pairwise: str = PAIRWISE_SYSTEM
    judge_pointwise_user: str = POINTWISE_USER
    judge_pairwise_user: str = PAIRWISE_USER
    tools: tuple[tuple[str, str], ...] = ()

    def resolved(self) -> dict[str, str | dict[str, str]]:
        """Every text by its file key as it applies (no_search resolved), and the tool descriptions replaced."""
        out: dict[str, str | dict[str, str]] = {
            FILE_KEY.get(f.name, f.name): getattr(self, f.name) for f in fields(self)
        }
        out["no_search"] = self.no_search if self.no_search is not None else self.system
        out["tools"] = dict(sorted(self.tools))
        return out

    @property
    def digest(self) -> str:
        """SHA-256 of the texts as they apply: two files that send the same words have the same digest."""
        return hashlib.sha256(json.dumps(self.resolved(), sort_keys=True).encode()).hexdigest()

    @property
    def is_default(self) -> bool:
        return self.digest == DEFAULT_PROMPTS.digest

    def footer(self, state: Any, tokens_measured: bool = True) -> str:
        """The status line for a `LedgerState` (the live ledger's, or a stored step's). An agent whose tokens the
        workbench cannot see (an MCP client's) reads "not measured" where the count stands, whatever its format."""
        tokens = state.tokens if tokens_measured else NOT_MEASURED_TOKENS
        return self.status_footer.format(
            turn=state.turn,
            tokens=tokens,
            points_used=state.points_used,
            points_left=state.points_left,
            budget=state.points_used + state.points_left,
        )

    def tool_schemas(self) -> list[ToolSchema]:
        """The protocol's seven schemas, with the descriptions an explicit `[tools]` table replaced."""
        if not self.tools:
            return TOOL_SCHEMAS
        new = dict(self.tools)
        return [{**s, "description": new[s["name"]]} if s["name"] in new else s for s in TOOL_SCHEMAS]

    def opening(
        self, item: Item, caps: Caps, ablation: str = "full", text_tools: bool = False, extra_tools: Any = None
    ) -> Prompt:
        """The system prompt, first user message and tools of one episode (`build_prompt`); with `extra_tools` (the
        general-agent setting) its out-of-domain tools join the tool block and the schemas, in their recorded order."""
        schemas = self.tool_schemas()
        numbers = {"budget": caps.budget, "max_turns": caps.max_turns, "max_tokens": caps.max_tokens_total}
        if ablation == "closed-book":
            return self._closed_book(item, schemas, numbers, text_tools)
        block = remove_disabled(TOOLS_BLOCK, caps.disabled_tools)
        if extra_tools is not None:
            block = extra_tools.tool_block(block)
        if text_tools:
            block += "\n\n" + TEXT_TOOLS_BLOCK
        template = self.no_search if ablation == "no-search" and self.no_search is not None else self.system
        system = template.format(
            tools_block=block, task_block=task_block(item, gold_given=ablation == "gold-given"), **numbers
        )
        tools = tuple(s for s in schemas if s["name"] not in caps.disabled_tools)
        if extra_tools is not None:
            tools = extra_tools.request_tools(tools)
        return Prompt(system, self.first_user, tools, self)

    def _closed_book(self, item: Item, schemas: list[ToolSchema], numbers: dict[str, int], text_tools: bool) -> Prompt:
        """The closed-book ablation's opening: no navigation, only `submit_answer` offered."""
        tools = tuple(s for s in schemas if s["name"] == "submit_answer")
        block = TEXT_TOOLS_BLOCK + "\n\n" if text_tools else ""
        system = self.closed_book.format(tools_block=block, task_block=task_block(item), **numbers)
        return Prompt(system, self.closed_book_first_user, tools, self)


DEFAULT_PROMPTS = Prompts()
