"""A filter hides rows and never moves them: the rows it shows keep the tree's order, and clearing
it gives back the tree as it was (#48: a filter once moved `forward :18` to the end of the tree;
`]` twice once drew rank 0's root over rank 1's ids: both the drawn-line cache, mended in
FrameTree.show_model, with its own test in test_frame_tree.py)."""

from pathlib import Path

import pytest
from conftest import press, ready, type_in, until

from tlview.index.indexing import open_index
from tlview.ui.app import TlviewApp
from tlview.ui.frame_tree import FrameTree
from tlview.views.filters import Filter
from tlview.views.tree import TreeModel

FIXTURES = Path(__file__).parent.parent / "fixtures"


def drawn_rows(tree: FrameTree) -> list[str]:
    """Every row of the tree as drawn: each label's plain text, depth first."""
    rows: list[str] = []

    def walk(node) -> None:
        for child in node.children:
            rows.append(child.label.plain)
            walk(child)

    walk(tree.root)
    return rows


def is_subsequence(part: list[str], whole: list[str]) -> bool:
    rest = iter(whole)
    return all(any(row == seen for seen in rest) for row in part)


def frame_titles(model: TreeModel) -> list[str]:
    return [entry.title for entry in model.roots if entry.kind == "frame"]


@pytest.mark.parametrize("log", ["trace", "torch_logs.txt"])
def test_a_frame_stays_where_it_began_when_its_first_compile_id_is_hidden(log):
    """forward [0/0], loss [1/0], loss [1/1], forward [0/1]: under `recompiles` forward shows
    [0/1] only, which came after loss's [1/1]; forward still comes first."""
    index = open_index(str(FIXTURES / "generated" / "filter_order" / log))
    whole = frame_titles(TreeModel(index))
    assert [t.split()[0] for t in whole] == ["forward", "loss"]
    recompiled = TreeModel(index, Filter.parse("recompiles"))
    assert frame_titles(recompiled) == whole
    assert [e.node.id for e in recompiled.compile_entries()] == ["0/1", "1/1"]


@pytest.mark.parametrize("run,words", [
    ("generated/filter_order/trace", ["recompiles"]),
    ("generated/answers/trace", ["graph_breaks", "recompiles", "mul"]),  # mul: found in payloads too
    ("corpus/distributed/trace", ["graph_breaks", "rank:1"]),
])
async def test_a_filter_keeps_the_tree_s_order_and_clearing_it_gives_the_tree_back(run, words):
    app = TlviewApp(str(FIXTURES / run))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        tree = app.query_one(FrameTree)
        whole = drawn_rows(tree)
        for word in words:
            tree.focus()
            await press(pilot, "slash")
            await type_in(pilot, word)
            await press(pilot, "enter")
            await until(pilot, lambda: app.model.hidden > 0, what=f"{word} hiding rows")
            shown = drawn_rows(tree)
            assert shown and len(shown) < len(whole)
            # a row's counts may read differently under a filter ("2 of 4 ids"): compare the places
            assert is_subsequence([row.split("  ")[0] for row in shown], [row.split("  ")[0] for row in whole])
            tree.focus()
            await press(pilot, "escape")
            await until(pilot, lambda: app.model.hidden == 0, what="the filter cleared")
            assert drawn_rows(tree) == whole
