"""Sharded campaigns: which (item, replicate) pairs host I of N runs.

A pair belongs to shard I of N when the SHA-256 of its item id and replicate, read as a number, is I − 1
modulo N. SHA-256, never Python's `hash()` (salted per process for strings), so every host and every Python
version computes the same partition, and the N shards of a selection are disjoint and cover it exactly.
Replicates are hashed with the item, so the replicates of one item spread over the hosts as items do.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
MAX_SHARDS = 10_000


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, item_id: str, replicate: int) -> bool:
        return shard_of(item_id, replicate, self.count) == self.index


def shard_of(item_id: str, replicate: int, count: int) -> int:
    """The 1-based shard of `count` that the pair (item id, replicate) belongs to."""
    digest = hashlib.sha256(f"{item_id}\x00{replicate}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def parse_shard(text: str) -> Shard:
    """`I/N` with 1 ≤ I ≤ N (e.g. `2/3`, the second of three hosts); ValueError with the reason otherwise."""
    m = _SPEC.match(text or "")
    if not m:
        raise ValueError(f"'{text}' is not I/N (e.g. 1/3: the first of three shards)")
    index, count = int(m.group(1)), int(m.group(2))
    if not 1 <= count <= MAX_SHARDS:
        raise ValueError(f"the number of shards must be 1 to {MAX_SHARDS:,}, got {count}")
    if not 1 <= index <= count:
        raise ValueError(f"the shard must be 1 to {count} (shards are counted from 1), got {index}")
    return Shard(index, count)
