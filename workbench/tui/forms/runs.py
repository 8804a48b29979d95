"""The runs list's model: which columns show, how NAME and AGENT / MODEL share the width, what a row's words are,
which rows a filter keeps and in what order, the marks and the pair `c` compares.

Text here is unsanitised: the screen makes it safe to show and measures it in terminal cells (Rich's), so the rules
that need a width take the cells the screen measured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from workbench.service.datasets import dataset_label
from workbench.service.runlist import RunListing, natural_key
from workbench.views.cells import lineage_cell, usd

COLUMNS = (
    ("name", "NAME"),
    ("agent", "AGENT / MODEL"),
    ("dataset", "DATA"),
    ("done", "DONE"),
    ("accuracy", "ACC"),
    ("cost", "COST"),
    ("status", "STATE"),
)
SORTS = ("created", "name", "agent", "dataset", "done", "accuracy", "cost", "status")
NAME_MAX, AGENT_MAX, TEXT_MIN = 40, 48, 10  # NAME and AGENT / MODEL: sized to content up to a cap (an agent, its
# model and a whole family · tier tag), shrunk to fit the room the other columns leave
AGENT_MIN = 6  # cells the agent keeps before its tag gives way
MARK = "● "  # before a marked run's name


def text_widths(name: int, agent: int, room: int, floors: tuple[int, int] = (TEXT_MIN, TEXT_MIN)) -> tuple[int, int]:
    """Clip widths of NAME and AGENT / MODEL whose longest cells are `name` and `agent` wide, so that both fit in
    `room` cells (what the other columns leave): the wider one gives way first, neither below its floor (TEXT_MIN,
    or its header's width: a column is never narrower than its header, so shrinking it below would not fit)."""
    name, agent = min(name, NAME_MAX), min(agent, AGENT_MAX)
    low_name, low_agent = floors
    while name + agent > room:
        if name > low_name and (name >= agent or agent <= low_agent):
            name -= 1
        elif agent > low_agent:
            agent -= 1
        else:
            break
    return name, agent


def fitted_widths(content: Sequence[int], labels: Sequence[str], room: int) -> tuple[int, int]:
    """NAME and AGENT / MODEL's clip widths from the widest cell of each (`content`, the columns shown in order)
    and their headers (`labels`): `text_widths` with each header's width as its floor."""
    floors = (max(TEXT_MIN, len(labels[0])), max(TEXT_MIN, len(labels[1])))  # a column is never below its header
    return text_widths(content[0], content[1], room, floors)


def agent_label(row: RunListing) -> str:
    """The agent, model, ablation and tag of a run, as one line (what the AGENT / MODEL column sorts by)."""
    return agent_words(row) + (f" {tag_words(row)}" if tag_words(row) else "")


def agent_words(row: RunListing) -> str:
    """`oracle nomodel · no-search`: the agent, its model and an ablation other than the full one."""
    text = row["agent"] + (f" {row['model']}" if row.get("model") else "")
    if row.get("ablation") and row["ablation"] != "full":
        text += f" · {row['ablation']}"
    return text


def tag_words(row: RunListing) -> str:
    """`[GPT · closed]`: the panel's grouping, where known (scripted runs: once tagged), else ''."""
    if not (row.get("family") or row.get("tier")):
        return ""
    return f"[{lineage_cell(row.get('family'), row.get('tier'))}]"


def agent_room(agent: int, tag: int, width: int) -> int | None:
    """The cells the agent and model (`agent` cells wide) keep beside a whole tag (`tag` cells) in a `width`-cell
    AGENT / MODEL cell: what is left after the tag and a space (the agent's middle is elided to fit it), or None
    when that leaves fewer than AGENT_MIN cells: the tag is then left out, never cut."""
    room = width - 1 - tag
    if agent <= room:
        return agent
    return room if room >= AGENT_MIN else None


def name_words(name: str, marked: bool) -> str:
    """The NAME cell before clipping: a marked run's name after the mark."""
    return (MARK if marked else "") + name


def cost_words(row: RunListing) -> str:
    """The COST cell: a model run without prices is "unpriced" (its tokens are measured), as `runs` and the
    reports say; "—" is a scripted agent's cost, never measured."""
    return "unpriced" if row["cost_usd"] is None and row.get("model") else usd(row["cost_usd"])


def status_words(status: str, in_progress: bool, speed: float | None) -> str:
    """The STATE cell: a run in progress (here or by another process) `▶`, with its episodes a second once known."""
    if not in_progress:
        return status
    return f"▶ {speed:.1f}/s" if speed else "▶"


def shown_columns(rows: Iterable[RunListing]) -> tuple[str, ...]:
    """The columns' keys shown: DATA only while the runs' datasets differ (one dataset is said in the title), so
    the room goes to NAME and AGENT / MODEL at 80 columns."""
    uniform = len({dataset_label(r["dataset"]) for r in rows}) == 1
    return tuple(key for key, _ in COLUMNS if not (uniform and key == "dataset"))


def column_label(key: str, label: str, sort_column: str, reverse: bool) -> str:
    """A column's header: the sort arrow on the column the rows are sorted by (the others take no room for it)."""
    return label + ((" ▼" if reverse else " ▲") if key == sort_column else "")


def matches(row: RunListing, query: str) -> bool:
    """Every word of `query` in the run's name, agent, model, dataset, ablation, state, family or tier."""
    if not query:
        return True
    hay = " ".join(
        str(row.get(k) or "") for k in ("name", "agent", "model", "dataset", "ablation", "status", "family", "tier")
    ).lower()
    return all(word in hay for word in query.lower().split())


def sort_key(column: str) -> Callable[[RunListing], tuple[bool, Any]]:
    """The key ordering the runs by `column` (None values last; names in natural order: r2 before r10)."""

    def key(row: RunListing) -> tuple[bool, Any]:
        value = {
            "created": row.get("created_at") or "",
            "agent": agent_label(row),
            "done": row.get("done") or 0,
            "accuracy": row.get("accuracy"),
            "cost": row.get("cost_usd"),
            "name": natural_key(str(row.get("name") or "")),
        }.get(column, row.get(column))
        return (value is None, value if value is not None else 0)

    return key


def view_rows(rows: Iterable[RunListing], query: str, column: str, reverse: bool) -> list[RunListing]:
    """The runs the filter `query` keeps, sorted by `column`."""
    kept = [r for r in rows if matches(r, query)]
    kept.sort(key=sort_key(column), reverse=reverse)
    return kept


def next_sort(column: str) -> str:
    """The sort after `column` in the order `s` steps through."""
    return SORTS[(SORTS.index(column) + 1) % len(SORTS)]


def header_sort(key: str) -> str:
    """The sort a click on the header `key` asks for (a column that sorts by nothing: creation order)."""
    return key if key in SORTS else "created"


def toggled(marked: list[str], name: str) -> list[str]:
    """The marks after space on `name`: unmarked if it was marked, else marked last (marks keep their order)."""
    return [m for m in marked if m != name] if name in marked else [*marked, name]


def renamed(marked: list[str], old: str, new: str) -> list[str]:
    """The marks after `old` was renamed `new` (its place kept)."""
    return [new if m == old else m for m in marked]


def compare_pair(marked: list[str], current: str | None) -> list[str]:
    """The runs `c` compares: the two marked, or the one marked and the run under the cursor (fewer when that is
    all there is; the palette's picker starts from them); more than two marked: all of them (Compare refuses to
    choose two among them)."""
    pair = list(marked)
    if len(pair) == 1 and current and current != pair[0]:
        pair.append(current)
    return pair


def compare_refusal(pair: list[str], unmark_key: str, panel_key: str) -> str | None:
    """Why `c` compares nothing with `pair` (its keys as bound now), or None when it is two runs."""
    if len(pair) > 2:
        return (
            f"{len(pair)} runs are marked: Compare takes two (unmark the others with {unmark_key}); "
            f"{panel_key} opens a panel of all {len(pair)}"
        )
    if len(pair) != 2:
        return "mark two runs with space (or one, and put the cursor on the other), then press c"
    return None


def rename_problem(value: str, name: str, existing: set[str]) -> str | None:
    """Why the rename dialog's `value` cannot be `name`'s new name, or None."""
    if not value:
        return "a name is needed"
    if value != name and value in existing:
        return f"a run named '{value}' exists"
    return None


def tag_value(row: RunListing) -> str:
    """The re-tag dialog's starting value: `FAMILY, TIER` as the run has them (either may be empty)."""
    return f"{row.get('family') or ''}, {row.get('tier') or ''}"


def first_seen(
    seen: dict[str, tuple[float, int]], rows: Iterable[RunListing], now: float
) -> dict[str, tuple[float, int]]:
    """When each run in progress was first listed so, and its episodes done then (its rate's start): kept from
    `seen`, `now` for a run newly in progress; a run no longer in progress is forgotten."""
    running = {r["name"]: r["done"] for r in rows if r["status"] == "running"}
    return {name: seen.get(name, (now, done)) for name, done in running.items()}


def rate(seen: tuple[float, int] | None, done: int, now: float) -> float | None:
    """Episodes a second of a run in progress since it was first seen so (`seen`: when, and its done then); None
    before one finished."""
    if seen is None:
        return None
    elapsed, finished = now - seen[0], done - seen[1]
    return finished / elapsed if elapsed > 0 and finished > 0 else None
