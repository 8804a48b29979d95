"""The hop of each read from the seed: recorded by the episode over a release built by hand (not synth), where the
distances are known by construction, stored in steps.hop, backfilled for runs stored before, and reported."""

import asyncio
import json
import shutil
import sqlite3

from sandbox.corpus import open_release
from sandbox.datasets import release_key
from sandbox.records import Caps
from sandbox.runner import Runner, RunSpec
from storage import Store
from tests.conftest import write_release
from tests.scripted import ScriptAgent, turn
from workbench.cli import main
from workbench.service import paths

# S cites A, A cites B, B cites C and back to S; U cites A, but nothing cites U: from the seed S, A is 1 hop away,
# B 2, C 3, and U is unreachable (only search finds it). The item has depth 2 and its gold paper is B.
S, A, B, C, U = ("1" * 40, "2" * 40, "3" * 40, "4" * 40, "5" * 40)
ARX = {S: "2301.00001", A: "2201.00001", B: "2101.00001", C: "2001.00001", U: "1901.00001"}
NAMES = {S: "Seed", A: "Bridge", B: "Gold", C: "Beyond", U: "Island"}
HOPS = {S: 0, A: 1, B: 2, C: 3, U: None}

QA = [
    {
        "id": "st_0001",
        "question_type": "single-target",
        "depth": 2,
        "question": "What does the gold paper do?",
        "options": ["right", "wrong a", "wrong b", "wrong c"],
        "correct_index": 0,
        "seed_paper_id": S,
        "gold_paper_ids": [B],
        "bridge_paper_ids": [A],
    }
]
GRAPHS = [
    {
        "sample_id": "st_0001",
        "nodes": {
            p: {"title": NAMES[p], "arxivId": ARX[p], "abstract": f"{NAMES[p]} abstract", "year": 2020} for p in ARX
        },
        "edges": {S: [A], A: [B], B: [C, S], U: [A]},
    }
]
PAPERS = [
    {
        "arxiv_id": ARX[p],
        "title": NAMES[p],
        "sections": [{"header": "1 Introduction", "text": f"{NAMES[p]}."}, {"header": "2 Method", "text": "How."}],
    }
    for p in ARX
]


def _read(paper, section="A"):
    return turn(("read_section", {"paper_id": paper, "section": section}))


SCRIPT = [
    turn(("read_section", {"paper_id": S, "section": "A"}), ("get_paper_info", {"paper_id": A})),
    _read(A),
    _read(B),
    _read(C),
    _read(U),
    _read(A, "9 Nonexistent"),  # executed, but no section text: not a read
    _read(B, "B"),  # the gold paper again, another section
    turn(("submit_answer", {"answer": "A", "reasoning": "read it"})),
]


def _run(tmp_path, script=SCRIPT):
    root = write_release(tmp_path / "rel", QA, GRAPHS, PAPERS, [])
    db = tmp_path / "s.sqlite"
    corpus, _ = open_release(root, paths.cache_dir())
    try:
        spec = RunSpec(name="h", dataset=release_key(root), agent="script", caps=Caps(budget=60), workers=1)
        with Store(db) as store:  # closed: the WAL folded into the file, as a finished run leaves it
            asyncio.run(Runner(spec, corpus, store, factory=lambda item, r, a: ScriptAgent(script)).run())
    finally:
        corpus.close()
    return root, db


def _tool_steps(db):
    with Store(db, readonly=True) as store:
        run = store.run("h")
        (traj,) = store.trajectories(run["id"])
        return [s for s in store.steps(traj["id"]) if s["kind"] == "tool"]


def _report(db, capsys, fmt="json"):
    assert main(["--batch", "report", "h", "--db", str(db), "--format", fmt]) == 0
    return capsys.readouterr()


def _table(db, capsys) -> str:
    """The report's text table with its rules and the console's wrapping taken out."""
    return " ".join(_report(db, capsys, "table").out.replace("│", " ").split())


def test_every_read_stores_its_hop_from_the_seed_and_nothing_else_has_one(tmp_path):
    _, db = _run(tmp_path)
    steps = _tool_steps(db)
    got = [(s["tool_name"], s["paper_id"], s["status"], s["hop"]) for s in steps]
    assert got == [
        ("read_section", S, "ok", 0),
        ("get_paper_info", A, "ok", None),
        ("read_section", A, "ok", 1),
        ("read_section", B, "ok", 2),
        ("read_section", C, "ok", 3),
        ("read_section", U, "ok", None),  # read, but no citation path from the seed: unreachable
        ("read_section", A, "unresolved", None),  # not a read
        ("read_section", B, "ok", 2),
        ("submit_answer", None, "ok", None),
    ]
    with Store(db, readonly=True) as store:
        assert store.run("h")["hop_rule"] == "1"  # a new run's hops are measured


def test_the_report_counts_reads_by_hop_gold_apart_and_beyond_the_depth(tmp_path, capsys):
    _, db = _run(tmp_path)
    hops = json.loads(_report(db, capsys).out)["read_hops"]
    assert hops["measured"] and hops["reads"] == 6
    assert hops["by_hop"] == {"0": 1, "1": 1, "2": 2, "3+": 1, "unreachable": 1}
    assert hops["mean_hop"] == {"gold": 2.0, "non_gold": (0 + 1 + 3) / 3}  # unreachable U is in no mean
    assert hops["counts"] == {"mean_hop": {"gold": [4, 2], "non_gold": [4, 3]}, "beyond_depth": [2, 6]}
    assert hops["beyond_depth"] == 2 / 6  # C (3 > depth 2) and U (unreachable)
    table = _table(db, capsys)
    for text in (
        "hop 0 (the seed) 1 (16.7%)",
        "hop 2 2 (33.3%)",
        "hop 3 or more 1 (16.7%)",
        "unreachable (no citation path) 1 (16.7%)",
        "mean hop, gold reads 2.00 (over 2 reachable reads)",
        "mean hop, non-gold reads 1.33 (over 3 reachable reads)",
        "beyond the item's depth 33.3% (2/6)",
    ):
        assert text in table


def _as_if_stored_before_hops(db):
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE steps SET hop = NULL")
        conn.execute("UPDATE runs SET hop_rule = NULL")


def test_a_run_stored_before_hops_were_recorded_gets_them_from_its_stored_reads(tmp_path, capsys):
    _, db = _run(tmp_path)
    new = [s["hop"] for s in _tool_steps(db)]
    fresh = json.loads(_report(db, capsys).out)["read_hops"]
    _as_if_stored_before_hops(db)
    out = _report(db, capsys)
    assert "measured the hop from the seed of 6 stored read(s) of run 'h'" in out.err
    assert json.loads(out.out)["read_hops"] == fresh
    assert [s["hop"] for s in _tool_steps(db)] == new
    assert "measured the hop" not in _report(db, capsys).err  # once only


def test_a_run_whose_hops_cannot_be_measured_says_so_instead_of_zero(tmp_path, capsys):
    root, db = _run(tmp_path)
    _as_if_stored_before_hops(db)
    shutil.rmtree(root)
    shutil.rmtree(paths.cache_dir())
    out = _report(db, capsys)
    assert "run 'h' has no hop distances for its reads (not measured, —)" in out.err
    hops = json.loads(out.out)["read_hops"]
    assert hops == {
        "measured": False,
        "reads": 6,
        "by_hop": None,
        "mean_hop": None,
        "beyond_depth": None,
        "counts": None,
    }
    table = _table(db, capsys)
    assert "hop from the seed — (not measured: 6 reads stored before hops were recorded" in table


def test_resuming_a_run_stored_before_hops_measures_its_finished_reads(tmp_path):
    root, db = _run(tmp_path)
    _as_if_stored_before_hops(db)
    corpus, _ = open_release(root, paths.cache_dir())
    try:  # the same run again: nothing left to do, but its stored reads get their hops
        spec = RunSpec(name="h", dataset=release_key(root), agent="script", caps=Caps(budget=60), workers=1)
        asyncio.run(Runner(spec, corpus, Store(db), factory=lambda item, r, a: ScriptAgent(SCRIPT)).run())
    finally:
        corpus.close()
    assert [s["hop"] for s in _tool_steps(db) if s["tool_name"] == "read_section"] == [0, 1, 2, 3, None, None, 2]
    with Store(db, readonly=True) as store:
        assert store.run("h")["hop_rule"] == "1"


def test_a_store_from_before_migration_10_gains_the_hop_column(tmp_path):
    db = tmp_path / "old.sqlite"
    from storage.schema import MIGRATIONS

    with sqlite3.connect(db) as conn:  # the schema as migration 9 left it
        for statement in ";".join(MIGRATIONS[:9]).split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("PRAGMA user_version = 9")
    with Store(db) as store:
        assert "hop" in {r[1] for r in store.conn.execute("PRAGMA table_info(steps)")}
        assert "hop_rule" in {r[1] for r in store.conn.execute("PRAGMA table_info(runs)")}


def test_the_stepper_shows_the_hop_of_each_read_step(tmp_path):
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.screens.stepper import StepperScreen

    _, db = _run(tmp_path)
    app = WorkbenchApp(
        store_path=db,
        cache_dir=paths.cache_dir(),
        config_path=tmp_path / "c.toml",
        state_path=tmp_path / "state.toml",
        theme="agenthop-dark",
        home=False,
    )

    async def read_headers() -> list[str]:
        async with app.run_test(size=(160, 50)) as pilot:
            run = app.store.run("h")
            (traj,) = app.store.trajectories(run["id"])
            app.push_screen(StepperScreen(run, [traj["id"]]))
            await app.workers.wait_for_complete()
            await pilot.pause()
            return [
                e.plain_header for e in app.screen.entries if e.kind == "tool" and "read_section(" in e.plain_header
            ]

    reads = asyncio.run(read_headers())
    assert [h.rsplit("  · ", 1)[-1] for h in reads] == [
        "hop 0",
        "hop 1",
        "hop 2",
        "hop 3",
        "unreachable",
        "unresolved",
        "hop 2",
    ]
    assert "★ gold  · hop 2" in reads[2]  # the gold paper, two hops from the seed
    assert "hop" not in reads[5]  # an executed call that read nothing has no hop


def test_a_read_s_hop_reads_dash_when_unmeasured_and_is_hidden_from_a_player_before_the_reveal():
    from workbench.tui.widgets.transcript import build_entries

    read = {
        "kind": "tool",
        "turn": 1,
        "idx": 0,
        "tool_name": "read_section",
        "status": "ok",
        "delivered": 1,
        "paper_id": C,
        "arxiv_id": ARX[C],
        "section_index": 0,
        "hop": None,
        "tool_args": {"paper_id": C},
    }
    header = lambda **kw: build_entries([read], **kw)[-1].plain_header  # noqa: E731
    assert header().endswith("  · unreachable")
    assert header(hops_measured=False).endswith("  · hop —")  # stored before hops were recorded: not measured
    assert "hop" not in header(hops_measured=None) and "unreachable" not in header(hops_measured=None)
