"""The store's schema as forward-only migrations; `user_version` records how far a file has come.

A migration is appended, never edited: a store written by any earlier version opens
in this one, and one written by a newer version is refused instead of damaged.
"""

from __future__ import annotations

import sqlite3

MIGRATIONS: list[str] = [
    # 1: runs, trajectories, steps, and deduplicated long texts
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL DEFAULT 'eval',
        agent TEXT NOT NULL,
        model TEXT,
        dataset TEXT NOT NULL,
        dataset_fingerprint TEXT NOT NULL,
        ablation TEXT NOT NULL DEFAULT 'full',
        seed INTEGER NOT NULL DEFAULT 0,
        replicates INTEGER NOT NULL DEFAULT 1,
        caps TEXT NOT NULL,
        config TEXT NOT NULL,
        identity TEXT NOT NULL,
        version TEXT NOT NULL,
        prompt_hash TEXT,
        status TEXT NOT NULL DEFAULT 'created',
        planned INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT,
        group_name TEXT,
        note TEXT
    );
    CREATE TABLE trajectories (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        item_id TEXT NOT NULL,
        replicate INTEGER NOT NULL DEFAULT 0,
        attempt INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'running',
        final INTEGER NOT NULL DEFAULT 0,
        question_type TEXT, kind TEXT, depth INTEGER, reasoning_type TEXT, consensus_tier TEXT, venue TEXT,
        correct_index INTEGER, chosen_type TEXT,
        termination TEXT, answer TEXT, predicted_index INTEGER, correct INTEGER, reasoning TEXT,
        turns INTEGER, model_calls INTEGER, points_used INTEGER, tokens INTEGER,
        prompt_tokens INTEGER, completion_tokens INTEGER, cache_read_tokens INTEGER, cache_creation_tokens INTEGER,
        tool_calls INTEGER, turns_with_calls INTEGER, tool_errors INTEGER, api_errors INTEGER,
        transient_retries INTEGER,
        paper_recall INTEGER, paper_recall_any INTEGER,
        section_recall INTEGER, section_recall_any INTEGER, section_recall_loose INTEGER,
        reads TEXT, tool_sequence TEXT, cost_usd REAL, wall_time_s REAL, error TEXT, error_kind TEXT,
        continues INTEGER NOT NULL DEFAULT 0, budget_level TEXT,
        started_at TEXT, finished_at TEXT,
        UNIQUE (run_id, item_id, replicate, attempt)
    );
    CREATE INDEX trajectories_run ON trajectories(run_id, final, status);
    CREATE TABLE texts (hash TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE steps (
        trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        turn INTEGER NOT NULL,
        kind TEXT NOT NULL,
        text TEXT, text_hash TEXT,
        tool_name TEXT, tool_args TEXT, tool_call_id TEXT,
        cost INTEGER NOT NULL DEFAULT 0, status TEXT,
        paper_id TEXT, arxiv_id TEXT, section_index INTEGER, delivered INTEGER NOT NULL DEFAULT 0,
        usage TEXT, cost_usd REAL,
        points_used INTEGER, points_left INTEGER, tokens INTEGER, rejections INTEGER,
        elapsed_s REAL,
        PRIMARY KEY (trajectory_id, idx)
    ) WITHOUT ROWID;
    """,
    # 2: each trajectory's calls as compact actions [tool, status, paper, role, delivered], so trajectory
    # analytics never read step texts
    """
    ALTER TABLE trajectories ADD COLUMN actions TEXT
    """,
    # 3: judge verdicts of parallel scaling (pointwise: one sample; pairwise: leader vs challenger)
    """
    CREATE TABLE judgments (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        item_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        judge TEXT NOT NULL,
        sample_a INTEGER NOT NULL,
        sample_b INTEGER,
        verdict INTEGER,
        prompt TEXT,
        reply TEXT,
        tokens INTEGER,
        cost_usd REAL,
        created_at TEXT NOT NULL,
        UNIQUE (run_id, item_id, kind, judge, sample_a, sample_b)
    )
    """,
    # 4: benchmark audit (the paper's Stage 7 review): verdicts and section-label edits, with reviewer and time
    """
    CREATE TABLE audit_verdicts (
        id INTEGER PRIMARY KEY,
        dataset_fingerprint TEXT NOT NULL,
        item_id TEXT NOT NULL,
        reviewer TEXT NOT NULL,
        verdict TEXT NOT NULL,
        note TEXT,
        question_ok INTEGER,
        gold_supported INTEGER,
        labels_accurate INTEGER,
        created_at TEXT NOT NULL
    );
    CREATE INDEX audit_verdicts_item ON audit_verdicts(dataset_fingerprint, item_id);
    CREATE TABLE audit_labels (
        id INTEGER PRIMARY KEY,
        dataset_fingerprint TEXT NOT NULL,
        item_id TEXT NOT NULL,
        action TEXT NOT NULL,
        arxiv_id TEXT NOT NULL,
        section TEXT NOT NULL,
        relevance TEXT,
        reviewer TEXT NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE INDEX audit_labels_item ON audit_labels(dataset_fingerprint, item_id)
    """,
    # 5: per-item look-ups across runs (the item browser, the human-vs-model reveal)
    """
    CREATE INDEX trajectories_item ON trajectories(item_id, final, status)
    """,
    # 6: the item's number of gold papers and whether its section recall is reachable at all (every gold
    # paper has a direct label resolved to a section), stored with each trajectory so reports need no corpus
    """
    ALTER TABLE trajectories ADD COLUMN n_gold INTEGER;
    ALTER TABLE trajectories ADD COLUMN section_reachable INTEGER
    """,
    # 7: undoing a label edit is itself an edit (action 'undo', naming the edit it undoes): the history is kept
    """
    ALTER TABLE audit_labels ADD COLUMN undoes INTEGER
    """,
    # 8: the label-resolution version a run's section-recall flags were computed under (NULL: before versions were
    # recorded), so flags are recomputed from the stored reads when the rules change
    """
    ALTER TABLE runs ADD COLUMN label_resolution TEXT
    """,
    # 9: how many characters of an assistant step's text are the provider's reasoning (thinking) text, so views
    # show it apart from the content and marked as such (sandbox.words); NULL for steps stored before
    """
    ALTER TABLE steps ADD COLUMN reasoning_chars INTEGER
    """,
    # 10: the citation hops from the item's seed to the paper of each delivered read (NULL: not a read, or a paper no
    # citation path from the seed reaches), and the version of that rule a run's hops were computed under (NULL:
    # stored before hops were recorded: they are backfilled from the stored reads when the dataset opens)
    """
    ALTER TABLE steps ADD COLUMN hop INTEGER;
    ALTER TABLE runs ADD COLUMN hop_rule TEXT
    """,
    # 11: why the model stopped on each reply (the provider's finish_reason; `length`: the completion limit cut it
    # off), and per trajectory the replies so cut off and the calls lost inside them (NULL: stored before)
    """
    ALTER TABLE steps ADD COLUMN finish_reason TEXT;
    ALTER TABLE trajectories ADD COLUMN cut_off_turns INTEGER;
    ALTER TABLE trajectories ADD COLUMN lost_calls INTEGER
    """,
    # 12: every text the run's agents and judges were sent (`--prompts`): the prompts file that reproduces them, stored
    # once in `texts` (runs sent the same prompts share it) under this hash (NULL: stored before prompts were
    # recorded, the defaults of its version). Not in the runs row itself: listing runs would read every file
    """
    ALTER TABLE runs ADD COLUMN prompts_text TEXT
    """,
    # 13: the run's model family and capability tier (the paper's panel groups by both): chosen at launch or by
    # `runs tag`, else derived from the model string when the run is created; NULL: stored before tags (derived
    # when read) or a run without a model that nobody tagged
    """
    ALTER TABLE runs ADD COLUMN family TEXT;
    ALTER TABLE runs ADD COLUMN tier TEXT
    """,
    # 14: where a run's dataset came from when it was a release on the Hugging Face Hub (`--data hf:OWNER/NAME`): the
    # repository and the commit its revision resolved to, beside the fingerprint that identifies the data (NULL: a
    # directory, the built-in benchmark, or stored before)
    """
    ALTER TABLE runs ADD COLUMN dataset_repo TEXT;
    ALTER TABLE runs ADD COLUMN dataset_revision TEXT
    """,
    # 15: a model judge's call in the agent's four token buckets (non-cached prompt, completion, cache read, cache
    # creation), so its verdicts can be repriced by another cost rule (the scaling study's App. C.1: every input token
    # at the input price); NULL: an offline judge, or a verdict stored before the buckets (kept at its stored cost)
    """
    ALTER TABLE judgments ADD COLUMN prompt_tokens INTEGER;
    ALTER TABLE judgments ADD COLUMN completion_tokens INTEGER;
    ALTER TABLE judgments ADD COLUMN cache_read_tokens INTEGER;
    ALTER TABLE judgments ADD COLUMN cache_creation_tokens INTEGER
    """,
    # 16: steps and long texts in rowid tables, their keys separate indexes. Hundreds of episodes in flight write
    # their turns into hundreds of places of a table clustered by (trajectory, step): each commit rewrote as many
    # of its pages, and the WAL checkpoints copied them again (~18 µs of the engine's one thread per step).
    # Appended by rowid, a turn's steps share the table's last page and only the small index entries scatter
    # (~10 µs). Texts of kilobytes clustered by their hash were worse still (a page split per text: 31–63 µs per
    # text, the file twice the size; 17–28 µs appended). Same columns, same order; read through the indexes.
    """
    CREATE TABLE steps_by_rowid (
        trajectory_id INTEGER NOT NULL REFERENCES trajectories(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        turn INTEGER NOT NULL,
        kind TEXT NOT NULL,
        text TEXT, text_hash TEXT,
        tool_name TEXT, tool_args TEXT, tool_call_id TEXT,
        cost INTEGER NOT NULL DEFAULT 0, status TEXT,
        paper_id TEXT, arxiv_id TEXT, section_index INTEGER, delivered INTEGER NOT NULL DEFAULT 0,
        usage TEXT, cost_usd REAL,
        points_used INTEGER, points_left INTEGER, tokens INTEGER, rejections INTEGER,
        elapsed_s REAL,
        reasoning_chars INTEGER,
        hop INTEGER,
        finish_reason TEXT
    );
    INSERT INTO steps_by_rowid SELECT * FROM steps ORDER BY trajectory_id, idx;
    DROP TABLE steps;
    ALTER TABLE steps_by_rowid RENAME TO steps;
    CREATE UNIQUE INDEX steps_key ON steps(trajectory_id, idx);
    CREATE TABLE texts_by_rowid (hash TEXT NOT NULL, body TEXT NOT NULL);
    INSERT INTO texts_by_rowid SELECT hash, body FROM texts;
    DROP TABLE texts;
    ALTER TABLE texts_by_rowid RENAME TO texts;
    CREATE UNIQUE INDEX texts_key ON texts(hash)
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)


class SchemaTooNew(Exception):
    """The file was written by a newer version of the workbench."""


def schema_version(db: sqlite3.Connection) -> int:
    """The file's schema version (0: no workbench wrote it); a newer one than ours raises SchemaTooNew."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(f"store schema version {version} is newer than this workbench's ({SCHEMA_VERSION})")
    return version


REBUILT = 16  # the migration that copied `steps` and `texts` into new tables, leaving the old ones' pages free


def migrate(db: sqlite3.Connection) -> int:
    """Apply every migration the file lacks, each in its own transaction; return the new version."""
    version = schema_version(db)
    for number in range(version, SCHEMA_VERSION):
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[number].split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {number + 1}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    if 0 < version < REBUILT <= SCHEMA_VERSION:
        reclaim(db)
    return SCHEMA_VERSION


def reclaim(db: sqlite3.Connection) -> None:
    """Give back the pages a rebuild left free (as many as the old tables held: a third of the file): once, after
    the migration. A store another process is writing keeps them for now; SQLite reuses them as it grows."""
    try:
        db.execute("VACUUM")
    except sqlite3.OperationalError:  # busy: the space is reused, not lost
        return
