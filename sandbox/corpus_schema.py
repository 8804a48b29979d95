"""The corpus cache's tables and the search tokenisation its rows are indexed with: shared by the import
(`corpus`) and its worker process (`graph_import`), which must not import each other."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE papers (arxiv_id TEXT PRIMARY KEY, title TEXT, n_sections INTEGER);
CREATE TABLE sections (id INTEGER PRIMARY KEY, arxiv_id TEXT, idx INTEGER, header TEXT, text TEXT, length INTEGER);
CREATE TABLE nodes (id INTEGER PRIMARY KEY, digest TEXT UNIQUE, s2id TEXT, arxiv_id TEXT,
                    has_text INTEGER, json TEXT, tokens TEXT);
CREATE TABLE edges (sample_id TEXT, src TEXT, pos INTEGER, dst TEXT,
                    PRIMARY KEY (sample_id, src, pos)) WITHOUT ROWID;
CREATE TABLE neighbourhoods (sample_id TEXT PRIMARY KEY, view BLOB);
CREATE TABLE items (pos INTEGER PRIMARY KEY, id TEXT UNIQUE, json TEXT);
CREATE TABLE labels (sample_id TEXT, pos INTEGER, arxiv_id TEXT, section TEXT, relevance TEXT,
                     section_index INTEGER, method TEXT, PRIMARY KEY (sample_id, pos)) WITHOUT ROWID;
"""

# Built once the pool is stored: rows appended in file order and indexed in one sort cost ~40 % less than
# keeping a (arxiv_id, idx)-keyed table of ~240 MB of text ordered on every insert, and the file is ~10 % smaller.
SECTIONS_INDEX = "CREATE UNIQUE INDEX sections_key ON sections (arxiv_id, idx)"


def tokens(text: str) -> set[str]:
    """The reference's search tokenisation: lower-case `\\w+` words, as a set."""
    return set(_WORD.findall(text.lower()))
