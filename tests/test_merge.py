"""Sharded campaigns: `run --shard I/N` on three "hosts", `merge` into one store, read as one run."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.shard import Shard, parse_shard, shard_of
from storage import Store
from storage.schema import MIGRATIONS
from tests.timing import without_timing
from workbench.cli import main

RUN = ["--data", "builtin", "--agent", "heuristic", "--limit", "24", "--replicates", "2", "--workers", "3", "--quiet"]


def run(db: Path, *extra: str, name: str = "h") -> int:
    return main(["--batch", "run", *RUN, "--run", name, "--db", str(db), "--format", "json", *extra])


def merge(*args: str) -> int:
    return main(["--batch", "merge", *args])


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    """Three shard stores and one unsharded store of the same deterministic run (made once: they are read-only
    to the tests, which copy them before writing)."""
    root = tmp_path_factory.mktemp("campaign")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTHOP_CACHE", str(root / "cache"))
        for i in (1, 2, 3):
            assert run(root / f"shard{i}.db", "--shard", f"{i}/3") == 0
        assert run(root / "whole.db") == 0
    for db in root.glob("*.db"):  # as a finished process leaves it: the WAL folded into the file that is copied
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    return root


@pytest.fixture
def hosts(campaign, tmp_path) -> Path:
    """This test's own copies of the campaign's stores."""
    out = tmp_path / "hosts"
    out.mkdir()
    for name in ("shard1.db", "shard2.db", "shard3.db", "whole.db"):
        shutil.copy(campaign / name, out / name)
    return out


def report(db: Path, capsys) -> dict:
    capsys.readouterr()
    assert main(["--batch", "report", "h", "--db", str(db), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def summary(db: Path, capsys) -> dict:
    capsys.readouterr()
    assert main(["--batch", "export", "h", "--format", "agenthop-summary", "--db", str(db)]) == 0
    return without_timing(json.loads(capsys.readouterr().out))


def contents(db: Path) -> dict:
    """Everything a merge could change, timing columns included (a repeated merge must change nothing)."""
    conn = sqlite3.connect(db)
    try:
        return {
            table: sorted(map(repr, conn.execute(f"SELECT * FROM {table}")))
            for table in ("runs", "trajectories", "steps", "texts", "judgments")
        }
    finally:
        conn.close()


def outcomes(db: Path, name: str = "h") -> list[tuple]:
    """The run's trajectories in store order with their results and their steps, timing aside."""
    store = Store(db, readonly=True)
    try:
        rows = []
        for t in store.trajectories(store.run(name)["id"], final_only=False):
            steps = [
                {k: v for k, v in s.items() if k not in ("trajectory_id", "elapsed_s")} for s in store.steps(t["id"])
            ]
            rows.append(
                (
                    t["item_id"],
                    t["replicate"],
                    t["attempt"],
                    t["final"],
                    t["termination"],
                    t["answer"],
                    t["tool_sequence"],
                    json.dumps(steps, sort_keys=True),
                )
            )
        return rows
    finally:
        store.close()


# ---------------------------------------------------------------- the partition


def test_shard_of_is_a_stable_hash_not_pythons():
    """Pinned values: Python's salted hash() would change them between processes."""
    assert [shard_of("st_0001", r, 3) for r in range(4)] == [shard_of("st_0001", r, 3) for r in range(4)]
    assert [shard_of(f"st_{i:04d}", 0, 3) for i in range(1, 9)] == [2, 1, 3, 1, 3, 3, 3, 3]
    assert shard_of("mt_0042", 5, 7) == 4


@settings(max_examples=60, deadline=None)
@given(
    ids=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=40, unique=True),
    replicates=st.integers(1, 4),
    n=st.integers(1, 9),
)
def test_shards_are_disjoint_and_cover_the_selection(ids, replicates, n):
    pairs = [(i, r) for i in ids for r in range(replicates)]
    parts = [[p for p in pairs if Shard(k, n).holds(*p)] for k in range(1, n + 1)]
    assert sorted(p for part in parts for p in part) == sorted(pairs)


@pytest.mark.parametrize(
    "text, why", [("0/3", "1 to 3"), ("4/3", "1 to 3"), ("1/0", "1 to"), ("a/b", "I/N"), ("3", "I/N"), ("1/3/4", "I/N")]
)
def test_bad_shard_specs(text, why, capsys, tmp_path):
    with pytest.raises(ValueError, match=why):
        parse_shard(text)
    with pytest.raises(SystemExit) as exc:
        run(tmp_path / "x.db", "--shard", text)
    assert exc.value.code == 2 and not (tmp_path / "x.db").exists()


def test_a_shard_is_recorded_in_the_config_not_the_identity(campaign):
    shard, whole = (
        Store(campaign / "shard2.db", readonly=True).run("h"),
        Store(campaign / "whole.db", readonly=True).run("h"),
    )
    assert shard["config"]["slice"]["shard"] == "2/3" and "shard" not in whole["config"]["slice"]
    assert shard["identity"] == whole["identity"]
    sizes = [Store(campaign / f"shard{i}.db", readonly=True).run("h")["planned"] for i in (1, 2, 3)]
    assert sum(sizes) == 48 and all(sizes)  # 24 items × 2 replicates, split three ways


# ---------------------------------------------------------------- merged = one host


def test_three_shards_merged_equal_the_unsharded_run(hosts, capsys):
    dest = hosts / "merged.db"
    assert merge(*(str(hosts / f"shard{i}.db") for i in (1, 2, 3)), "--db", str(dest), "--format", "json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["runs"][0] | {"sources": None} == {
        "name": "h",
        "created": True,
        "copied": 48,
        "identical": 0,
        "partial_skipped": 0,
        "sources": None,
        "status": "done",
        "planned": 48,
        "finished": 48,
    }
    assert without_timing(report(dest, capsys)) == without_timing(report(hosts / "whole.db", capsys))
    assert summary(dest, capsys) == summary(hosts / "whole.db", capsys)
    assert outcomes(dest) == outcomes(hosts / "whole.db")  # same order, every step and text carried
    merged, whole = Store(dest, readonly=True).run("h"), Store(hosts / "whole.db", readonly=True).run("h")
    assert merged["identity"] == whole["identity"] and merged["config"]["slice"] == whole["config"]["slice"]


def test_merging_twice_changes_nothing(hosts, capsys):
    sources = [str(hosts / f"shard{i}.db") for i in (1, 2, 3)]
    dest = hosts / "merged.db"
    assert merge(*sources, "--db", str(dest)) == 0
    before = contents(dest)
    assert merge(*sources, "--db", str(dest), "--format", "json") == 0
    assert contents(dest) == before


def test_repeat_merge_reports_identical(hosts, capsys):
    sources = [str(hosts / f"shard{i}.db") for i in (1, 2, 3)]
    dest = hosts / "merged.db"
    assert merge(*sources, "--db", str(dest)) == 0
    capsys.readouterr()
    assert merge(*sources, "--db", str(dest), "--format", "json") == 0
    row = json.loads(capsys.readouterr().out)["runs"][0]
    assert (row["copied"], row["identical"], row["status"], row["finished"]) == (0, 48, "done", 48)


def test_a_part_whose_hops_are_not_yet_measured_is_still_the_same_result(hosts, capsys):
    """Hops are derived from the stored reads (backfilled when a report opens a store): merging a shard again after
    the destination measured them, from a copy that has not (a store from before hops), finds the same results."""
    sources = [str(hosts / f"shard{i}.db") for i in (1, 2, 3)]
    dest = hosts / "merged.db"
    assert merge(*sources, "--db", str(dest)) == 0
    unmeasured = hosts / "unmeasured.db"
    src = sqlite3.connect(hosts / "shard2.db")
    out = sqlite3.connect(unmeasured)
    src.backup(out)
    src.close()
    assert out.execute("SELECT COUNT(*) FROM steps WHERE hop IS NOT NULL").fetchone()[0] > 0
    out.execute("UPDATE steps SET hop = NULL")
    out.execute("UPDATE runs SET hop_rule = NULL")
    out.commit()
    out.close()
    before = contents(dest)
    capsys.readouterr()
    assert merge(str(unmeasured), "--db", str(dest), "--format", "json") == 0
    row = json.loads(capsys.readouterr().out)["runs"][0]
    assert row["copied"] == 0 and row["identical"] > 0
    assert contents(dest) == before


def test_merging_into_a_shards_own_store(hosts, capsys):
    """Host 1 receives the other hosts' stores: its shard run becomes the whole run."""
    dest = hosts / "shard1.db"
    assert merge(str(hosts / "shard2.db"), str(hosts / "shard3.db"), "--db", str(dest)) == 0
    assert without_timing(report(dest, capsys)) == without_timing(report(hosts / "whole.db", capsys))
    assert summary(dest, capsys) == summary(hosts / "whole.db", capsys)
    assert sorted(outcomes(dest)) == sorted(outcomes(hosts / "whole.db"))


def test_two_of_three_shards_is_an_incomplete_run(hosts, capsys):
    dest = hosts / "m.db"
    assert merge(str(hosts / "shard1.db"), str(hosts / "shard2.db"), "--db", str(dest), "--format", "json") == 0
    row = json.loads(capsys.readouterr().out)["runs"][0]
    assert row["status"] == "interrupted" and row["finished"] < 48
    assert merge(str(hosts / "shard3.db"), "--db", str(dest), "--format", "json") == 0
    row = json.loads(capsys.readouterr().out)["runs"][0]
    assert (row["status"], row["finished"], row["planned"]) == ("done", 48, 48)


def test_a_merged_partial_run_resumes_as_one_run(hosts, capsys):
    """The merged run has the unsharded identity: `run` without --shard finishes the missing shard's items."""
    dest = hosts / "m.db"
    assert merge(str(hosts / "shard1.db"), str(hosts / "shard3.db"), "--db", str(dest)) == 0
    assert run(dest) == 0
    capsys.readouterr()
    assert without_timing(report(dest, capsys)) == without_timing(report(hosts / "whole.db", capsys))


def test_runs_selects_and_unknown_runs_are_refused(hosts, capsys):
    assert run(hosts / "shard1.db", "--limit", "2", name="other") == 0
    dest = hosts / "m.db"
    assert merge(str(hosts / "shard1.db"), "--runs", "other", "--db", str(dest)) == 0
    assert [r["name"] for r in Store(dest, readonly=True).runs()] == ["other"]
    capsys.readouterr()
    assert merge(str(hosts / "shard1.db"), "--runs", "nope", "--db", str(hosts / "n.db")) == 2
    assert "no run named 'nope'" in capsys.readouterr().err and not (hosts / "n.db").exists()


# ---------------------------------------------------------------- refusals: exit 2, nothing written


def test_a_different_configuration_is_refused(hosts, capsys):
    assert run(hosts / "seed1.db", "--shard", "2/3", "--seed", "1") == 0
    dest = hosts / "shard1.db"
    before = contents(dest)
    capsys.readouterr()
    assert merge(str(hosts / "shard3.db"), str(hosts / "seed1.db"), "--db", str(dest)) == 2
    err = capsys.readouterr().err
    assert "seed differs" in err and "nothing was merged" in err
    assert contents(dest) == before  # shard 3, valid on its own, was not written either


def test_another_selection_is_refused(hosts, capsys):
    assert run(hosts / "lim.db", "--shard", "2/3", "--limit", "12") == 0
    assert merge(str(hosts / "shard1.db"), str(hosts / "lim.db"), "--db", str(hosts / "m.db")) == 2
    assert "item selection differs" in capsys.readouterr().err and not (hosts / "m.db").exists()


def test_an_overlap_with_another_result_is_refused(hosts, capsys):
    conn = sqlite3.connect(hosts / "shard2.db")
    with conn:
        conn.execute(
            "UPDATE trajectories SET answer = 'Z', correct = 1 - correct WHERE id = (SELECT MIN(id) FROM trajectories)"
        )
    conn.close()
    dest = hosts / "whole.db"
    before = contents(dest)
    assert merge(str(hosts / "shard2.db"), "--db", str(dest)) == 2
    err = capsys.readouterr().err
    assert "different result" in err and "nothing was merged" in err
    assert contents(dest) == before


def test_an_overlap_with_the_same_results_is_skipped(hosts, capsys):
    dest = hosts / "whole.db"
    before = contents(dest)
    assert merge(*(str(hosts / f"shard{i}.db") for i in (1, 2, 3)), "--db", str(dest), "--format", "json") == 0
    row = json.loads(capsys.readouterr().out)["runs"][0]
    assert (row["copied"], row["identical"]) == (0, 48)
    assert contents(dest)["trajectories"] == before["trajectories"] and contents(dest)["steps"] == before["steps"]


def test_merging_a_store_into_itself_is_refused(hosts, capsys):
    assert merge(str(hosts / "shard1.db"), "--db", str(hosts / "shard1.db")) == 2
    assert "being merged into" in capsys.readouterr().err


# ---------------------------------------------------------------- partial trajectories


def _half_written(db: Path) -> tuple[str, int]:
    """Turn one finished final trajectory of the store into a half-written one (a killed host's episode)."""
    conn = sqlite3.connect(db)
    with conn:
        tid, item, rep = conn.execute(
            "SELECT id, item_id, replicate FROM trajectories ORDER BY id DESC LIMIT 1"
        ).fetchone()
        conn.execute("UPDATE trajectories SET status = 'running', final = 0, termination = NULL WHERE id = ?", (tid,))
        conn.execute("UPDATE runs SET status = 'interrupted'")
    conn.close()
    return item, rep


def test_unfinished_trajectories_only_with_include_partial(hosts, capsys):
    item, rep = _half_written(hosts / "shard3.db")
    sources = [str(hosts / f"shard{i}.db") for i in (1, 2, 3)]
    assert merge(*sources, "--db", str(hosts / "a.db"), "--format", "json") == 0
    row = json.loads(capsys.readouterr().out)["runs"][0]
    assert (row["copied"], row["partial_skipped"], row["finished"], row["status"]) == (47, 1, 47, "interrupted")
    assert merge(*sources, "--db", str(hosts / "b.db"), "--include-partial", "--format", "json") == 0
    row = json.loads(capsys.readouterr().out)["runs"][0]
    assert (row["copied"], row["partial_skipped"], row["finished"]) == (48, 0, 47)
    b = Store(hosts / "b.db", readonly=True)
    kept = [t for t in b.conn.execute("SELECT item_id, replicate, status FROM trajectories WHERE status != 'done'")]
    assert [tuple(k) for k in kept] == [(item, rep, "running")]
    assert b.steps(b.conn.execute("SELECT id FROM trajectories WHERE status != 'done'").fetchone()[0])
    # the unfinished one is resumed as any killed run's would be, and the whole run is then the unsharded one
    assert run(hosts / "b.db") == 0
    assert without_timing(report(hosts / "b.db", capsys)) == without_timing(report(hosts / "whole.db", capsys))


# ---------------------------------------------------------------- a store from the previous release


def _old_store(current: Path, old: Path, version: int) -> None:
    """`current` rewritten as a store of schema `version`: the tables as the first migrations made them, with the
    columns later ones added left out (what a workbench of that release wrote)."""
    conn = sqlite3.connect(old, isolation_level=None)
    for number in range(version):
        for statement in MIGRATIONS[number].split(";"):
            if statement.strip():
                conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {version}")
    conn.execute("ATTACH DATABASE ? AS cur", (str(current),))
    conn.execute("BEGIN")
    for table in ("runs", "trajectories", "texts", "steps"):
        cols = ", ".join(r[1] for r in conn.execute(f"PRAGMA main.table_info({table})"))
        conn.execute(f"INSERT INTO main.{table} ({cols}) SELECT {cols} FROM cur.{table}")
    conn.execute("COMMIT")
    conn.execute("DETACH DATABASE cur")
    conn.close()


def test_a_store_of_the_previous_release_merges(hosts, capsys):
    _old_store(hosts / "shard3.db", hosts / "old3.db", version=5)
    probe = sqlite3.connect(hosts / "old3.db")
    assert probe.execute("PRAGMA user_version").fetchone()[0] == 5
    assert "n_gold" not in [r[1] for r in probe.execute("PRAGMA table_info(trajectories)")]
    probe.close()
    dest = hosts / "shard1.db"
    assert merge(str(hosts / "shard2.db"), str(hosts / "old3.db"), "--db", str(dest)) == 0
    migrated = sqlite3.connect(hosts / "old3.db")
    assert migrated.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)  # migrations applied first
    migrated.close()
    merged = report(dest, capsys)
    whole = report(hosts / "whole.db", capsys)
    # the old release stored no section-reachability: that block is 'unknown' for its trajectories, all else equal
    for rep in (merged, whole):
        rep.pop("section_recall_ceiling")
        rep["counts"].pop("section_recall_ceiling")
    assert without_timing(merged) == without_timing(whole)
    assert summary(dest, capsys) == summary(hosts / "whole.db", capsys)


# ---------------------------------------------------------------- tags


def tag(db: Path, *flags: str) -> int:
    return main(["--batch", "runs", "tag", "h", *flags, "--db", str(db)])


def test_shards_tagged_with_different_families_are_refused_naming_both(hosts, capsys):
    """The merged run kept the first shard's family without a word: the panel would file the other shards'
    trajectories under a family they were not given."""
    sources = [hosts / f"shard{i}.db" for i in (1, 2, 3)]
    assert tag(sources[0], "--family", "Qwen") == 0 and tag(sources[2], "--family", "Llama") == 0
    dest = hosts / "merged.db"
    capsys.readouterr()
    assert merge(*map(str, sources), "--db", str(dest)) == 2
    err = capsys.readouterr().err
    assert f"run 'h' is tagged family 'Qwen' in {sources[0]} but family 'Llama' in {sources[2]}" in err
    assert "nothing was merged" in err and "--batch runs tag h --family NAME" in err
    assert not dest.exists() or Store(dest, readonly=True).runs() == []  # nothing written
    assert tag(sources[2], "--family", "qwen") == 0  # tagged alike, it merges
    assert merge(*map(str, sources), "--db", str(dest)) == 0
    assert Store(dest, readonly=True).run("h")["family"] == "Qwen"


def test_a_tier_differing_from_the_store_merged_into_is_refused(hosts, capsys):
    assert tag(hosts / "shard1.db", "--tier", "closed") == 0 and tag(hosts / "shard2.db", "--tier", "open") == 0
    dest = hosts / "shard1.db"
    before = contents(dest)
    capsys.readouterr()
    assert merge(str(hosts / "shard2.db"), "--db", str(dest)) == 2
    err = capsys.readouterr().err
    assert "tagged tier 'closed-frontier' in this store but tier 'open-frontier' in" in err
    assert contents(dest) == before


def test_a_part_without_a_recorded_tag_takes_the_other_parts_tag(hosts, capsys):
    """A shard stored before tags existed records none (it reads one derived from its model): no conflict, and
    the merged run keeps the tag the other shards were given."""
    for i in (1, 2, 3):
        conn = sqlite3.connect(hosts / f"shard{i}.db")
        conn.execute("UPDATE runs SET family = NULL, tier = NULL")
        conn.commit()
        conn.close()
    assert tag(hosts / "shard2.db", "--family", "Gemma", "--tier", "efficient") == 0
    dest = hosts / "merged.db"
    assert merge(*(str(hosts / f"shard{i}.db") for i in (1, 2, 3)), "--db", str(dest)) == 0
    merged = Store(dest, readonly=True).run("h")
    assert (merged["family"], merged["tier"]) == ("Gemma", "compute-efficient")
