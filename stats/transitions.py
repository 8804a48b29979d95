"""Tool transition matrices: how often tool B directly follows tool A within one trajectory.

Pure: takes tool-name sequences, returns plain lists. No I/O.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence


def transition_matrix(
    sequences: Iterable[Sequence[str]], names: Sequence[str] | None = None
) -> tuple[list[str], list[list[int]], list[list[float | None]]]:
    """(names, counts, row_normalised) over consecutive pairs of every sequence.

    `counts[i][j]` is how many times `names[j]` directly followed `names[i]`.
    `row_normalised[i][j]` is `counts[i][j]` over the row total, or None for a row with
    no transitions (an empty row is not 0%). With `names` given, the matrix has exactly
    those rows and columns in that order and pairs involving other names are ignored;
    without it, the names seen are used, sorted.
    """
    seqs = [list(s) for s in sequences]
    if names is None:
        names = sorted({n for s in seqs for n in s if isinstance(n, str)})
    names = list(names)
    index = {n: i for i, n in enumerate(names)}
    counts = [[0] * len(names) for _ in names]
    for seq in seqs:
        for a, b in zip(seq, seq[1:]):
            i, j = index.get(a), index.get(b)
            if i is not None and j is not None:
                counts[i][j] += 1
    rates: list[list[float | None]] = []
    for row in counts:
        total = sum(row)
        rates.append([c / total if total else None for c in row])
    return names, counts, rates
