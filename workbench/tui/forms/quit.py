"""What quitting interrupts, said in the quit dialog: the runs in progress by name, and how many of a campaign's runs
are queued on their lanes (registered, waiting their turn: quitting means they are not started), with how each is
resumed."""

from __future__ import annotations

from collections.abc import Sequence


def quit_question(running: Sequence[str], queued: int, campaigns: Sequence[str]) -> str:
    """`running`: the runs in progress; `queued`: the campaigns' runs waiting their turn; `campaigns`: the campaigns
    under way (started again, each resumes where it stopped)."""
    parts = []
    if running:
        parts.append(f"{', '.join(running)} {'is' if len(running) == 1 else 'are'} running")
    if queued:
        parts.append(f"{queued} queued run{'' if queued == 1 else 's'} will not start")
    said = "; ".join(parts) or "Nothing is running"
    resume = "resume a run with R on the runs list"
    if campaigns:
        names = ", ".join(f"'{name}'" for name in campaigns)
        resume += f", a campaign ({names}) by starting it again"
    return f"{said}. Quit and interrupt (finished trajectories are kept; {resume})?"
