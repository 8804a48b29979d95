"""The cells every view prints: a count with its noun, a percentage, a number, points, and `—` where nothing was
measured. One helper each, so the CLI and the TUI word a value the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox.hub import Fetching

CsvCell = str | int | float | bool | None
"""One cell of a CSV table the views lay out: a number, a word, a flag, or empty (None)."""

NOT_MEASURED = "—"  # no value: nothing measured (a scripted agent's tokens), or no denominator; never printed as 0


def shell_word(text: str) -> str:
    """`text` as one word of a suggested command line, quoted where a POSIX shell needs it (`'bad name/x'`,
    `'it'"'"'s'`), as typed where it does not (`heur-s0`): every hint that names a run in a command says it
    through here, so the command can be pasted as it is."""
    import shlex

    return shlex.quote(text)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 paper`, `0 papers`, `2 papers`: a count with its noun in the right number (`plural` when not noun + s)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal (`42.0%`)."""
    return NOT_MEASURED if value is None else f"{100 * value:.1f}%"


def num(value: float | None, digits: int = 2) -> str:
    """A mean with thousands separators (`1,234.50`); tokens are printed with `digits=0`."""
    return NOT_MEASURED if value is None else f"{value:,.{digits}f}"


def frac(counts: list | None) -> str:
    """A ratio's [numerator, denominator] as `3/5` ('' when there is none: the value stands alone)."""
    return "" if not counts else f"{counts[0]:g}/{counts[1]}"


def points(value: float | None) -> str:
    """A difference of two shares in percentage points, signed (`+4.2 pts`)."""
    return NOT_MEASURED if value is None else f"{value * 100:+.1f} pts"


def sig(value: float | None) -> str:
    """Three significant digits (`0.0123`): p-values, accuracy per dollar or per million tokens."""
    return NOT_MEASURED if value is None else f"{value:.3g}"


def fraction(value: float | None) -> str:
    """An accuracy as a fraction with three decimals (`0.417`), as the run lists and the live progress show it."""
    return NOT_MEASURED if value is None else f"{value:.3f}"


def usd(value: float | None, digits: int = 2) -> str:
    """An amount of money (`$0.12`); `—` when nothing was spent that could be measured."""
    return NOT_MEASURED if value is None else f"${value:.{digits}f}"


TIER_SHORT = {"closed-frontier": "closed", "open-frontier": "open", "compute-efficient": "efficient"}


def duration(seconds: float | None) -> str:
    """`42s`, `3m05s`, `2h07m`; `—` when unknown (an ETA, an elapsed time)."""
    if seconds is None:
        return "—"
    seconds = round(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    if seconds >= 60:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds}s"


def family_cell(family: str | None) -> str:
    """A run's model family, `—` when it has none (a scripted agent nobody tagged)."""
    return family or NOT_MEASURED


def tier_cell(tier: str | None, short: bool = False) -> str:
    """A capability tier as stored (`closed-frontier`), or in a narrow column `closed` / `open` / `efficient`."""
    if not tier:
        return NOT_MEASURED
    return TIER_SHORT.get(tier, tier) if short else tier


def lineage_cell(family: str | None, tier: str | None) -> str:
    """`GPT · closed` for the runs lists: family and short tier, `—` when neither is known."""
    if not family and not tier:
        return NOT_MEASURED
    return f"{family_cell(family)} · {tier_cell(tier, short=True)}"


def dataset_cell(dataset: str, repo: str | None = None, revision: str | None = None) -> str:
    """A run's dataset with the Hub commit it was fetched at: `hf:nlpai-lab/agenthop @ 5a6df720540c`; a run on a
    folder that was also fetched from the Hub names the repository too; without a Hub record, the dataset alone."""
    if not repo or not revision:
        return dataset
    if dataset.split("@", 1)[0] == f"hf:{repo}":
        return f"{dataset} @ {revision[:12]}" if "@" not in dataset else f"{dataset} ({revision[:12]})"
    return f"{dataset} (hf:{repo} @ {revision[:12]})"


def fetch_line(event: Fetching) -> str:
    """A Hub release's download in one line: `hf:nlpai-lab/agenthop: 2/4 files fetched (120.5 MB of 330.1 MB)`."""
    return (
        f"{event.spec}: {event.files_done}/{event.files_total} files fetched "
        f"({megabytes(event.bytes_done)} of {megabytes(event.bytes_total)})"
    )


def megabytes(n: int) -> str:
    """A size as the Hub shows sizes (decimal): `12.3 MB`."""
    return f"{n / 1e6:.1f} MB"


def held_trajectories(finished: int, unfinished: int) -> str:
    """A run's stored trajectories in words, the unfinished ones an interrupted run holds counted too: `3
    trajectories, 1 of them unfinished`."""
    return counted(finished + unfinished, "trajectory", "trajectories") + (
        f", {unfinished} of them unfinished" if unfinished else ""
    )
