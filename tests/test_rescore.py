"""Stored runs under older label rules: their section-recall flags are recomputed from their stored reads, and
reports say which label resolution their numbers were computed under (docs/protocol.md "Section labels")."""

import asyncio
import json
import shutil
import sqlite3
import sys

from sandbox.corpus import open_release
from sandbox.datasets import release_key
from sandbox.runner import Runner, RunSpec
from storage import Store
from tests.conftest import write_release
from tests.test_label_release import LABELS, NODES, PAPERS, QA, SEED
from tests.textual_private import messages
from workbench.cli import main
from workbench.service import paths


def _release(root):
    graphs = [{"sample_id": q["id"], "nodes": NODES, "edges": {SEED: [*NODES][1:]}} for q in QA]
    return write_release(root, QA, graphs, PAPERS, LABELS)


def _oracle_run(root, db, **spec):
    corpus, _ = open_release(root, paths.cache_dir())
    try:
        run = RunSpec(name="o", dataset=release_key(root), agent="oracle", **spec)
        asyncio.run(Runner(run, corpus, Store(db)).run())
    finally:
        corpus.close()


def _as_if_stored_under_old_rules(db):
    """What the unversioned rules stored: no resolution version, and the inline labels unresolved (no credit)."""
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE runs SET label_resolution = NULL")
        conn.execute("UPDATE trajectories SET section_recall = 0, section_recall_any = 0, section_reachable = 0")


def _report(db, capsys, fmt="json"):
    rc = main(["--batch", "report", "o", "--db", str(db), "--format", fmt])
    out = capsys.readouterr()
    assert rc == 0
    return out


def test_a_report_recomputes_an_old_runs_flags_from_its_reads(tmp_path, capsys):
    root, db = _release(tmp_path / "rel"), tmp_path / "s.sqlite"
    _oracle_run(root, db)
    _as_if_stored_under_old_rules(db)
    out = _report(db, capsys)
    report = json.loads(out.out)
    assert "recomputed section recall of run 'o' (3 trajectories)" in out.err and "(it was 1)" in out.err
    assert report["axes"]["search"]["section_recall"]["all"] == 1.0
    assert report["label_resolution"] == {"version": "2", "current": "2"}
    assert report["section_labels"]["capped_items"] == [] and report["section_labels"]["unresolved"] == 2
    assert Store(db, readonly=True).run("o")["label_resolution"] == "2"
    again = _report(db, capsys)
    assert "recomputed" not in again.err  # once only


def test_a_run_whose_dataset_is_gone_keeps_its_flags_and_says_under_which_rules(tmp_path, capsys):
    root, db = _release(tmp_path / "rel"), tmp_path / "s.sqlite"
    _oracle_run(root, db)
    _as_if_stored_under_old_rules(db)
    shutil.rmtree(root)
    shutil.rmtree(paths.cache_dir())
    out = _report(db, capsys)
    report = json.loads(out.out)
    assert "keeps section recall under label resolution 1 (current: 2)" in out.err
    assert report["label_resolution"] == {"version": "1", "current": "2"}
    assert report["axes"]["search"]["section_recall"]["all"] == 0.0
    assert sorted(report["section_labels"]["capped_items"]) == ["mt_0001", "st_0001", "st_0002"]
    table = " ".join(_report(db, capsys, "table").out.split())  # the console wraps long lines
    assert "section recall computed under label resolution 1 (the current rules are version 2" in table
    assert "section recall capped on 3 item(s): mt_0001, st_0001, st_0002" in table


def test_resuming_an_old_run_recomputes_its_finished_trajectories(tmp_path):
    root, db = _release(tmp_path / "rel"), tmp_path / "s.sqlite"
    _oracle_run(root, db, limit=1)
    _as_if_stored_under_old_rules(db)
    _oracle_run(root, db)  # the same run, now over every item: one trajectory old, two new
    store = Store(db, readonly=True)
    run = store.run("o")
    assert run["label_resolution"] == "2"
    assert [t["section_recall"] for t in store.trajectories(run["id"])] == [1, 1, 1]


def test_a_new_run_records_the_current_resolution(tmp_path, capsys):
    root, db = _release(tmp_path / "rel"), tmp_path / "s.sqlite"
    _oracle_run(root, db)
    assert Store(db, readonly=True).run("o")["label_resolution"] == "2"
    out = _report(db, capsys, "table")
    assert "recomputed" not in out.err
    assert (
        "section recall computed under label resolution 2; 2 label(s) of its items resolved to no section "
        "(0 direct); section recall capped on 0 item(s)"
    ) in " ".join(out.out.split())


def test_compare_and_panel_warn_when_two_runs_were_computed_under_different_rules(tmp_path, capsys):
    root, db = _release(tmp_path / "rel"), tmp_path / "s.sqlite"
    _oracle_run(root, db)
    with sqlite3.connect(db) as conn:  # a second run under the old rules, as if made by an older workbench
        conn.execute(
            "INSERT INTO runs (name, kind, agent, dataset, dataset_fingerprint, caps, config, identity, "
            "version, created_at) SELECT 'old', kind, agent, '/nowhere', dataset_fingerprint, caps, config, "
            "'{}', version, created_at FROM runs WHERE name = 'o'"
        )
    assert main(["--batch", "compare", "o", "old", "--db", str(db), "--format", "json"]) == 0
    out = capsys.readouterr()
    assert "keeps section recall under label resolution 1" in out.err
    assert any(
        "different label resolutions (version 1: old | version 2: o)" in w for w in json.loads(out.out)["warnings"]
    )
    assert main(["--batch", "report", "--panel", "o", "old", "--db", str(db), "--format", "json"]) == 0
    assert any("different label resolutions" in w for w in json.loads(capsys.readouterr().out)["warnings"])


def test_the_workbench_brings_old_runs_under_the_current_rules_when_it_opens(tmp_path):
    """The TUI shows the same numbers as `report`: an old run's flags are recomputed when the app opens the store,
    before its screens compare it with new runs, and a note says so."""
    from workbench.tui.app import WorkbenchApp

    root, db = _release(tmp_path / "rel"), tmp_path / "s.sqlite"
    _oracle_run(root, db)
    _as_if_stored_under_old_rules(db)
    app = WorkbenchApp(
        store_path=db,
        cache_dir=paths.cache_dir(),
        config_path=tmp_path / "c.toml",
        state_path=tmp_path / "state.toml",
        theme="agenthop-dark",
        home=False,
    )

    async def open_app() -> list[str]:
        async with app.run_test() as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            return messages(app)

    notes = asyncio.run(open_app())
    assert any("recomputed section recall of run 'o' (3 trajectories)" in n for n in notes)
    with Store(db, readonly=True) as store:
        run = store.run("o")
        assert run["label_resolution"] == "2"
        assert all(t["section_recall"] for t in store.trajectories(run["id"]))


# the databases sqlite3 opens while a test records them (an audit hook): the recording list, empty outside
_RECORDING: list[list[str]] = []


def _record_connect(event: str, args: tuple) -> None:
    if event == "sqlite3.connect" and _RECORDING:
        _RECORDING[-1].append(str(args[0]))


def _connects_during(action) -> list[str]:
    """What `action` asked sqlite3 to open, as CPython's audit event reports it: `file:…?mode=ro` is read-only."""
    if _record_connect not in _HOOKED:
        sys.addaudithook(_record_connect)  # hooks cannot be removed: one, recording only inside this function
        _HOOKED.append(_record_connect)
    opened: list[str] = []
    _RECORDING.append(opened)
    try:
        action()
        return opened
    finally:
        _RECORDING.pop()


_HOOKED: list = []


def test_a_store_whose_runs_are_all_current_is_only_ever_opened_read_only(tmp_path):
    """What the TUI checks at every start: with every run current, the store is read, never opened for writing."""
    from workbench.service.relabel import bring_current, run_corpus

    root, db = _release(tmp_path / "rel"), tmp_path / "s.sqlite"
    _oracle_run(root, db)
    check = lambda: bring_current(db, None, lambda run: run_corpus(run, paths.cache_dir()))  # noqa: E731
    opened = _connects_during(check)
    assert opened and all(uri.endswith("?mode=ro") for uri in opened if str(db) in uri), opened
    _as_if_stored_under_old_rules(db)  # a stale run: now it is opened for writing, and brought current
    opened = _connects_during(check)
    assert any(str(db) in uri and "mode=ro" not in uri for uri in opened), opened
    assert Store(db, readonly=True).run("o")["label_resolution"] == "2"
