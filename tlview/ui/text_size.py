"""A scrolling view's text size, with its scrollbars decided at once."""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView


def size_the_text(view: ScrollView, size: Size) -> None:
    """Set `view`'s virtual size, and whether it needs scrollbars now: left to the layout that
    follows, the text was drawn at full width, then a frame later (60 ms on a 10 MB trace) drawn
    again one column narrower, with the scrollbar, and its thumb a frame after that. Textual has
    no public call for it."""
    view.virtual_size = size
    view._scroll_update(size)  # (what the layout does: scrollbars shown, and their thumbs sized)


def make_scrollbars(view: ScrollView) -> None:
    """Textual makes a view's scrollbars the first time it shows them, and starts them then: they
    were drawn in two frames of their own after the text (147 and 158 ms after the key that first
    opened the Guards pane on a 10 MB trace, the text at 111 ms). Made while the app is idle, they
    are ready when the text comes."""
    for make in (lambda: view.vertical_scrollbar, lambda: view.horizontal_scrollbar,
                 lambda: view.scrollbar_corner):
        make()
