"""Audit mode in the TUI: verdicts and label edits go to the store the batch `audit` commands read; each item
shows its own latest verdict, an untouched check stays unassessed, the sheet shows the edits, fields never trap."""

from __future__ import annotations

from textual.widgets import DataTable, Input
from tui_support import make_app

from sandbox.datasets import open_dataset
from storage import Store
from workbench.service import audit as audit_layer
from workbench.tui.screens.audit import AuditScreen, CheckState
from workbench.tui.screens.dialogs import ConfirmModal

CHECKS = ("question_ok", "gold_supported", "labels_accurate")


async def _open(pilot, cache, tmp_path):
    corpus, _ = open_dataset("builtin", cache)
    pilot.app.push_screen(AuditScreen(corpus, tmp_path / "store.sqlite", "ana", dataset="builtin"))
    await pilot.pause()
    await pilot.pause()
    return corpus


def _checks(screen) -> tuple:
    return tuple(screen.query_one(f"#check-{k}", CheckState).value for k in CHECKS)


def _stored(tmp_path, corpus) -> dict:
    store = Store(tmp_path / "store.sqlite", readonly=True)
    try:
        return {
            i: (v["verdict"], v["note"], tuple(v[k] for k in CHECKS))
            for i, v in store.verdicts(corpus.fingerprint).items()
        }
    finally:
        store.close()


async def _goto(pilot, screen, item_id: str) -> None:
    table = screen.query_one("#audit-items", DataTable)
    table.move_cursor(row=table.get_row_index(item_id))
    for _ in range(4):
        await pilot.pause()
    assert screen.current == item_id


async def test_verdict_and_label_edit_are_stored(tmp_path, builtin_cache):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        corpus = await _open(pilot, builtin_cache, tmp_path)
        screen = app.screen
        first = corpus.items[0].id
        assert screen.current == first
        assert str(screen.query_one("#audit-title").render()).startswith(" Audit · builtin · 0 of 60 items reviewed")
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


async def test_each_item_shows_its_own_verdict_and_an_untouched_check_is_not_assessed(tmp_path, builtin_cache):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        corpus = await _open(pilot, builtin_cache, tmp_path)
        screen = app.screen
        assert screen.current == "st_0001" and _checks(screen) == (None, None, None)
        await pilot.press("1", "2", "3")  # tick all three from the list
        assert _checks(screen) == (True, True, True)
        await pilot.press("p")
        await pilot.pause()
        await pilot.press("down")
        await pilot.pause()
        await pilot.pause()
        assert screen.current == "st_0002"
        assert _checks(screen) == (None, None, None) and screen.query_one("#audit-note", Input).value == ""
        await pilot.press("2", "2")  # a check can be assessed as failed: ? → ✓ → ✗
        await pilot.press("x")
        await pilot.pause()
        await _goto(pilot, screen, "mt_0002")
        await pilot.press("f")  # no box touched
        await pilot.pause()
        assert _stored(tmp_path, corpus) == {
            "st_0001": ("pass", "", (1, 1, 1)),
            "st_0002": ("remove", "", (None, 0, None)),
            "mt_0002": ("flag", "", (None, None, None)),
        }
        await _goto(pilot, screen, "st_0001")  # reopening shows what was recorded
        assert _checks(screen) == (True, True, True)
        assert "verdict: pass by ana" in str(screen.query_one("#audit-status").render())
        assert str(screen.query_one("#audit-items", DataTable).get_row("st_0001")[2]) == "pass"
        assert "3 of 60 items reviewed" in str(screen.query_one("#audit-title").render())


async def test_the_sheet_shows_label_edits_reclassify_toggles_and_undo_is_kept(tmp_path, builtin_cache):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        corpus = await _open(pilot, builtin_cache, tmp_path)
        screen = app.screen
        await _goto(pilot, screen, "mt_0002")
        before = audit_layer.evidence(corpus, "mt_0002")["labels"]
        second = before[1]
        other = "supporting" if second["relevance"] == "direct" else "direct"
        await pilot.press("right_square_bracket", "c")
        await pilot.pause()
        assert screen.evidence["labels"][1]["relevance"] == other  # the sheet shows the edit
        assert "re-classified (was" in str(screen.query(".audit-label")[1].render())
        await pilot.press("c")  # the toggle goes from what the label is now: back to the release's relevance
        await pilot.pause()
        assert screen.evidence["labels"][1]["relevance"] == second["relevance"]
        await pilot.press("delete")
        await pilot.pause()
        await pilot.pause()
        store = Store(tmp_path / "store.sqlite", readonly=True)
        edits = store.label_edits(corpus.fingerprint, "mt_0002")
        assert [(e["action"], e["relevance"]) for e in edits] == [
            ("reclassify", other),
            ("reclassify", second["relevance"]),
            ("remove", None),
        ]
        shown = [(lab["arxiv_id"], lab["label"]) for lab in screen.evidence["labels"]]
        assert (second["arxiv_id"], second["label"]) not in shown and len(shown) == len(before) - 1
        assert len(screen.query(".audit-label")) == len(before) - 1
        assert screen.evidence == audit_layer.evidence(corpus, "mt_0002", store)  # what `audit show` prints
        await pilot.press("u")  # undo the removal: an edit row of its own
        await pilot.pause()
        await pilot.pause()
        assert [(lab["arxiv_id"], lab["label"]) for lab in screen.evidence["labels"]] == [
            (lab["arxiv_id"], lab["label"]) for lab in before
        ]
        assert [e["action"] for e in store.label_edits(corpus.fingerprint, "mt_0002")] == [
            "reclassify",
            "reclassify",
            "remove",
            "undo",
        ]
        assert "undone by ana" in str(screen.query_one("#audit-edits").render())
        store.close()
        # the selected label stands out on the sheet
        selected = screen.query(".audit-label.-selected")
        assert len(selected) == 1 and str(selected[0].render()).startswith(f"▶ [{screen.label_index + 1}]")


async def test_an_added_label_is_checked_before_it_is_stored(tmp_path, builtin_cache):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        corpus = await _open(pilot, builtin_cache, tmp_path)
        screen = app.screen
        await pilot.press("a")
        assert screen.focused is screen.query_one("#audit-add", Input)
        await pilot.press(*"9999.99999 | no such section | direct", "enter")
        await pilot.pause()
        message = screen.query_one("#audit-message")
        assert "is not a paper of st_0001's neighbourhood" in str(message.render()) and message.has_class("-error")
        assert not (tmp_path / "store.sqlite").exists() or not Store(tmp_path / "store.sqlite").label_edits(
            corpus.fingerprint
        )
        gold = corpus.item("st_0001").gold_arxiv_ids[0]
        header = corpus.headers(gold)[0][0]
        screen.query_one("#audit-add", Input).value = f"{gold} | {header} | supporting"
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        added = screen.evidence["labels"][-1]
        assert (added["arxiv_id"], added["label"], added["edit"]["action"]) == (gold, header, "added")
        assert screen.label_index == len(screen.evidence["labels"]) - 1


async def test_the_note_is_a_draft_of_its_item_and_escape_leaves_a_field_first(tmp_path, builtin_cache):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        corpus = await _open(pilot, builtin_cache, tmp_path)
        screen = app.screen
        table = screen.query_one("#audit-items", DataTable)
        await pilot.press("n", *"pfx ok")  # letters type in the note, they record nothing
        note = screen.query_one("#audit-note", Input)
        assert note.value == "pfx ok" and not (tmp_path / "store.sqlite").exists()
        await pilot.press("escape")  # back to the list, still in audit mode, the note kept as a draft
        assert app.screen is screen and screen.focused is table
        assert "not recorded" in str(screen.query_one("#audit-status").render())
        await pilot.press("down")
        await pilot.pause()
        await pilot.pause()
        assert screen.current == "st_0002" and note.value == ""  # the note belongs to st_0001
        await pilot.press("up")
        await pilot.pause()
        await pilot.pause()
        assert note.value == "pfx ok"
        await pilot.press("n", "end", *" indeed", "f3")  # F3 records a flag from the note field
        await pilot.pause()
        assert _stored(tmp_path, corpus) == {"st_0001": ("flag", "pfx ok indeed", (None, None, None))}
        assert screen.drafts == {}
        await pilot.press("down")
        await pilot.pause()
        await pilot.pause()
        await pilot.press("n", *"half", "escape", "escape")  # leaving with a draft asks
        await pilot.pause()
        assert isinstance(app.screen, ConfirmModal)
        await pilot.press("n")
        await pilot.pause()
        assert app.screen is screen
        # the sheet starts from the top for every item
        sheet = screen.query_one("#audit-sheet")
        sheet.scroll_end(animate=False)
        await pilot.pause()
        assert sheet.scroll_y > 0
        await pilot.press("down")
        await pilot.pause()
        await pilot.pause()
        assert sheet.scroll_y == 0


def test_audit_snapshot(snap_compare, tmp_path, builtin_cache):
    async def run_before(pilot):
        await _open(pilot, builtin_cache, tmp_path)
        await pilot.press("1", "2", "2")

    assert snap_compare(make_app(), terminal_size=(120, 36), run_before=run_before)
