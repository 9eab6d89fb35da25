"""The base of the views of lines that `/`, `n`, `N` search: the payload views (payload_view.py)
and the rendered ones (rendered_view.py). It owns their search and their sizes seen; Textual finds
the keys' `action_*` on the widget by name, so they are written here once."""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView

from tlview.ui.search import LineSearch, Matches, ShownLines
from tlview.ui.text_size import SizesSeen, make_scrollbars

SIDEWAYS = 8  # columns that h / l (← / →) scroll: a few, as a glance along the line


class SearchableView(ScrollView):
    """A scroll view of lines with a search (`line_search`, on the `lines` the subclass shows:
    itself) and its scrollbars updated only when a size changed. It has no DEFAULT_CSS: a
    subclass's own (and ScrollView's, along the first bases) apply as before."""

    def __init__(self, lines: ShownLines, **kwargs) -> None:
        super().__init__(**kwargs)
        self._sizes_seen = SizesSeen()
        self.line_search = LineSearch(self, lines)

    # ---- what Textual asks of the widget itself ------------------------------------------------

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        return (self._sizes_seen.changed(size, container_size, self.virtual_size)
                and super()._size_updated(size, virtual_size, container_size, layout))

    def on_mount(self) -> None:
        self.call_after_refresh(make_scrollbars, self)

    # ---- scrolling sideways (h, l, Home) ----------------------------------------------------------

    def action_scroll_sideways(self, step: int) -> None:
        if not self.scrolls_sideways() or (self.max_scroll_x == 0 and self.scroll_offset.x == 0):
            self.notify(self.nothing_sideways(), timeout=1.5)
            return
        self.scroll_to(x=self.scroll_offset.x + step * SIDEWAYS, animate=False, immediate=True)

    def scrolls_sideways(self) -> bool:
        """Its long lines are cut at its width, to scroll sideways (not wrapped)."""
        return True

    def action_scroll_line_start(self) -> None:
        self.scroll_to(x=0, animate=False, immediate=True)

    def nothing_sideways(self) -> str:
        """Said when h / l find nothing to scroll sideways."""
        return "every line fits the pane: nothing to scroll sideways"

    # ---- the search (search.LineSearch) ----------------------------------------------------------

    def action_search(self) -> None:
        self.line_search.ask()

    def action_next_match(self, step: int) -> None:
        self.line_search.next_match(step)

    def action_end_search(self) -> None:
        self.line_search.end_or_skip()

    @property
    def search(self) -> Matches | None:
        """The matches of the search in this view, None when not searching."""
        return self.line_search.matches
