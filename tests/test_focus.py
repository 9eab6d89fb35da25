"""Where the focus goes (#48): Esc in a pane goes back to the tree (then clears the filter), and
Tab never lands on a list with nothing in it."""

from __future__ import annotations

from conftest import CORPUS, press, type_in, until

from tlview.ui.app import TlviewApp
from tlview.ui.recompiles_pane import RecompileList


async def test_esc_in_a_pane_goes_back_to_the_tree_then_clears_the_filter():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.tree.cursor_node is not None, what="the tree")
        await press(pilot, "slash")
        await type_in(pilot, "recompiles")
        await press(pilot, "enter")  # the filter kept, the bar closed
        await until(pilot, lambda: app.flt.active and not app.filter_bar.display, what="the filter")
        await press(pilot, "tab")
        assert app.focused is not app.tree
        await press(pilot, "escape")
        assert app.focused is app.tree and app.flt.active  # back to the tree, the filter kept
        await press(pilot, "escape")
        assert not app.flt.active  # from the tree: the filter cleared


async def test_tab_skips_the_recompile_list_when_it_is_empty():
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.tree.cursor_node is not None, what="the tree")
        await press(pilot, "4")
        reasons = app.query_one(RecompileList)
        await until(pilot, lambda: app.detail.active == "recompiles", what="the Recompiles pane")
        for _ in range(10):  # a compile id that did not recompile and was not replaced
            if app.tree.entry is not None and app.tree.entry.kind == "compile" and reasons.option_count == 0:
                break
            await press(pilot, "j")
        assert reasons.option_count == 0
        for _ in range(4):
            await press(pilot, "tab")
            assert app.focused is not reasons
