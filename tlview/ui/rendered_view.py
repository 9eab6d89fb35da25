"""A scrollable view of lines rendered beforehand, off the UI thread (Textual's Line API).

Hand-written because a Static measures and renders its whole renderable in the UI thread, again
at every layout: the Run pane at 10,000 compile ids (14,800 Text objects) cost 100-160 ms a frame,
and the keys pressed meanwhile waited for it. Here the lines are rendered once, by the thread
that built the view (`render_strips`), and a frame draws only the lines on screen.
"""

from __future__ import annotations

from typing import Callable

from rich.console import Console, Group
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tlview.ui.reading_keys import SCROLL_BINDINGS

DRAWN_LINES = 512  # drawn lines kept (a few screens)


def render_strips(view: Group, console: Console, width: int,
                  between: Callable[[], None] = lambda: None) -> list[Strip]:
    """The lines of `view` at `width`, one part of the group at a time (a Group draws its parts
    one below the other), calling `between()` after each: where the caller steps back for keys
    or stops."""
    options = console.options.update(width=width, highlight=False)
    strips: list[Strip] = []
    for part in view.renderables:
        strips += [Strip(line) for line in console.render_lines(part, options, pad=False)]
        between()
    return strips


class RenderedView(ScrollView, can_focus=True):
    """Shows strips rendered elsewhere; keeps the renderable they came from (`content`: what `y`
    copies)."""

    BINDINGS = SCROLL_BINDINGS

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.content: Group = Group()
        self._strips: list[Strip] = []
        self._drawn: LRUCache[tuple, Strip] = LRUCache(DRAWN_LINES)

    def show(self, content: Group, strips: list[Strip]) -> None:
        self.content = content
        self._strips = strips
        self._drawn.clear()
        self.virtual_size = Size(max((s.cell_length for s in strips), default=0), len(strips))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        number = scroll_y + y
        width = self.size.width
        key = (number, scroll_x, width)
        drawn = self._drawn.get(key)
        if drawn is None:
            base = self.rich_style
            if number >= len(self._strips):
                drawn = Strip.blank(width, base)
            else:
                strip = self._strips[number].crop(scroll_x, scroll_x + width).apply_style(base)
                drawn = strip.extend_cell_length(width, base)
            self._drawn[key] = drawn
        return drawn

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn.clear()

