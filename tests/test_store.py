"""The results store: forward migrations, refusing newer files, WAL, deduplicated texts, delete and rename."""

import sqlite3
from pathlib import Path

import pytest

from storage import Store, StoreError
from storage.schema import MIGRATIONS, SCHEMA_VERSION, migrate
from tests.cli_inprocess import batch


def test_a_version_1_store_migrates_forward(tmp_path):
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0].split(";"):
        if statement.strip():
            con.execute(statement)
    con.execute("PRAGMA user_version = 1")
    con.execute(
        "INSERT INTO runs (name, agent, dataset, dataset_fingerprint, caps, config, identity, version, created_at)"
        " VALUES ('old', 'oracle', 'builtin', 'fp', '{}', '{}', '{}', '0', 'then')"
    )
    con.close()
    store = Store(path)
    assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert store.run("old")["agent"] == "oracle"
    cols = {r[1] for r in store.conn.execute("PRAGMA table_info(trajectories)")}
    assert "actions" in cols and {"n_gold", "section_reachable"} <= cols
    assert migrate(store.conn) == SCHEMA_VERSION  # idempotent


def test_newer_store_is_refused(tmp_path):
    path = tmp_path / "new.sqlite"
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    with pytest.raises(StoreError, match="newer"):
        Store(path)


def test_not_a_store(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(StoreError):
        Store(path)


def test_wal_and_long_texts_stored_once(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    run_id, existed = store.create_or_resume_run(
        "r",
        {"a": 1},
        {"agent": "x", "dataset": "d", "dataset_fingerprint": "f", "caps": {}, "config": {}, "version": "0"},
    )
    assert not existed
    long_text = "x" * 10_000
    for item in ("i1", "i2"):
        tid = store.begin_trajectory(run_id, item, 0, 0, {})
        store.add_step(
            tid,
            {
                "index": 0,
                "turn": 1,
                "kind": "tool",
                "text": long_text,
                "points_used": 5,
                "points_left": 25,
                "tokens": 0,
                "rejections": 0,
            },
        )
        assert store.steps(tid)[0]["text"] == long_text
    assert store.conn.execute("SELECT COUNT(*) FROM texts").fetchone()[0] == 1
    store.rename_run("r", "r2")
    with pytest.raises(StoreError):
        store.run("r")
    store.delete_run("r2")
    assert store.conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 0


def _finished(store: Store, run: str, fingerprint: str, outcomes: dict[tuple[str, int], bool]) -> None:
    run_id, _ = store.create_or_resume_run(
        run,
        {"run": run},
        {
            "agent": "oracle",
            "dataset": "d",
            "caps": {},
            "dataset_fingerprint": fingerprint,
            "config": {},
            "version": "0",
        },
    )
    for (item, replicate), correct in outcomes.items():
        tid = store.begin_trajectory(run_id, item, replicate, 0, {"kind": "st"})
        store.finish_trajectory(tid, {"correct": int(correct), "termination": "answer", "continues": 0}, final=True)


def test_one_item_across_runs(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    _finished(store, "a", "fp", {("i1", 0): True, ("i2", 0): False, ("i1", 1): False})
    _finished(store, "b", "fp", {("i1", 0): False, ("i2", 0): False})
    _finished(store, "other-data", "fp2", {("i1", 0): True})
    run_id = store.run("b")["id"]
    store.begin_trajectory(run_id, "i3", 0, 0, {})  # half-written: never counted

    rows = store.item_trajectories("fp", "i1")
    assert [(r["run"], r["replicate"], r["correct"]) for r in rows] == [("a", 0, 1), ("a", 1, 0), ("b", 0, 0)]
    assert rows[0]["agent"] == "oracle"
    assert store.item_trajectories("fp", "i3") == []
    # replicate 0 only: run a is right on i1, run b wrong; nobody is right on i2
    assert store.item_outcomes("fp") == {"i1": (1, 2), "i2": (0, 2)}
    assert store.item_outcomes("fp2") == {"i1": (1, 1)}


@pytest.mark.parametrize(
    "content",
    [b"not sqlite at all" * 100, b"", "empty_sqlite", "newer"],
    ids=["junk", "empty_file", "empty_sqlite", "newer"],
)
def test_read_only_open_refuses_what_is_not_a_store(tmp_path, content):
    path = tmp_path / "x.sqlite"
    if content == "empty_sqlite":
        sqlite3.connect(path).execute("CREATE TABLE other (x)").connection.close()
    elif content == "newer":
        con = sqlite3.connect(path)
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        con.close()
    else:
        path.write_bytes(content)
    with pytest.raises(StoreError, match="newer" if content == "newer" else "not a workbench store"):
        Store(path, readonly=True)


def test_read_only_open_of_an_older_store_migrates_it(tmp_path):
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0].split(";"):
        if statement.strip():
            con.execute(statement)
    con.execute("PRAGMA user_version = 1")
    con.close()
    store = Store(path, readonly=True)
    assert store.runs() == [] and store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


@pytest.mark.parametrize("command", [["runs"], ["report", "x"]])
def test_cli_on_a_file_that_is_not_a_store_exits_2(tmp_path, command, capsys):
    for name, content in (("notdb.sqlite", b"hello, not a database\n" * 50), ("empty.sqlite", b"")):
        path = tmp_path / name
        path.write_bytes(content)
        proc = batch(capsys, *command, "--db", str(path))
        assert proc.returncode == 2, proc.stderr
        assert "not a workbench store" in proc.stderr and "Traceback" not in proc.stderr
        assert path.read_bytes() == content  # a read never writes


def test_run_progress_moves_only_with_that_runs_finished_trajectories_and_its_measurement(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    _finished(store, "a", "f", {("i1", 0): True})
    _finished(store, "b", "f", {("i1", 0): False})
    a, b = store.run("a")["id"], store.run("b")["id"]
    first = store.run_progress(a)
    tid_a = store.conn.execute("SELECT id FROM trajectories WHERE run_id = ?", (a,)).fetchone()[0]
    rules = first[3:]
    assert first[:3] == ("created", 1, tid_a)  # the run row's default status; one finished trajectory
    _finished(store, "b", "f", {("i2", 0): True})
    running = store.begin_trajectory(a, "i3", 0, 0, {})  # begun, not finished: not counted
    assert store.run_progress(a) == first and store.run_progress(b)[1] == 2
    store.finish_trajectory(running, {"correct": 1, "termination": "answer", "continues": 0}, final=True)
    assert store.run_progress(a) == ("created", 2, running, *rules)
    store.update_run(a, status="done")
    assert store.run_progress(a) == ("done", 2, running, *rules)
    # hops backfilled (the TUI does it on a thread at start): a screen keyed by the progress recomputes its numbers
    store.set_step_hops(a, [], "backfilled")
    assert store.run_progress(a) == ("done", 2, running, rules[0], "backfilled")


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--agent", "oracle", "--limit", "2", "--quiet"],
        ["rename", "a", "b"],
        ["delete", "a", "--yes"],
        ["audit", "verdict", "st_0001", "--verdict", "pass", "--reviewer", "me"],
    ],
    ids=["run", "rename", "delete", "audit"],
)
def test_every_command_refuses_a_foreign_database_and_leaves_it_untouched(tmp_path, command, capsys):
    """An SQLite database someone else wrote is not ours to add tables to; a directory is not a file."""
    foreign = tmp_path / "other.sqlite"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, amount REAL)")
    con.execute("INSERT INTO invoices (amount) VALUES (9.5)")
    con.commit()
    con.close()
    before = foreign.read_bytes()
    proc = batch(capsys, *command, "--db", str(foreign))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.splitlines()[-1] == (
        f"error: {foreign}: not a workbench store (an SQLite database with other tables: "
        "invoices); nothing was changed: choose another --db"
    )
    assert foreign.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("other")] == ["other.sqlite"]  # no -wal either
    proc = batch(capsys, *command, "--db", str(tmp_path))
    assert proc.returncode == 2 and proc.stderr.splitlines()[-1] == (
        f"error: {tmp_path} is a directory, not a store file (e.g. {tmp_path / 'runs.sqlite'}): choose another --db"
    )


def test_storage_says_what_is_wrong_in_its_own_terms_and_the_cli_words_the_remedy(tmp_path):
    """No CLI flag in a storage message: the store names the remedy, the CLI words it in flags."""
    import re

    from storage import StoreError
    from workbench.cli.errors import user_message

    for path in (Path(__file__).resolve().parents[1] / "storage").glob("*.py"):
        assert not re.findall(r"--(?:db|run|batch)\b", path.read_text()), path.name
    with pytest.raises(StoreError) as exc:
        Store(tmp_path)
    assert exc.value.remedy == "another_store" and user_message(exc.value).endswith(": choose another --db")


def test_a_new_or_empty_file_becomes_a_store(tmp_path):
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    for path in (empty, tmp_path / "new.sqlite"):
        assert Store(path).conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_new_runs_json_columns_are_encoded_once_and_an_object_in_a_plain_column_is_refused_by_name(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    fields = {"agent": "x", "dataset": "d", "dataset_fingerprint": "f", "version": "0", "prompts": "[system]\nhi\n"}
    run_id, _ = store.create_or_resume_run("r", {"a": 1}, {**fields, "caps": {"budget": 3}, "config": '{"k": 1}'})
    stored = store.conn.execute("SELECT caps, config, prompts_text FROM runs WHERE id = ?", (run_id,)).fetchone()
    assert (stored["caps"], stored["config"]) == ('{"budget": 3}', '{"k": 1}')  # JSON text is kept as given
    assert store.conn.execute("SELECT body FROM texts WHERE hash = ?", (stored["prompts_text"],)).fetchone()[0] == (
        "[system]\nhi\n"
    )
    bare, _ = store.create_or_resume_run("bare", {"a": 2}, {k: v for k, v in fields.items() if k != "prompts"})
    assert tuple(store.conn.execute("SELECT caps, config FROM runs WHERE id = ?", (bare,)).fetchone()) == ("{}", "{}")
    with pytest.raises(StoreError, match="column model takes a number or a text, not dict"):
        store.create_or_resume_run("odd", {"a": 3}, {**fields, "model": {"name": "m"}})


def _schema_as_of(path, version: int) -> sqlite3.Connection:
    """A connection to a new file holding the schema as migration `version` left it (autocommit)."""
    con = sqlite3.connect(path, isolation_level=None)
    for number in range(version):
        for statement in MIGRATIONS[number].split(";"):
            if statement.strip():
                con.execute(statement)
    con.execute(f"PRAGMA user_version = {version}")
    return con


def test_steps_written_before_the_rowid_table_survive_its_migration(tmp_path):
    """Migration 16 rebuilds `steps` and `texts` as rowid tables: a version-15 store's steps (their long texts
    among them) come through value for value,
    a trajectory's read back in order through the new key, and a step written again under its index still
    replaces the old one (the key is unique)."""
    path = tmp_path / "v15.sqlite"
    with Store(tmp_path / "source.sqlite") as source:  # steps written by the engine's own writer
        run_id, _ = source.create_or_resume_run(
            "r",
            {"a": 1},
            {"agent": "x", "dataset": "d", "dataset_fingerprint": "f", "caps": {}, "config": {}, "version": "0"},
        )
        ids = [source.begin_trajectory(run_id, item, 0, 0, {}) for item in ("i1", "i2")]
        for turn in range(3):  # interleaved, as episodes in flight write them
            for tid in reversed(ids):
                step = {"index": turn, "turn": turn, "kind": "tool", "text": f"t{turn}-{tid}" + "x" * 300 * turn}
                step |= {"tool_args": {"paper_id": "p", "n": turn}, "usage": None, "hop": turn or None}
                step |= {"points_used": turn, "points_left": 30 - turn, "tokens": 10 * turn, "rejections": 0}
                source.add_steps(tid, [step])
        expected = {tid: [dict(s) for s in source.steps(tid)] for tid in ids}
    con = _schema_as_of(path, 15)
    con.execute("ATTACH ? AS src", (str(tmp_path / "source.sqlite"),))
    for table in ("runs", "trajectories", "texts", "steps"):
        con.execute(f"INSERT INTO {table} SELECT * FROM src.{table}")
    con.execute("DETACH src")
    for table in ("steps", "texts"):
        assert con.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0].endswith("ROWID")
    con.close()
    with Store(path) as store:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        for table in ("steps", "texts"):
            sql = store.conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
            assert "WITHOUT ROWID" not in sql
        assert store.conn.execute("SELECT COUNT(*) FROM texts").fetchone()[0] == 4  # turns 1 and 2, two each
        assert {tid: [dict(s) for s in store.steps(tid)] for tid in ids} == expected
        again = {"index": 0, "turn": 0, "kind": "tool", "text": "again", "points_used": 0, "points_left": 30}
        store.add_steps(ids[0], [{**again, "tokens": 0, "rejections": 0}])
        assert [s["text"] for s in store.steps(ids[0])] == ["again", *[s["text"] for s in expected[ids[0]][1:]]]
        repeated = {**again, "index": 3, "text": expected[ids[1]][2]["text"]}  # a long text stored before
        store.add_steps(ids[0], [{**repeated, "tokens": 0, "rejections": 0}])
        assert store.conn.execute("SELECT COUNT(*) FROM texts").fetchone()[0] == 4  # kept once, by its hash
        assert store.steps(ids[0])[-1]["text"] == repeated["text"]
        assert store.conn.execute("PRAGMA foreign_key_check").fetchall() == []


def test_the_rebuild_gives_the_old_tables_pages_back(tmp_path):
    """Migration 16 copies `steps` and `texts` into new tables; the old ones' pages, a third of a large store, are
    given back to the file once (VACUUM), not left free in it."""
    path = tmp_path / "v15.sqlite"
    con = _schema_as_of(path, 15)
    con.execute(
        "INSERT INTO runs (name, agent, dataset, dataset_fingerprint, caps, config, identity, version, created_at)"
        " VALUES ('old', 'oracle', 'builtin', 'fp', '{}', '{}', '{}', '0', 'then')"
    )
    con.executemany("INSERT INTO trajectories (run_id, item_id) VALUES (1, ?)", [(f"i{i}",) for i in range(100)])
    step = ("tool", "x" * 200, None, "think", "{}", "c", 1, "ok", None, None, None, 0, None, None, 1, 29, 10, 0)
    rows = [(t, i, i, *step, None, None, None, None) for t in range(1, 101) for i in range(30)]
    con.executemany(f"INSERT INTO steps VALUES ({', '.join('?' * 25)})", rows)
    con.executemany("INSERT INTO texts VALUES (?, ?)", [(f"h{i}", "y" * 2000) for i in range(300)])
    before = path.stat().st_size
    con.close()
    with Store(path) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0] == 3000
        assert store.conn.execute("PRAGMA freelist_count").fetchone()[0] == 0
    assert path.stat().st_size < before
