"""Search in a view of lines, as `less` and vim do: `/` opens the search bar at the bottom (matches
are highlighted as the query is typed, Enter keeps them, Esc ends the search), `n`/`N` move through
them. The query is a regular expression, as in less and lnav (one that is not valid is searched as
its text, and the border says so); smart case (case-insensitive unless the query has a capital),
every occurrence counted.

The UI's one search module: the matches of a query (`Matches`), a view's search (`LineSearch`,
owned by each searchable view: the payload views and the rendered ones), and the bar that types
the query (`SearchBar`). The model's search of payloads over compile ids is views/search.py.

Matches are counted per line (line numbers and counts, not one object per occurrence): a query
like `a` in a 100,000-line graph is a few hundred thousand hits and must stay small.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, Protocol

from rich.style import Style
from textual import on
from textual.actions import SkipAction
from textual.binding import BindingType
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.widgets import Input

from tlview.textsafe import visible
from tlview.ui.bar_input import BarInput
from tlview.ui.keys import SEARCH_BAR_BINDINGS
from tlview.views.text_query import text_query

MAX_LINE = 4000  # characters shown (and searched) per line: a 10 MB single-line payload must not stall
SEARCH_IN_THREAD = 10_000  # lines: a bigger text is searched off the UI thread

SEARCH_CSS = """
    {view} > .search--match {{ background: $warning 35%; }}
    {view} > .search--match-current {{ background: $warning; color: $background; text-style: bold; }}
    {view}.-searching {{ border-bottom: hkey $accent; border-subtitle-align: left;
                         border-subtitle-color: $text; }}
"""
SEARCH_COMPONENTS = {"search--match", "search--match-current"}


def display_line(line: str) -> str:
    """A payload line as the pane draws it (and as search counts it): cut, tabs expanded, safe."""
    return visible(line[:MAX_LINE].expandtabs(4))


class Matches:
    """The matches of `query` (a regex, text_query.py) in `lines` (displayed forms), and which
    one is current."""

    def __init__(self, query: str, lines: list[str]) -> None:
        self.query = query
        self.pattern = text_query(query)
        self.lines: list[int] = []  # line numbers with a match, in order
        self.first: list[int] = []  # the match number of each such line's first match
        self.total = 0
        if query:
            count = self.pattern.count
            for number, line in enumerate(lines):
                found = count(display_line(line))
                if found:
                    self.lines.append(number)
                    self.first.append(self.total)
                    self.total += found
        self._on_line = {line: i for i, line in enumerate(self.lines)}
        self.current = 0  # match number, 0-based

    def has_match(self, line: int) -> bool:
        return line in self._on_line

    def spans(self, line: int, shown: str) -> list[tuple[int, int, bool]]:
        """(start, end, is_current) of the matches in line `line`, drawn as `shown`."""
        at = self._on_line.get(line)
        if at is None:
            return []
        first = self.first[at]
        return [(start, end, first + k == self.current)
                for k, (start, end) in enumerate(self.pattern.spans(shown))]

    def position(self) -> tuple[int, int]:
        """(line, occurrence within the line) of the current match."""
        at = bisect_right(self.first, self.current) - 1
        return self.lines[at], self.current - self.first[at]

    def column(self, shown: str, occurrence: int) -> int:
        """Where match `occurrence` of line `shown` starts."""
        spans = self.pattern.spans(shown)
        return spans[occurrence][0] if occurrence < len(spans) else 0

    def width(self, shown: str, occurrence: int) -> int:
        """The columns match `occurrence` of line `shown` takes."""
        spans = self.pattern.spans(shown)
        return spans[occurrence][1] - spans[occurrence][0] if occurrence < len(spans) else 0

    def move(self, step: int, from_line: int | None = None) -> bool:
        """To the next (1) or previous (-1) match; from `from_line` (the view's top) on the first
        move. False when it wrapped around the end (the caller says so)."""
        if not self.total:
            return True
        if from_line is not None:  # the first match at or after the top of the view
            at = bisect_right(self.lines, from_line - 1)
            self.current = self.first[at] if at < len(self.lines) else 0
            return at < len(self.lines)
        target = self.current + step
        self.current = target % self.total
        return 0 <= target < self.total

    def describe(self) -> str:
        said = "" if self.pattern.is_regex else " (not a regex: searching the text)"
        if not self.total:
            return f"/{self.query}{said}: no match"
        return f"/{self.query}{said}: match {self.current + 1:,} of {self.total:,}"


class ShownLines(Protocol):
    """What a searchable view tells its LineSearch: its lines, and where each is drawn."""

    @property
    def search_generation(self) -> int:
        """Changes when the text does (a search of an older text is dropped)."""
        ...

    def search_lines(self) -> list[str]:
        """Each line as drawn, plain."""
        ...

    def line_at(self, row: int) -> tuple[int, int]:
        """(line, row within the line) drawn at virtual row `row`."""
        ...

    def row_of(self, line: int, column: int = 0) -> int:
        """The virtual row where `column` of `line` is drawn."""
        ...

    def scrolls_sideways(self) -> bool: ...

    def search_width(self) -> int:
        """The columns the lines are drawn in."""
        ...

    def searched(self) -> None:
        """The matches changed: drawn again."""
        ...


@dataclass
class SearchAsked(Message):
    """`/` in a searchable view: the app opens the search bar for its search."""

    search: LineSearch


class LineSearch:
    """`/`, `n`, `N` in one view of lines (a ScrollView), as `less` does: its matches, highlighted
    by the view (`matches`, `match_styles`), the current one scrolled into view, and its state on
    the view's bottom border."""

    def __init__(self, view: ScrollView, lines: ShownLines) -> None:
        self.view = view
        self.lines = lines
        self.matches: Matches | None = None

    def ask(self) -> None:
        """`/`: the app opens the search bar for this view."""
        self.view.post_message(SearchAsked(self))

    def again(self) -> None:
        """The text changed: the same query in the new text, where the view is."""
        if self.matches is not None:
            self.search_for(self.matches.query, move=False)

    def search_for(self, query: str, move: bool = True) -> None:
        """Highlight every match of `query` and go to the first at or below the top (as `less`)."""
        if not query:
            self.end()
            return
        lines = self.lines.search_lines()
        if len(lines) > SEARCH_IN_THREAD:
            self.view.run_worker(partial(self._search_in_thread, query, lines, self.lines.search_generation, move),
                                 name="search", group="view-search", thread=True, exclusive=True,
                                 exit_on_error=False)
            return
        self._searched(Matches(query, lines), self.lines.search_generation, move)

    def _search_in_thread(self, query: str, lines: list[str], generation: int, move: bool) -> None:
        found = Matches(query, lines)
        try:
            self.view.app.call_from_thread(self._searched, found, generation, move)
        except RuntimeError:  # the app closed meanwhile
            pass

    def _searched(self, found: Matches, generation: int, move: bool) -> None:
        if generation != self.lines.search_generation:
            return  # searched in a text no longer shown
        self.matches = found
        if move:
            found.move(1, from_line=self.lines.line_at(self.view.scroll_offset.y)[0])
            self._show_match(found)
        self._show_state(found)
        self.lines.searched()

    def end_or_skip(self) -> None:
        """Esc: the search ends; with none, Esc goes on to the app (it clears the filter)."""
        if self.matches is None:
            raise SkipAction()
        self.end()

    def end(self) -> None:
        self.matches = None
        self.view.remove_class("-searching")
        self.view.border_subtitle = ""
        self.lines.searched()

    def next_match(self, step: int) -> None:
        found = self.matches
        if found is None:
            self.view.notify("no search here yet: / searches in this pane", timeout=2)
            return
        if not found.total:
            self.view.notify(found.describe(), timeout=2)
            return
        if not found.move(step):
            self.view.notify("search wrapped to the " + ("top" if step > 0 else "bottom"), timeout=1.5)
        self._show_match(found)
        self._show_state(found)
        self.lines.searched()

    def _show_state(self, found: Matches) -> None:
        self.view.add_class("-searching")
        self.view.border_subtitle = f"{found.describe()}  (n / N: next / previous, Esc: end)"

    def _show_match(self, found: Matches) -> None:
        """Scroll so that the current match is in view, a third down the page; one in view
        already stays where it is (as in less: the page does not jump at each character typed,
        and a jump drew every line and the scrollbar again)."""
        if not found.total:
            return
        line, occurrence = found.position()
        shown = display_line(self.lines.search_lines()[line])
        column = found.column(shown, occurrence)
        row = self.lines.row_of(line, column)
        view = self.view
        x, y = view.scroll_offset
        if not y <= row < y + view.scrollable_content_region.height:
            y = max(0, row - view.size.height // 3)
        last = x + self.lines.search_width() - found.width(shown, occurrence)  # where the match still fits
        if self.lines.scrolls_sideways() and not x <= column < last:
            x = max(0, column - 10)
        view.scroll_to(x, y, animate=False)

    def match_styles(self) -> tuple[Style, Style]:
        """(a match, the current match): the view's component styles."""
        return (self.view.get_component_rich_style("search--match"),
                self.view.get_component_rich_style("search--match-current"))


class SearchBar(BarInput):
    """The bar at the bottom that types a view's search query: searched as it is typed."""

    BINDINGS: ClassVar[list[BindingType]] = SEARCH_BAR_BINDINGS

    def __init__(self, **kwargs) -> None:
        super().__init__(placeholder="search in this pane  (Enter: keep, n / N: next / previous, "
                         "Esc: end)", **kwargs)
        self.display = False
        self.line_search: LineSearch | None = None

    @property
    def view(self) -> ScrollView | None:
        """The view searched (the last the bar was opened for)."""
        return self.line_search.view if self.line_search is not None else None

    def open(self, search: LineSearch) -> None:
        self.line_search = search
        self.value = search.matches.query if search.matches is not None else ""
        search.view.add_class("-searching")  # its border now, with the bar: the first character typed
        self.display = True                   # then lays nothing out (it took 55-66 ms, the others 35)
        self.screen.set_focus(self)  # now: the keys typed next are the query

    def watch_value(self, value: str) -> None:
        # Searched as the value changes, not on the Changed message it posts: the character typed
        # and the matches it finds are then drawn in one frame (the message came a frame later).
        if self.line_search is not None and self.display:
            self.line_search.search_for(value)

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()  # (searched by watch_value already)

    def action_submit(self) -> None:  # type: ignore[override]  # (sync: BarInput calls it as Enter comes)
        # At once, not by the Submitted message: a key typed right after Enter (`n`) is for the view.
        self._close()

    def action_close_search(self) -> None:
        # (not `end`: that is Input's End / Ctrl+E, which moves the cursor to the end of the query)
        if self.line_search is not None:
            self.line_search.end()
        self._close()

    def _close(self) -> None:
        self.display = False
        search = self.line_search
        if search is not None and search.matches is None:
            search.view.remove_class("-searching")  # nothing was searched
        if search is not None and search.view.is_attached:
            self.screen.set_focus(search.view)
