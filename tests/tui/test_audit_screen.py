"""Audit mode in the TUI: verdicts and label edits go to the store the batch `audit` commands read."""
from __future__ import annotations

from sandbox.datasets import open_dataset
from storage import Store
from textual.widgets import Input
from tui_support import make_app
from workbench import audit as audit_layer
from workbench.tui.audit import AuditScreen


async def _open(pilot, cache, tmp_path):
    corpus, _ = open_dataset("builtin", cache)
    pilot.app.push_screen(AuditScreen(corpus, tmp_path / "store.sqlite", "ana"))
    await pilot.pause()
    return corpus


async def test_verdict_and_label_edit_are_stored(tmp_path, builtin_cache):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        corpus = await _open(pilot, builtin_cache, tmp_path)
        screen = app.screen
        first = corpus.items[0].id
        assert screen.current == first
        screen.query_one("#audit-note", Input).value = "wording [is] odd"
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("right_square_bracket", "c")
        await pilot.pause()
    store = Store(tmp_path / "store.sqlite", readonly=True)
    verdict = store.verdicts(corpus.fingerprint)[first]
    assert (verdict["verdict"], verdict["note"], verdict["reviewer"]) == ("flag", "wording [is] odd", "ana")
    edit = store.label_edits(corpus.fingerprint)[0]
    second = audit_layer.evidence(corpus, first)["labels"][1]
    assert edit["action"] == "reclassify" and edit["section"] == second["label"]
    assert edit["relevance"] == ("supporting" if second["relevance"] == "direct" else "direct")


def test_audit_snapshot(snap_compare, tmp_path, builtin_cache):
    async def run_before(pilot):
        await _open(pilot, builtin_cache, tmp_path)

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=run_before)
