"""Table 12 of the AgentHop paper: McNemar tests of conversion between two models on the items both recalled.

The table's own numbers (its discordant counts and p-values) are not available here (not in /work/shared,
not in the public repository, not in the search corpora: /work/notes/paper_numbers.md), so these tests rebuild
the figures from the paper's definition with inputs shaped like the table's: the exact two-sided McNemar p of
discordant counts b (only the first model right) and c (only the second right) is
p = min(1, 2·P(Bin(b + c, ½) ≤ min(b, c))), checked against an exact rational computation and against
`scipy.stats.binomtest`; then the same p through `compare`, on the set the table uses (items both runs recalled).
"""

from __future__ import annotations

import json
from fractions import Fraction
from math import comb

import pytest

from stats.significance import mcnemar_exact, sign_test
from storage import Store
from workbench.cli import main

# discordant counts (b, c) of the sizes the table's model pairs have on ~300–800 commonly recalled items
DISCORDANT = [(0, 0), (1, 0), (5, 0), (3, 3), (9, 4), (12, 30), (41, 22), (57, 19), (88, 61), (140, 139), (7, 160)]


def exact_p(b: int, c: int) -> Fraction:
    """2·P(Bin(b + c, ½) ≤ min(b, c)), capped at 1, in exact rational arithmetic (independent of numpy/scipy)."""
    n = b + c
    if n == 0:
        return Fraction(1)
    tail = Fraction(sum(comb(n, k) for k in range(min(b, c) + 1)), 2**n)
    return min(Fraction(1), 2 * tail)


@pytest.mark.parametrize("b,c", DISCORDANT)
def test_mcnemar_p_from_discordant_counts(b, c):
    from scipy.stats import binomtest

    want = exact_p(b, c)
    assert sign_test(b, c, alternative="two-sided") == pytest.approx(float(want), rel=1e-9, abs=1e-300)
    if b + c:
        assert float(want) == pytest.approx(binomtest(b, b + c, 0.5).pvalue, rel=1e-9, abs=1e-300)
    # the same p from paired outcomes with those discordant counts and some concordant items, which carry no weight
    first = [1] * b + [0] * c + [1] * 50 + [0] * 20
    second = [0] * b + [1] * c + [1] * 50 + [0] * 20
    result = mcnemar_exact(first, second)
    assert (result["only_first"], result["only_second"], result["n"]) == (b, c, b + c + 70)
    assert result["p"] == pytest.approx(float(want), rel=1e-9, abs=1e-300)


def test_compare_tests_conversion_on_the_items_both_recalled(tmp_path, capsys):
    """Two oracle runs (every item recalled and right), then by SQL on the single-target items: A wrong on 2, B wrong
    on 7 (so b = 7 items only A right, c = 2 only B right), and 4 more items where A alone is wrong *and not
    recalled* — they are outside the Table 12 set, so they change the marginal conversion but not the test."""
    db = tmp_path / "s.sqlite"
    for name in ("A", "B"):
        assert (
            main(["--batch", "run", "--agent", "oracle", "--run", name, "--db", str(db), "--quiet", "--format", "json"])
            == 0
        )
    store = Store(db)
    st = sorted(t["item_id"] for t in store.trajectories(store.run("A")["id"]) if t["kind"] == "st")
    run_id = {n: store.run(n)["id"] for n in ("A", "B")}

    def update(run: str, items: list[str], **fields: int) -> None:
        cols = ", ".join(f"{k} = ?" for k in fields)
        for item in items:
            store.conn.execute(
                f"UPDATE trajectories SET {cols} WHERE run_id = ? AND item_id = ?",
                (*fields.values(), run_id[run], item),
            )
        store.conn.commit()

    update("A", st[:2], correct=0)
    update("B", st[2:9], correct=0)
    update("B", st[9:13], correct=0, paper_recall=0)
    capsys.readouterr()
    assert main(["--batch", "compare", "A", "B", "--db", str(db), "--format", "json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    row = next(r for r in cmp["rows"] if r["axis"] == "Conv st")
    n_set = len(st) - 4
    assert row["n"] == n_set and (row["test"]["only_first"], row["test"]["only_second"]) == (7, 2)
    assert row["p"] == pytest.approx(float(exact_p(7, 2)))
    assert row["a"] == pytest.approx((n_set - 2) / n_set) and row["b"] == pytest.approx((n_set - 7) / n_set)
    assert row["delta"] == pytest.approx(-5 / n_set)
    assert row["b_marginal"] == pytest.approx((len(st) - 4 - 7) / (len(st) - 4))  # B's own recalled items
    assert row["a_marginal"] == pytest.approx((len(st) - 2) / len(st))
