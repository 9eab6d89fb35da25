"""Bookmarks (M, ' and "): marked in the tree, stepped through with wrapping, kept by a filter,
a rank switch and a rebuilt tree; on real runs."""

from __future__ import annotations

from conftest import CORPUS, GENERATED, SIZE, press, ready, said_by, until
from test_ui_compare import AFTER, BEFORE, compared

from tlview.ui.app import TlviewApp
from tlview.ui.compare_app import CompareApp
from tlview.views.bookmarks import MARK


def entry_of(app, cid: str, rank=None):
    return next(e for e in app.model.compile_entries() if e.node.id == cid and e.rank == rank)


def label_of(app, entry) -> str:
    node = app.tree.node_for_key(entry.key)
    return node.label.plain if node is not None else ""


async def go_to(app, pilot, cid: str, rank=None) -> None:
    app.tree.select_key(entry_of(app, cid, rank).key)
    await until(pilot, lambda: app.tree.entry.node.id == cid)


async def test_m_marks_the_row_and_again_unmarks_it():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        said = said_by(app)
        await go_to(app, pilot, "1/0")
        await press(pilot, "M")
        assert label_of(app, entry_of(app, "1/0")).startswith(f"{MARK} ")
        assert not label_of(app, entry_of(app, "0/0")).startswith(MARK)
        assert said[-1].startswith("bookmarked [1/0]: bookmark 1 of 1")
        await press(pilot, "M")
        assert not label_of(app, entry_of(app, "1/0")).startswith(MARK)
        assert len(app.bookmarks) == 0 and "removed" in said[-1]


async def test_next_and_previous_bookmark_wrap_after_saying_the_last():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        for cid in ("0/1", "2/0", "3/2"):
            await go_to(app, pilot, cid)
            await press(pilot, "M")
        await go_to(app, pilot, "0/0")
        said = said_by(app)
        at = []
        for key in ("apostrophe",) * 5 + ("quotation_mark",) * 2:
            await press(pilot, key)
            at.append(app.tree.entry.node.id)
        assert at == ["0/1", "2/0", "3/2", "3/2", "0/1", "0/1", "3/2"]
        assert said[:3] == ["bookmark 1 of 3: [0/1]", "bookmark 2 of 3: [2/0]", "bookmark 3 of 3: [3/2]"]
        assert said[3] == "that was the last bookmark: ' again goes to the first"
        assert said[5] == "that was the first bookmark: \" again goes to the last"


async def test_no_bookmarks_says_how_to_make_one():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        said = said_by(app)
        here = app.tree.entry
        await press(pilot, "apostrophe")
        assert app.tree.entry is here and said == ["no bookmarks: M bookmarks the selected compile id"]


async def test_bookmarks_survive_a_filter_and_its_clearing():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await go_to(app, pilot, "0/1")
        await press(pilot, "M")
        await go_to(app, pilot, "1/0")
        await press(pilot, "M")
        await press(pilot, "slash", *"recompiles", "enter")
        await until(pilot, lambda: "1/0" not in {e.node.id for e in app.model.compile_entries()})
        assert label_of(app, entry_of(app, "0/1")).startswith(MARK)  # drawn afresh, marked
        said = said_by(app)
        await go_to(app, pilot, "3/4")
        for _ in range(3):  # past the last, then wrapped to [0/1]: [1/0] is filtered out
            await press(pilot, "apostrophe")
        assert app.tree.entry.node.id == "0/1"
        assert said == ["that was the last bookmark: ' again goes to the first", "bookmark 1 of 1: [0/1]",
                        "[0/1] is the only bookmark"]
        await press(pilot, "escape")  # the filter cleared: both shown and marked
        await until(pilot, lambda: "1/0" in {e.node.id for e in app.model.compile_entries()})
        assert label_of(app, entry_of(app, "1/0")).startswith(MARK)
        assert label_of(app, entry_of(app, "0/1")).startswith(MARK)


async def test_bookmarks_survive_a_rank_switch():
    app = TlviewApp(str(GENERATED / "dist215" / "diverge4"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await go_to(app, pilot, "1/0", rank=3)
        await press(pilot, "M")
        while app.flt.rank != 3:
            await press(pilot, "right_square_bracket")
        assert label_of(app, entry_of(app, "1/0", rank=3)).startswith(MARK)
        while app.flt.rank is not None:
            await press(pilot, "right_square_bracket")
        assert label_of(app, entry_of(app, "1/0", rank=3)).startswith(MARK)
        await go_to(app, pilot, "0/0", rank=3)
        await press(pilot, "apostrophe")
        assert (app.tree.entry.rank, app.tree.entry.node.id) == (3, "1/0")


async def test_the_compare_view_says_bookmarks_and_the_time_jump_are_the_explorers():
    app = CompareApp(BEFORE, AFTER)
    async with app.run_test(size=SIZE) as pilot:
        await compared(app, pilot)
        said = said_by(app)
        here = app.tree.cursor_node
        await press(pilot, "M", "apostrophe", "quotation_mark", "t")
        assert app.tree.cursor_node is here and len(app.screen_stack) == 1
        assert [s.split(":")[-1].strip() for s in said] == ["not in the compare view"] * 4
