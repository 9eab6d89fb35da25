"""A scrollable view of lines rendered beforehand, off the UI thread (Textual's Line API).

Hand-written because a Static measures and renders its whole renderable in the UI thread, again
at every layout: the Run pane at 10,000 compile ids (14,800 Text objects) cost 100-160 ms a frame,
and the keys pressed meanwhile waited for it. Here the lines are rendered once, by the thread
that built the view (`render_strips`), and a frame draws only the lines on screen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from rich.console import Console, Group
from rich.style import Style
from textual import events
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip

from tlview.ui.keys import RENDERED_VIEW_BINDINGS
from tlview.ui.search import SEARCH_COMPONENTS, SEARCH_CSS
from tlview.ui.searchable_view import SearchableView
from tlview.ui.text_size import size_the_text

DRAWN_LINES = 256  # drawn lines kept (a few screens)


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


class RenderedView(SearchableView, can_focus=True):
    """Shows strips rendered elsewhere; keeps the renderable they came from (`content`: what `y`
    copies). `/` searches in what it shows (search.py)."""

    DEFAULT_CSS = SEARCH_CSS.format(view="RenderedView")
    COMPONENT_CLASSES = SEARCH_COMPONENTS
    BINDINGS: ClassVar[list[BindingType]] = RENDERED_VIEW_BINDINGS

    @dataclass
    class Opened(Message):
        """Enter or a click on text that names something to open (its style's meta, `opens`)."""

        view: RenderedView
        meta: dict

    def __init__(self, **kwargs) -> None:
        super().__init__(self, **kwargs)  # (its lines: itself, searched)
        self.content: Group = Group()
        self._strips: list[Strip] = []
        self._plain: list[str] | None = None  # the lines as text, made when first searched
        self._drawn: LRUCache[tuple, Strip] = LRUCache(DRAWN_LINES)
        self._shown = 0  # which content (a search of an older one is dropped)
        self._base: Style | None = None  # the view's style (render_line), until styles change

    def show(self, content: Group, strips: list[Strip]) -> None:
        self.content = content
        self._strips = strips
        self._plain = None
        self._shown += 1
        self._drawn.clear()
        size_the_text(self, Size(max((s.cell_length for s in strips), default=0), len(strips)))
        self.line_search.again()
        self.refresh()

    # ---- opening what a line names ----------------------------------------------------------

    def action_open_line(self) -> None:
        """What the current match names (a line may name several compile ids), else the first
        thing on screen that names one."""
        if self.search is not None and self.search.total:
            number, occurrence = self.search.position()
            column = self.search.column(self.search_lines()[number], occurrence)
            if meta := self._meta_at(number, column):
                self.post_message(self.Opened(self, meta))
                return
        first = self.scroll_offset.y
        for number in range(first, min(first + max(self.size.height, 1), len(self._strips))):
            if meta := self._meta_at(number):
                self.post_message(self.Opened(self, meta))
                return
        self.notify("nothing to open here: Enter opens a compile id of the Run pane's stack trie "
                    "(/ to find it first)", timeout=3)

    def _meta_at(self, number: int, column: int | None = None) -> dict | None:
        """The meta of line `number`'s text at `column` (None: its first), if any."""
        at = 0
        for segment in self._strips[number]:
            end = at + segment.cell_length
            if segment.style is not None and segment.style.meta and (column is None or at <= column < end):
                return dict(segment.style.meta)
            at = end
        return None

    def on_click(self, event: events.Click) -> None:
        if event.style.meta:
            self.post_message(self.Opened(self, dict(event.style.meta)))

    # ---- what its search asks (search.ShownLines) ---------------------------------------------

    @property
    def search_generation(self) -> int:
        return self._shown

    def search_lines(self) -> list[str]:
        if self._plain is None:
            self._plain = [strip.text for strip in self._strips]
        return self._plain

    def line_at(self, row: int) -> tuple[int, int]:
        return row, 0

    def row_of(self, line: int, column: int = 0) -> int:
        return line

    def search_width(self) -> int:
        return max(self.size.width - self.scrollbar_size_vertical, 10)

    def searched(self) -> None:
        self._drawn.clear()
        self.refresh()

    def _with_matches(self, number: int, strip: Strip) -> Strip:
        spans = self.search.spans(number, strip.text) if self.search is not None else []
        if not spans:
            return strip
        match, current = self.line_search.match_styles()
        pieces, at = [], 0
        for start, end, is_current in spans:  # (cells are characters: the views draw no wide text)
            pieces += [strip.crop(at, start), strip.crop(start, end).apply_style(current if is_current else match)]
            at = end
        pieces.append(strip.crop(at, strip.cell_length))
        return Strip.join(pieces)

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        number = scroll_y + y
        width = self.size.width
        key = (number, scroll_x, width)
        drawn = self._drawn.get(key)
        if drawn is None:
            if self._base is None:
                self._base = self.rich_style  # (it walks every ancestor: once per style change)
            base = self._base
            if number >= len(self._strips):
                drawn = Strip.blank(width, base)
            else:
                strip = self._with_matches(number, self._strips[number])
                strip = strip.crop(scroll_x, scroll_x + width).apply_style(base)
                drawn = strip.extend_cell_length(width, base)
            self._drawn[key] = drawn
        return drawn

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base = None
        self._drawn.clear()


class RenderedHere(RenderedView):
    """A RenderedView of a small renderable (a compile's Summary, its graph breaks), rendered here
    at the view's width (again when that changes): searchable as the big views are."""

    def update(self, content) -> None:
        self.content = content
        self._render_at(self._width())

    def _width(self) -> int:
        """The view's columns less its scrollbar's, shown or not: rendered before its scrollbar
        came (the text is what brings it), each wrapped line was one column wider than the view
        and lost its last character ("...at its first change" without its `:`)."""
        return max(20, (self.size.width or self.app.size.width // 2) - self.styles.scrollbar_size_vertical)

    def _render_at(self, width: int) -> None:
        self._rendered_width = width
        self.show(self.content, render_strips(Group(self.content), self.app.console, width))

    def on_resize(self) -> None:
        if self._width() != getattr(self, "_rendered_width", None):
            top = self.scroll_offset.y
            self._render_at(self._width())
            self.scroll_to(0, top, animate=False)
