"""The play screen's argument form: which key calls which tool with which fields, what each field takes, what the
form is filled in with when it opens, and the call the fields make (or the field still to fill in, and why).

No point is lost to the interface: an empty required argument is never sent (enter moves on to it), a picked
section is offered once, and a call the points left cannot pay is said to be refused before it is sent. The rules
of the call itself are the episode's (`sandbox.episode`), once it is sent.
"""

from __future__ import annotations

from dataclasses import dataclass

# key, tool, label, argument fields (in entry order)
TOOLS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    ("1", "get_paper_info", "info", ("paper_id",)),
    ("2", "get_references", "references", ("paper_id",)),
    ("3", "search_papers", "search", ("query", "top_k")),
    ("4", "list_sections", "sections", ("paper_id",)),
    ("5", "read_section", "read", ("paper_id", "section")),
    ("t", "think", "think", ("reasoning",)),
    ("s", "submit_answer", "submit", ("answer", "reasoning")),
)
FIELDS = {tool: fields for _, tool, _, fields in TOOLS}
OPTIONAL = {("search_papers", "top_k"), ("submit_answer", "reasoning")}
ARG_FIELDS = ("paper_id", "section", "query", "top_k", "answer", "reasoning")  # every field, as the form stacks them
# each fits the argument field at 80 columns (45 cells; a test holds them to the field's width)
PLACEHOLDERS = {
    "paper_id": "paper id · → completes · ↓ papers seen",
    "section": "section (A) or header · → completes · ↓ list",
    "query": "search keywords",
    "top_k": "top_k (default 5, at most 10)",
    "answer": "answer: A, B, C or D",
    "reasoning": "reasoning",
}
THINK_PLACEHOLDER = "notes for yourself (a think call: one turn)"

# The engine records any answer (an agent's "E" is scored as no answer); the field takes a letter only, and says so
# in the prompt's own words when a key or an empty enter is refused.
ANSWER_RULE = "answer must be one of A, B, C or D (select exactly one option)"


@dataclass(frozen=True)
class Accepts:
    """The characters a field takes as they are typed (a regular expression the whole value matches) and its
    longest value."""

    pattern: str
    max_length: int = 0  # 0: no limit


ACCEPTS = {"top_k": Accepts(r"\d{0,2}"), "answer": Accepts(r"[A-Da-d]?", 1)}

LISTS = {"paper_id": "papers", "section": "sections"}  # the fields a list of what was seen fills in


def placeholder(tool: str, name: str) -> str:
    """The hint an empty field of `tool`'s form shows."""
    return THINK_PLACEHOLDER if (tool, name) == ("think", "reasoning") else PLACEHOLDERS[name]


def opened_values(
    tool: str, paper: str | None, picked_section: tuple[str, str] | None, given: dict[str, str]
) -> dict[str, str]:
    """What each field of `tool`'s form holds when it opens: the `given` values, else the current `paper` and a
    section picked from the list of that paper's sections, else nothing."""
    defaults = {"paper_id": paper or ""}
    if picked_section is not None and picked_section[0] == paper:
        defaults["section"] = picked_section[1]
    return {name: given.get(name, defaults.get(name, "")) for name in FIELDS[tool]}


def first_empty(tool: str, start: str, values: dict[str, str]) -> str | None:
    """The first field of `tool`'s form from `start` on that still needs a value; None when all have one (the form
    itself then takes the focus: enter sends)."""
    fields = FIELDS[tool]
    return next((name for name in fields[fields.index(start) :] if not values.get(name, "").strip()), None)


@dataclass(frozen=True)
class Unsent:
    """Why enter did not send: the first required field still empty (the focus goes there) and, for an empty answer
    sent from the answer field itself, the rule it breaks."""

    field: str
    notice: str | None = None


def unsent(tool: str, values: dict[str, str], from_field: str | None = None) -> Unsent | None:
    """None when `tool`'s call can be sent with `values`, else the required field still empty: an empty argument is
    never sent by accident. `from_field` is the field enter was pressed in."""
    missing = [name for name in FIELDS[tool] if (tool, name) not in OPTIONAL and not values.get(name, "").strip()]
    if not missing:
        return None
    said = ANSWER_RULE if missing[0] == "answer" and from_field == "answer" else None
    return Unsent(missing[0], said)


def call_args(tool: str, values: dict[str, str]) -> dict[str, str | int]:
    """The call's arguments from the form's fields: texts stripped, the answer's letter upper-case, top_k a number
    (left out when empty: the tool's default)."""
    args: dict[str, str | int] = {}
    for name in FIELDS[tool]:
        value = values.get(name, "").strip()
        if name == "top_k":
            if value:
                args[name] = int(value)
        elif name == "answer":
            args[name] = value.upper()
        else:
            args[name] = value
    return args


def unseen_paper(args: dict[str, str | int], papers: dict[str, str]) -> str | None:
    """The paper id of a call that names none of the `papers` seen so far (sent only once the player confirms: it
    is charged even when no such paper exists), or None."""
    paper = args.get("paper_id")
    return None if paper is None or paper in papers else str(paper)


def refused(cost: int, points_left: int | None) -> bool:
    """Whether the ledger would refuse a call of `cost` with `points_left` (at no cost, but a turn)."""
    return points_left is not None and cost > points_left


def title_hints(form_focused: bool, refused_call: bool) -> list[str]:
    """The hints after the form's title, each shown while it fits: a refused call is not offered as `enter sends`."""
    hints = ["enter sends"] + ["tab edits"] * form_focused + ["esc cancels"]
    return hints[1:] if refused_call else hints


def list_below(focused: str | None, tool: str | None) -> str | None:
    """The list ↓ moves to from the focused field (`papers` or `sections`), or None: from the filled-in form itself
    (`focused` "form"), the list of its last field a list fills in."""
    if focused == "form" and tool is not None:
        focused = "section" if "section" in FIELDS[tool] else "paper_id"
    return LISTS.get(focused or "")
