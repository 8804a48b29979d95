"""The item browser and item view over the real app and a real store: filters, the citation tree's marks, the
trajectories on an item (into the stepper), the 'right' counts against the store and `--batch items`, audit mode
reached at the item, play handed over, a moved release, a big neighbourhood built lazily; snapshots."""

from __future__ import annotations

import json
from types import SimpleNamespace

from textual.app import App
from textual.widgets import Input, Select
from tui_support import make_app, settle

from sandbox.datasets import open_dataset
from storage import Store
from workbench.cli import main
from workbench.service.neighbourhood import Neighbourhood
from workbench.tui.widgets.citations import NeighbourhoodTree

SIZE = (120, 36)
ITEM = "mt_0002"  # multi-target, depth 2 (bridges and two golds), in three of the four seeded runs


def _corpus(cache):
    corpus, _ = open_dataset("builtin", cache)
    return corpus


async def _browser(pilot):
    await pilot.pause()
    await pilot.press("i")
    await settle(pilot, pilot.app)
    assert type(pilot.app.screen).__name__ == "ItemsScreen"
    return pilot.app.screen


async def _open_item(pilot, item_id: str):
    screen = await _browser(pilot)
    await pilot.press("slash", *item_id, "enter")
    await pilot.pause()
    assert [r.id for r in screen.shown] == [item_id]
    await pilot.press("enter")
    await settle(pilot, pilot.app)
    assert type(pilot.app.screen).__name__ == "ItemScreen"
    return pilot.app.screen


def _right_cells(screen) -> dict[str, str]:
    table = screen.query_one("#items-table")
    return {str(key.value): str(table.get_row(key)[6]) for key in table.rows}


async def test_browse_filter_open_tree_and_step_through(seeded, builtin_cache):
    corpus = _corpus(builtin_cache)
    item = corpus.item(ITEM)
    store = Store(seeded, readonly=True)
    expected = store.item_trajectories(corpus.fingerprint, ITEM)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _browser(pilot)
        assert len(screen.shown) == len(corpus.items)
        screen.query_one("#filter-kind", Select).value = "mt"
        screen.query_one("#filter-depth", Select).value = 2
        await pilot.pause()
        assert screen.shown and all(r.kind == "mt" and r.depth == 2 for r in screen.shown)
        assert len(screen.shown) == sum(1 for i in corpus.items if i.kind == "mt" and i.depth == 2)
        screen.query_one("#filter-right", Select).value = "unrun"
        await pilot.pause()
        assert ITEM not in [r.id for r in screen.shown]  # three runs have it
        await pilot.press("x")  # clear every filter
        await pilot.pause()
        assert len(screen.shown) == len(corpus.items)

        await pilot.press("escape")  # leave the browser, open the item through the text filter
        await pilot.pause()
        view = await _open_item(pilot, ITEM)
        tree = view.query_one(NeighbourhoodTree)
        marks = {}
        for node in tree.nodes_shown():
            if node.data is not None and node.data.s2id in view.nb.nodes:
                marks.setdefault(node.data.s2id, str(node.label).split()[1])
        assert tree.root.data.s2id == item.seed_paper_id and marks[item.seed_paper_id] == "seed"
        assert {s for s, m in marks.items() if m == "gold"} == set(item.gold_paper_ids)  # gold path opened
        assert {s for s, m in marks.items() if m == "bridge"} == set(item.bridge_paper_ids)
        assert tree.cursor_node.data.s2id == item.gold_paper_ids[0]

        table = view.query_one("#item-trajectories")
        assert [int(k.value) for k in table.rows] == [t["id"] for t in expected]
        await pilot.press("r", "down", "enter")
        await settle(pilot, app)
        stepper = app.screen
        assert type(stepper).__name__ == "StepperScreen"
        assert stepper.traj["id"] == expected[1]["id"] and stepper.run["name"] == expected[1]["run"]
        await pilot.press("n")
        await settle(pilot, app)
        assert stepper.traj["item_id"] == ITEM and stepper.run["name"] == expected[2]["run"]  # the run follows


async def test_right_counts_equal_the_store_and_the_batch_command(seeded, builtin_cache, capsys):
    corpus = _corpus(builtin_cache)
    outcomes = Store(seeded, readonly=True).item_outcomes(corpus.fingerprint)
    assert main(["--batch", "items", "--format", "json"]) == 0
    batch = json.loads(capsys.readouterr().out)
    assert batch["runs"] == ["heur-s0", "oracle-nosearch", "scripted-[b]llm[/b]", "random-s1"]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _browser(pilot)
        cells = _right_cells(screen)
    expected = {i.id: ("{}/{}".format(*outcomes[i.id]) if i.id in outcomes else "—") for i in corpus.items}
    assert cells == expected
    assert {r["id"]: f"{r['right']}/{r['ran']}" if r["ran"] else "—" for r in batch["items"]} == cells
    assert outcomes[ITEM][1] == 3  # the scripted run has only the first two items


async def _palette(pilot, title: str) -> None:
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*title)
    await settle(pilot, pilot.app)
    await pilot.press("enter")
    await settle(pilot, pilot.app)


async def _back(pilot, to: str) -> None:
    await pilot.press("escape")
    await pilot.pause()
    assert type(pilot.app.screen).__name__ == to


async def test_audit_play_and_palette_from_the_browser_and_the_item_view(seeded, isolated):
    (isolated / "config.toml").write_text('[audit]\nreviewer = "ana"\n')
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await _palette(pilot, "Audit the benchmark")  # from the runs list: only builtin is known, no question asked
        audit = app.screen
        assert type(audit).__name__ == "AuditScreen"
        assert audit.current == audit.corpus.items[0].id and audit.reviewer == "ana"
        await _back(pilot, "RunsScreen")

        await _open_item(pilot, ITEM)
        await pilot.press("a")  # audit mode on this dataset, at this item
        await settle(pilot, app)
        audit = app.screen
        assert type(audit).__name__ == "AuditScreen" and audit.current == ITEM
        table = audit.query_one("#audit-items")
        assert str(table.get_row_at(table.cursor_row)[0]) == ITEM
        await _back(pilot, "ItemScreen")
        await _palette(pilot, "Audit the benchmark")  # the palette too takes the item in view
        assert type(app.screen).__name__ == "AuditScreen" and app.screen.current == ITEM
        await _back(pilot, "ItemScreen")

        calls = []
        app.play_items = lambda dataset, ids, fingerprint=None: calls.append((dataset, ids, fingerprint))  # recorded
        # (the play screen itself, and its refusal of an item played before, are tested in test_play.py)
        await pilot.press("p")
        await _back(pilot, "ItemsScreen")
        await pilot.press("p")  # from the browser: the highlighted item
        await pilot.pause()
        fp = app.screen.corpus.fingerprint
        assert calls == [("builtin", [ITEM], fp), ("builtin", [ITEM], fp)]

        await _back(pilot, "RunsScreen")
        await _palette(pilot, "Browse items")
        assert type(app.screen).__name__ == "ItemsScreen"


async def test_a_moved_release_says_so(seeded, isolated):
    from workbench.tui.screens.items import ItemsScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.push_screen(ItemsScreen(str(isolated / "moved-release")))
        await settle(pilot, app)
        message = app.screen.query_one("#items-message")
        assert message.display and "Cannot open the dataset moved-release" in str(message.render())
        assert "is gone (moved or deleted)" in str(message.render())
        assert not app.screen.query_one("#items-table").display


def _big_view(fanout: int = 30):
    """A neighbourhood of fanout² + fanout + 1 papers (931): seed → 30 references → 30 each; gold at depth 2."""

    def node(s2id, i):
        return SimpleNamespace(
            data={"title": f"Paper [b]{i}[/b]", "year": 2000 + i % 20}, arxiv_id=f"2001.{i:05d}", has_text=i % 3 != 0
        )

    refs = [f"r{i}" for i in range(fanout)]
    edges = {"seed": refs, **{r: [f"{r}.{j}" for j in range(fanout)] for r in refs}}
    ids = ["seed", *refs, *(c for r in refs for c in edges[r])]
    nodes = {s: node(s, i) for i, s in enumerate(ids)}
    item = SimpleNamespace(seed_paper_id="seed", bridge_paper_ids=("r7",), gold_paper_ids=("r7.3",))
    return SimpleNamespace(item=item, nodes=nodes, edges=edges)


async def test_at_80_columns_the_search_box_stays_on_the_bar_and_a_resize_re_clips_the_questions(seeded, builtin_cache):
    corpus = _corpus(builtin_cache)
    longest = max(len(" ".join(i.question.split())) for i in corpus.items)
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _browser(pilot)
        search = screen.query_one("#filter-text").region
        assert search.right <= 80 and search.width >= 12 and search.y == screen.query_one("#filter-kind").region.y

        def widest() -> int:
            table = screen.query_one("#items-table")
            return max(len(str(table.get_row_at(i)[7])) for i in range(table.row_count))

        assert widest() == 30  # clipped to what 80 columns leave (at least 30)
        await pilot.resize_terminal(140, 30)
        await pilot.pause()
        await pilot.pause()
        assert widest() == min(longest, 140 - 72)  # the wider terminal gets longer questions
        assert widest() > 30


async def test_a_big_neighbourhood_is_built_lazily():
    class TreeApp(App):
        def compose(self):
            yield NeighbourhoodTree()

    nb = Neighbourhood(_big_view())
    assert len(nb.nodes) == 931
    app = TreeApp()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(NeighbourhoodTree)
        tree.show(nb)
        await pilot.pause()
        built = tree.nodes_shown()
        assert len(built) == 1 + 30 + 30  # the seed, its references, the bridge's references: the gold path
        assert tree.cursor_node.data.s2id == "r7.3" and "[b]" in str(tree.cursor_node.label)  # literal, not markup
        first = tree.root.children[0]
        assert not first.children
        first.expand()
        await pilot.pause()
        assert len(first.children) == 30 and len(tree.nodes_shown()) == 91


def test_browser_snapshot(snap_compare, seeded):
    async def run_before(pilot):
        screen = await _browser(pilot)
        await pilot.press("s", "s", "s", "s", "s", "s", "s")  # sorted by right
        screen.query_one("#filter-text", Input).value = "memory layout"
        screen.query_one("#filter-kind", Select).value = "mt"
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_item_view_snapshot(snap_compare, seeded):
    async def run_before(pilot):
        await _open_item(pilot, ITEM)
        await pilot.press("g")
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
