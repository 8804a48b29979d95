"""The item browser's shared layer (`workbench.service.items`, `workbench.service.neighbourhood`) and `--batch items`: rows and their
outcomes against the store, the filters and sort, the neighbourhood tree, and the command's exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from storage import Store
from workbench.cli import main
from workbench.service import items
from workbench.service.neighbourhood import Neighbourhood, gold_outline, label, text_tree, tree_dict
from workbench.views.tree import plain_tree

ROOT = Path(__file__).resolve().parents[1]


def _row(i: int, right: int, ran: int, **kw) -> items.ItemRow:
    fields = {
        "id": f"st_{i:04d}",
        "kind": "st",
        "depth": 1,
        "reasoning": "METHOD",
        "tier": "gold",
        "venue": "ACL",
        "question": f"question {i}",
    } | kw
    return items.ItemRow(pos=i, right=right, ran=ran, **fields)


def test_outcome_classes_partition_the_items():
    rows = [_row(0, 0, 0), _row(1, 0, 3), _row(2, 1, 3), _row(3, 3, 3)]
    assert [r.outcome for r in rows] == ["unrun", "none", "some", "all"]
    assert [r.right_text for r in rows] == ["—", "0/3", "1/3", "3/3"]
    for cls in items.OUTCOMES:
        assert [r.id for r in items.filter_rows(rows, items.ItemFilter(right=cls))] == [
            r.id for r in rows if r.outcome == cls
        ]


def test_filters_sort_and_dataset_spelling():
    rows = [
        _row(0, 1, 2, kind="mt", depth=2, question="How does the Memory layout work?"),
        _row(1, 0, 2, reasoning="RESULT", tier="silver"),
        _row(2, 2, 2),
        _row(3, 0, 0),
    ]
    flt = items.check_filter(items.ItemFilter(reasoning="result", tier="SILVER"), rows)
    assert (flt.reasoning, flt.tier) == ("RESULT", "silver")
    assert [r.id for r in items.filter_rows(rows, flt)] == ["st_0001"]
    assert [r.id for r in items.filter_rows(rows, items.ItemFilter(text="memory HOW"))] == ["st_0000"]
    assert [r.id for r in items.filter_rows(rows, items.ItemFilter(text="st_0002"))] == ["st_0002"]
    assert [r.id for r in items.filter_rows(rows, items.ItemFilter(kind="mt", depth=2))] == ["st_0000"]
    assert [r.id for r in items.sort_rows(rows, "right")] == ["st_0001", "st_0000", "st_0002", "st_0003"]
    assert [r.id for r in items.sort_rows(rows, "file", reverse=True)] == ["st_0003", "st_0002", "st_0001", "st_0000"]
    with pytest.raises(items.ItemFilterError, match="it has: METHOD, RESULT"):
        items.check_filter(items.ItemFilter(reasoning="GUESS"), rows)
    assert items.ItemFilter(depth=2, text=" ").active() == {"depth": 2}


def test_dataset_key_is_one_spelling_per_directory(tmp_path, monkeypatch):
    """Runs, play sessions, the launch form and the item browser all record and match datasets by this key."""
    from sandbox.datasets import dataset_key, release_key

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "rel").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "rel")
    real = str((tmp_path / "rel").resolve())
    assert dataset_key("builtin") == "builtin"
    assert dataset_key("~/rel") == dataset_key("rel") == dataset_key(str(tmp_path / "link")) == real
    assert release_key("builtin") == str((tmp_path / "builtin").resolve())  # the launch form's release field
    assert items.same_dataset("~/link", real) and items.same_dataset("builtin", "builtin")
    assert not items.same_dataset("builtin", real)
    code = "import sys, sandbox.datasets; print(sorted(m for m in sys.modules if m.startswith('sandbox.')))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    # the naming without the corpus machinery (the Hub's naming is a pattern; its client is imported to fetch only)
    assert proc.stdout.strip() == "['sandbox.datasets', 'sandbox.hub']", proc.stderr


def test_known_datasets_put_builtin_first():
    runs = [
        {"dataset": "/r/a", "dataset_fingerprint": "f1"},
        {"dataset": "builtin", "dataset_fingerprint": "b"},
        {"dataset": "/r/a", "dataset_fingerprint": "f2"},
    ]
    got = items.known_datasets(runs)
    assert [(c.spec, c.runs, c.fingerprints, c.label) for c in got] == [
        ("builtin", 1, ("b",), "builtin"),
        ("/r/a", 2, ("f1", "f2"), "a"),
    ]


def _view(edges, nodes, seed="s", bridges=(), golds=()):
    item = SimpleNamespace(seed_paper_id=seed, bridge_paper_ids=tuple(bridges), gold_paper_ids=tuple(golds))
    return SimpleNamespace(
        item=item,
        edges=edges,
        nodes={
            s: SimpleNamespace(
                data={"title": f"T {s}", "year": 2020}, arxiv_id=f"a-{s}" if s != "m" else "", has_text=s != "m"
            )
            for s in nodes
        },
    )


def test_neighbourhood_roles_paths_cycles_and_unlinked():
    view = _view(
        {"s": ["b", "m", "x"], "b": ["g", "s"], "g": ["b"]}, ["s", "b", "g", "m", "lone"], bridges=["b"], golds=["g"]
    )
    nb = Neighbourhood(view)
    assert nb.gold_paths() == [("s", "b", "g")]
    assert nb.unlinked() == ["lone"]
    assert label(nb.paper("m")) == "· paper  meta 2020 T m"
    assert label(nb.paper("g")) == "★ gold   full 2020 T g (a-g)"
    assert label(nb.paper("x")).startswith("· paper  ? not in the graph")
    assert _drawn(plain_tree(*text_tree(nb))) == [  # drawn by rich.tree
        "● seed   full 2020 T s (a-s)",
        "├── ◇ bridge full 2020 T b (a-b)",
        "│   ├── ★ gold   full 2020 T g (a-g)",
        "│   └── ● seed   full 2020 T s (a-s)",  # a citation back to the seed is listed, not descended
        "├── · paper  meta 2020 T m",
        "└── · paper  ? not in the graph · x",
        "not cited along any path from the seed (1):",
        "   · paper  full 2020 T lone (a-lone)",
    ]
    tree = tree_dict(nb)
    assert [r["paper_id"] for r in tree["references"]] == ["b", "m", "x"]
    assert [r["role"] for r in tree["references"][0]["references"]] == ["gold", "seed"]
    assert [u["paper_id"] for u in tree["unlinked"]] == ["lone"]


def _drawn(renderables) -> list[str]:
    """What a console prints for `renderables`, line by line, without colour."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=120, color_system=None)
    for r in renderables:
        console.print(r)
    return [line.rstrip() for line in console.file.getvalue().splitlines()]


def test_the_gold_paths_merge_into_one_tree_drawn_by_rich():
    from rich.text import Text

    from workbench.views.tree import outline_tree

    view = _view(
        {"s": ["b", "c"], "b": ["g", "h"], "c": ["k"]},
        ["s", "b", "c", "g", "h", "k"],
        bridges=["b"],
        golds=["g", "h", "k"],
    )
    nb = Neighbourhood(view)
    assert gold_outline(nb) == ("s", [("b", [("g", []), ("h", [])]), ("c", [("k", [])])])  # b once, for g and h
    assert _drawn([outline_tree(gold_outline(nb), Text)]) == [
        "s",
        "├── b",
        "│   ├── g",
        "│   └── h",
        "└── c",
        "    └── k",
    ]
    lone = Neighbourhood(_view({"s": ["b"]}, ["s", "b", "g"], golds=["g"]))  # no path reaches the gold paper
    assert gold_outline(lone) == ("s", [])


# ---------------------------------------------------------------- the batch command


@pytest.fixture
def ran(tmp_path, demo_dir, capsys):
    """A store with two runs on the demo release (oracle on 6 items, random on 4)."""
    db = tmp_path / "s.sqlite"
    for agent, limit in (("oracle", "6"), ("random", "4")):
        assert (
            main(
                [
                    "--batch",
                    "run",
                    "--data",
                    str(demo_dir),
                    "--agent",
                    agent,
                    "--run",
                    agent,
                    "--limit",
                    limit,
                    "--db",
                    str(db),
                    "--quiet",
                    "--workers",
                    "2",
                ]
            )
            == 0
        )
    capsys.readouterr()
    return db


def _json(capsys, *args) -> dict:
    assert main(["--batch", "items", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_items_json_counts_what_the_store_says(ran, demo_dir, demo_corpus, capsys):
    out = _json(capsys, "--data", str(demo_dir), "--db", str(ran))
    outcomes = Store(ran, readonly=True).item_outcomes(demo_corpus.fingerprint)
    assert out["fingerprint"] == demo_corpus.fingerprint and out["runs"] == ["oracle", "random"]
    assert out["n"] == out["total"] == len(demo_corpus.items)
    assert {r["id"]: (r["right"], r["ran"]) for r in out["items"] if r["ran"]} == outcomes
    assert sum(1 for r in out["items"] if r["ran"] == 2) == 4 and sum(1 for r in out["items"] if r["ran"] == 1) == 2
    unrun = _json(capsys, "--data", str(demo_dir), "--db", str(ran), "--right", "unrun", "--type", "mt")
    assert unrun["filters"] == {"kind": "mt", "right": "unrun"}
    assert {r["id"] for r in unrun["items"]} == {
        i.id for i in demo_corpus.items if i.kind == "mt" and i.id not in outcomes
    }


def test_items_show_has_marks_tree_and_trajectories(ran, demo_dir, demo_corpus, capsys):
    item = next(i for i in demo_corpus.items[:4] if i.depth == 2)
    out = _json(capsys, "--data", str(demo_dir), "--db", str(ran), "--show", item.id)
    assert out["gold"] == "ABCD"[item.correct_index]
    assert [g["paper_id"] for g in out["gold_papers"]] == list(item.gold_paper_ids)
    assert out["neighbourhood"]["tree"]["paper_id"] == item.seed_paper_id
    assert [(t["run"], t["correct"]) for t in out["trajectories"]] == [
        ("oracle", True),
        ("random", out["trajectories"][1]["correct"]),
    ]
    assert main(["--batch", "items", "--data", str(demo_dir), "--db", str(ran), "--show", item.id]) == 0
    text = capsys.readouterr().out
    for g in item.gold_arxiv_ids:
        assert any(line.lstrip("│├└─ ").startswith("★ gold") and f"({g})" in line for line in text.splitlines())
    assert "── ◇ bridge" in text  # rich.tree's guides
    assert "oracle" in text and "random" in text and "◇ bridge" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (["--data", "{tmp}/moved"], "does not exist"),
        (["--reasoning", "GUESS"], "no reasoning type 'GUESS'"),
        (["--show", "st_9999"], "no item 'st_9999'"),
        (["--show", "st_0001", "--depth", "1"], "--show ITEM_ID takes no filters"),
        (["--db", "{tmp}/none.sqlite"], "no store at"),
    ],
)
def test_bad_input_exits_2_and_writes_nothing(tmp_path, demo_dir, capsys, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--data" not in args:
        args = ["--data", str(demo_dir), *args]
    assert main(["--batch", "items", *args]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "store.sqlite").exists() and not (tmp_path / "none.sqlite").exists()


def test_items_never_imports_textual(tmp_path, demo_dir):
    code = (
        "import sys; from workbench.cli import main; rc = main(['--batch', 'items', '--data', sys.argv[1], "
        "'--format', 'json']); assert rc == 0; print('TEXTUAL', any(m.startswith('textual') for m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(demo_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "TEXTUAL False" in proc.stdout and "no runs counted" in proc.stderr
