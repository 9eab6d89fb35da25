"""`/`, `n`, `N` in a view of lines, as `less` does: shared by the payload views (graphs, code,
guards) and the rendered ones (Summary, Graph breaks, Run). The view says what its lines are and
where each is drawn; the search bar (searching.py) types the query."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from textual.actions import SkipAction
from textual.message import Message

from tlview.ui.text_search import TextSearch, display_line

SEARCH_IN_THREAD = 10_000  # lines: a bigger text is searched off the UI thread

SEARCH_CSS = """
    {view} > .search--match {{ background: $warning 35%; }}
    {view} > .search--match-current {{ background: $warning; color: $background; text-style: bold; }}
    {view}.-searching {{ border-bottom: hkey $accent; border-subtitle-align: left;
                         border-subtitle-color: $text; }}
"""
SEARCH_COMPONENTS = {"search--match", "search--match-current"}


@dataclass
class SearchAsked(Message):
    """`/` in a searchable view: the app opens the search bar for it."""

    view: SearchableLines


class SearchableLines:
    """Mixed into a ScrollView. The view gives `search_lines()` (each line as drawn, plain),
    `search_generation` (changes when the text does), `_line_at(row)` and `_row(line, column)`."""

    search: TextSearch | None = None

    def search_lines(self) -> list[str]:
        raise NotImplementedError

    search_generation = 0

    def _line_at(self, row: int) -> tuple[int, int]:
        return row, 0

    def _row(self, line: int, column: int = 0) -> int:
        return line

    def _scrolls_sideways(self) -> bool:
        return True

    def _search_width(self) -> int:
        return max(self.size.width - self.scrollbar_size_vertical, 10)

    def action_search(self) -> None:
        self.post_message(SearchAsked(self))

    def search_again(self) -> None:
        """The text changed: the same query in the new text, where the view is."""
        if self.search is not None:
            self.search_for(self.search.query, move=False)

    def search_for(self, query: str, move: bool = True) -> None:
        """Highlight every match of `query` and go to the first at or below the top (as `less`)."""
        if not query:
            self.end_search()
            return
        lines = self.search_lines()
        if len(lines) > SEARCH_IN_THREAD:
            self.run_worker(partial(self._search_in_thread, query, lines, self.search_generation, move),
                            name="search", group="view-search", thread=True, exclusive=True,
                            exit_on_error=False)
            return
        self._searched(TextSearch(query, lines), self.search_generation, move)

    def _search_in_thread(self, query: str, lines: list[str], generation: int, move: bool) -> None:
        found = TextSearch(query, lines)
        try:
            self.app.call_from_thread(self._searched, found, generation, move)
        except RuntimeError:  # the app closed meanwhile
            pass

    def _searched(self, found: TextSearch, generation: int, move: bool) -> None:
        if generation != self.search_generation:
            return  # searched in a text no longer shown
        self.search = found
        if move:
            found.move(1, from_line=self._line_at(self.scroll_offset.y)[0])
            self._show_match()
        self._show_search_state()
        self.searched()

    def searched(self) -> None:
        """The matches changed: drawn again."""
        self.refresh()

    def action_end_search(self) -> None:
        if self.search is None:
            raise SkipAction()  # Esc goes on to the app: it clears the filter
        self.end_search()

    def end_search(self) -> None:
        self.search = None
        self.remove_class("-searching")
        self.border_subtitle = ""
        self.searched()

    def action_next_match(self, step: int) -> None:
        found = self.search
        if found is None:
            self.notify("no search here yet: / searches in this pane", timeout=2)
            return
        if not found.total:
            self.notify(found.describe(), timeout=2)
            return
        if not found.move(step):
            self.notify("search wrapped to the " + ("top" if step > 0 else "bottom"), timeout=1.5)
        self._show_match()
        self._show_search_state()
        self.searched()

    def _show_search_state(self) -> None:
        self.add_class("-searching")
        self.border_subtitle = f"{self.search.describe()}  (n / N: next / previous, Esc: end)"

    def _show_match(self) -> None:
        """Scroll so that the current match is in view, a third down the page; one in view
        already stays where it is (as in less: the page does not jump at each character typed,
        and a jump drew every line and the scrollbar again)."""
        if not self.search or not self.search.total:
            return
        line, occurrence = self.search.position()
        column = self.search.column(display_line(self.search_lines()[line]), occurrence)
        row = self._row(line, column)
        x, y = self.scroll_offset
        if not y <= row < y + self.scrollable_content_region.height:
            y = max(0, row - self.size.height // 3)
        if self._scrolls_sideways() and not (x <= column < x + self._search_width() - len(self.search.query)):
            x = max(0, column - 10)
        self.scroll_to(x, y, animate=False)

    def match_styles(self):
        return (self.get_component_rich_style("search--match"),
                self.get_component_rich_style("search--match-current"))
