"""A run's model family (lineage) and capability tier, as the AgentHop paper groups its panel (§4, Table 2).

The paper reads its panel by family (GPT commits early, Anthropic and GLM verify, DeepSeek and Kimi over-search)
and marks a leader per capability tier. A run gets both from its model string by the table below, unless the
person chose them (`--family`, `--tier`, the launch form, `runs tag`): the chosen values are stored with the run
and win. Runs stored before tags existed (NULL columns) read the derived values. Scripted agents (heuristic,
oracle, random) and people have no model, hence no family or tier until someone tags them.

The table is data, not a rule about behaviour: nothing downstream reads a family's name to decide what the family
does (the fingerprints' words come from the tests over the data, see `reports.fingerprints`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from storage.rows import RunRow
from workbench.service.runname import label_problem

CLOSED = "closed-frontier"
OPEN = "open-frontier"
EFFICIENT = "compute-efficient"
TIERS = (CLOSED, OPEN, EFFICIENT)  # the paper's order (Table 2 groups rows by tier)
TIER_ALIASES = {
    "closed": CLOSED,
    "open": OPEN,
    "efficient": EFFICIENT,
    "compute": EFFICIENT,
    **{t: t for t in TIERS},
    **{t.replace("-", " "): t for t in TIERS},
}  # `Open Frontier` too

# (family, default tier, pattern searched in the lower-cased model string with its provider prefix removed), in
# the order they are tried: the first match wins (Gemma before Gemini's `gem`, o-series after everything else)
KNOWN: tuple[tuple[str, str, str], ...] = (
    ("Gemma", EFFICIENT, r"\bgemma"),
    ("Gemini", CLOSED, r"\bgemini"),
    ("Claude", CLOSED, r"\bclaude|\b(opus|sonnet|haiku)\b"),
    ("GPT", CLOSED, r"\bgpt|\bchatgpt|\bcodex|(^|[/_-])o[1-9](-|$|mini)"),
    ("DeepSeek", OPEN, r"\bdeepseek"),
    ("Kimi", OPEN, r"\bkimi|\bmoonshot"),
    ("GLM", OPEN, r"\bglm|\bchatglm|\bzhipu"),
    ("MiniMax", OPEN, r"\bminimax"),
    ("Qwen", EFFICIENT, r"\bqwen|\bqwq"),
    ("Llama", EFFICIENT, r"\bllama"),
    ("Mistral", EFFICIENT, r"\bmistral|\bmixtral|\bcodestral|\bmagistral|\bministral|\bdevstral"),
    ("Grok", CLOSED, r"\bgrok"),
    ("Phi", EFFICIENT, r"\bphi-?\d"),
)
OPEN_WEIGHT_FLAGSHIP_B = 100  # an open-weight model of at least this many billion parameters is open frontier
MAX_FAMILY_LENGTH = 40


def derive(model: str | None) -> tuple[str | None, str | None]:
    """(family, tier) of a model string by KNOWN, or (None, None) for no model or an unknown one.

    The tier is the family's default, except that a model of an efficient (open-weight) family whose name gives
    ≥ 100B parameters (`Qwen3-235B-A22B`, `llama-3.1-405b`) is open frontier: the paper's Compute-Efficient tier
    holds the 26-35B checkpoints."""
    if not model or not model.strip():
        return None, None
    text = model.strip().lower()
    for family, tier, pattern in KNOWN:
        if re.search(pattern, text):
            flagship = tier == EFFICIENT and _billions(text) >= OPEN_WEIGHT_FLAGSHIP_B
            return family, OPEN if flagship else tier
    return None, None


def _billions(text: str) -> float:
    """The largest `<n>b` parameter count in a model string (`35b-a3b` → 35), 0 when none."""
    sizes = [float(m) for m in re.findall(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)b(?![a-z])", text)]
    return max(sizes, default=0.0)


def family_problem(family: str) -> str | None:
    """Why `family` cannot name a family, or None (printable, 1-40 characters, no comma: the TUI's tag field reads
    `FAMILY, TIER`, so a family holding a comma could be written but never read back)."""
    if "," in family:
        return f"'{family.strip()}' holds a comma: a family is one name (set the tier with its own field)"
    return label_problem(family, "a family name", MAX_FAMILY_LENGTH)


def normal_family(family: str) -> str:
    """A chosen family as stored: a known family in its table spelling (`gpt` → `GPT`), another as typed."""
    text = family.strip()
    return next((known for known, _, _ in KNOWN if known.lower() == text.lower()), text)


def tier_problem(tier: str) -> str | None:
    """Why `tier` is not a tier, or None."""
    if normal_tier(tier) is None:
        return f"unknown tier '{tier}' (choose from {', '.join(TIERS)})"
    return None


def normal_tier(tier: str) -> str | None:
    """The tier a person typed (`closed`, `Open Frontier`, `compute-efficient`) as stored, or None if none."""
    return TIER_ALIASES.get(tier.strip().lower())


def chosen_or_derived(model: str | None, family: str | None, tier: str | None) -> tuple[str | None, str | None]:
    """The (family, tier) a new run records: each chosen value, normalised, else the one derived from the model."""
    d_family, d_tier = derive(model)
    return (normal_family(family) if family else d_family), (normal_tier(tier) if tier else d_tier)


def lineage(run: RunRow) -> tuple[str | None, str | None]:
    """A stored run's (family, tier): its stored values, else (a run stored before tags) derived from its model."""
    d_family, d_tier = derive(run.get("model"))
    return (run.get("family") or d_family), (run.get("tier") or d_tier)


def parse_tag(text: str) -> tuple[str | None, str | None, str | None]:
    """`GPT, closed-frontier` (the TUI's tag field) as (family, tier, problem): either part may be empty (kept as
    it is) or `auto` (derived from the model again); a bad part gives its problem and no values."""
    family, _, tier = (part.strip() for part in text.partition(","))
    problem = _tag_problem("family", family, family_problem) or _tag_problem("tier", tier, tier_problem)
    if problem:
        return None, None, problem
    if not family and not tier:
        return None, None, "give a family, a tier or both (FAMILY, TIER)"
    return family or None, tier or None, None


def _tag_problem(key: str, value: str, problem_of: Callable[[str], str | None]) -> str | None:
    """What is wrong with one part of a tag (`family: …`); an empty part or `auto` is never wrong."""
    if not value or value.lower() == "auto":
        return None
    problem = problem_of(value)
    return f"{key}: {problem}" if problem else None
