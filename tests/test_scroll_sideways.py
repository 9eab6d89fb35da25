"""Scrolling sideways in a pane (#48): h / ← and l / → scroll long lines a few columns, Home and 0
go back to their start (a search that scrolled right is undone); in the tree the same keys still
fold and unfold; where nothing is wider than the pane, or lines are wrapped, the keys say so."""

from __future__ import annotations

from conftest import CORPUS, press, ready, type_in, until

from tlview.ui.app import TlviewApp
from tlview.ui.payload_view import PayloadView
from tlview.ui.rendered_view import RenderedView
from tlview.ui.searchable_view import SIDEWAYS

SIZE = (120, 40)


async def guards_searched_right(app, pilot) -> PayloadView:
    """The Guards pane of [0/0], focused, searched for a word far right of its line, then Esc."""
    await press(pilot, "3", "enter")
    view = app.focused
    assert isinstance(view, PayloadView)
    await press(pilot, "j", "j", "j", "slash")  # (down a little: the match is on screen)
    await type_in(pilot, "num_threads")
    await press(pilot, "enter", "escape")
    assert view.scroll_offset.x > 100  # the match is 380 columns in
    return view


async def test_h_l_and_home_scroll_a_payload_sideways_after_a_search():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        view = await guards_searched_right(app, pilot)
        right = view.scroll_offset.x
        await press(pilot, "h")
        assert view.scroll_offset.x == right - SIDEWAYS
        await press(pilot, "left")
        assert view.scroll_offset.x == right - 2 * SIDEWAYS
        await press(pilot, "home")  # back to the start of the lines, on the same line
        assert view.scroll_offset.x == 0 and view.scroll_offset.y > 0
        await press(pilot, "l", "right")
        assert view.scroll_offset.x == 2 * SIDEWAYS
        await press(pilot, "0")
        assert view.scroll_offset.x == 0
        await press(pilot, "h")  # at the start: stays there
        assert view.scroll_offset.x == 0


async def test_in_the_tree_h_and_l_still_fold():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await guards_searched_right(app, pilot)
        app.tree.focus()
        await press(pilot, "h", "h")  # to the frame, then folded
        assert "▶ forward" in app.tree.render_line(0).text
        await press(pilot, "l")
        assert "▼ forward" in app.tree.render_line(0).text


async def test_where_nothing_is_wider_or_lines_are_wrapped_the_keys_say_so():
    app = TlviewApp(str(CORPUS / "model"))
    notes: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        app.notify = lambda message, **kw: notes.append(message)  # type: ignore[method-assign]
        await press(pilot, "1", "enter")  # the Summary: wrapped to the pane, nothing wider
        assert isinstance(app.focused, RenderedView)
        await press(pilot, "l")
        assert app.focused.scroll_offset.x == 0 and notes[-1].startswith("every line fits the pane")
        await press(pilot, "3", "enter", "w")
        view = app.focused
        assert isinstance(view, PayloadView) and view.wrap
        await press(pilot, "l")
        assert view.scroll_offset.x == 0 and notes[-1].startswith("long lines are wrapped: w cuts them")
        await press(pilot, "w", "l")  # cut again: they scroll
        await until(pilot, lambda: view.scroll_offset.x == SIDEWAYS, what="l to scroll")
