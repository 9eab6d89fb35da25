"""`?` at a small terminal: the help is longer than the screen, and reads as a pane does
(j/k, space, g/G), and it tells the mouse (#48)."""

from __future__ import annotations

from conftest import CORPUS, press, until

from tlview.ui.app import TlviewApp
from tlview.ui.help_screen import HelpScreen, legend


async def test_j_space_and_g_scroll_the_help_at_80x24():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.tree.cursor_node is not None, what="the tree")
        await press(pilot, "question_mark")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        view = app.screen.query_one("VerticalScroll")
        await until(pilot, lambda: view.max_scroll_y > 0, what="the help laid out")
        await press(pilot, "j")
        assert view.scroll_y == 1
        await press(pilot, "space")
        assert view.scroll_y > 2
        await press(pilot, "G")
        assert view.scroll_y == view.max_scroll_y
        await press(pilot, "g")
        assert view.scroll_y == 0
        await press(pilot, "escape")
        assert not isinstance(app.screen, HelpScreen)


def test_the_help_tells_the_mouse():
    assert "Mouse:" in legend().plain
