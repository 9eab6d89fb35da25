"""A read-only code view that renders only the visible lines (Textual's Line API).

Hand-written because Textual's TextArea highlights the whole document up front (measured: 19 s
for 50,000 lines of Python, see research/tui-anchors.md section 5), and inductor output code or a
joint graph easily has 100,000 lines. Here each visible line is highlighted on demand and the
result cached, so a page costs the same whatever the payload's size.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from functools import lru_cache, partial
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import reactive
from textual.strip import Strip
from textual.worker import Worker

from tlview.ui.keys import PAYLOAD_VIEW_BINDINGS
from tlview.ui.messages import work_done
from tlview.ui.search import MAX_LINE, SEARCH_COMPONENTS, SEARCH_CSS, display_line
from tlview.ui.searchable_view import SearchableView
from tlview.ui.text_size import size_the_text

HIGHLIGHT_BLOCK = 64  # lines highlighted by one lexer run
HIGHLIGHTED_LINES = 2000  # highlighted lines kept
DRAWN_LINES = 1024  # drawn lines kept (a few screens, wrapped or scrolled sideways)


def word_rows(line: str, width: int) -> list[int]:
    """Where each row of `line` starts, wrapped at `width` between words (a word longer than a
    row is cut): wrapping by cells split `specialize_float=Fal` / `se`."""
    starts, start = [0], 0
    while len(line) - start > width:
        space = line.rfind(" ", start + 1, start + width + 1)
        start = space + 1 if space > start else start + width
        starts.append(start)
    return starts


def highlighted_lines(lines: list[str], language: str) -> list[Text]:
    """Lines (as drawn: display_line) highlighted in one lexer run (call off the UI thread)."""
    parts = list(_highlighter(language).highlight("\n".join(lines)).split("\n", allow_blank=True))[:len(lines)]
    for part in parts:
        part.rstrip()
    return parts


def first_block(lines: list[str], language: str | None) -> list[Text] | None:
    """The first lines of a payload highlighted, by the thread that loaded it: the pane's first
    frame is then its last (the lexer's thread came after it, 50-90 ms later)."""
    if not language:
        return None
    return highlighted_lines([display_line(line) for line in lines[:HIGHLIGHT_BLOCK]], language)


@lru_cache(maxsize=4)
def _highlighter(language: str):
    # rich.syntax imports pygments (8 ms): not on the way to the first screen
    from rich.syntax import Syntax

    return Syntax("", language, theme="ansi_dark", word_wrap=False)


def warm_up(language: str = "python") -> None:
    """Build the lexer once, off the UI thread: pygments compiles its regexes on first use (80 ms,
    measured), which would otherwise land on the first code pane a person opens. Called once the
    panes are mounted: at mount, its 25-35 ms of imports and regexes held the GIL in front of
    the first screen."""
    _highlighter(language).highlight("x = 1")


class PayloadView(SearchableView, can_focus=True):
    """Shows a payload's lines with line numbers; Python highlighting of what is on screen;
    search (`/`, `n`, `N`) and wrapping (`w`) of long lines."""

    DEFAULT_CSS = """
    PayloadView { background: $surface; scrollbar-size-vertical: 1; }
    PayloadView > .payload--gutter { color: $text-muted; }
    """ + SEARCH_CSS.format(view="PayloadView")
    COMPONENT_CLASSES: ClassVar[set[str]] = {"payload--gutter", *SEARCH_COMPONENTS}
    wrap: reactive[bool] = reactive(False, init=False)  # long lines wrapped (between words)
    BINDINGS: ClassVar[list[BindingType]] = PAYLOAD_VIEW_BINDINGS

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(self, id=id, classes=classes)  # (its lines: itself, searched)
        self._lines: list[str] = []
        self._language: str | None = None
        self._cache: LRUCache[int, Text] = LRUCache(HIGHLIGHTED_LINES)  # line -> highlighted
        # What render_line drew (toolong's way): a pane opening draws its lines three or four
        # times (laid out, highlighted, the cursor's pane); each line cost 0.4 ms every time.
        self._strips: LRUCache[tuple, Strip] = LRUCache(DRAWN_LINES)
        self._pending: set[tuple[int, int]] = set()  # (generation, first line) being highlighted
        self._generation = 0  # which text (and style) a highlighted block belongs to
        self._gutter = 1
        self._row_of: array | None = None  # wrapped: each line's first row (and the total last)
        self._row_starts: dict[int, list[int]] = {}  # wrapped: where each row of a long line starts
        self._wrap_width = 0
        self._line_styles: tuple[Style, Style] | None = None  # (base, gutter), until styles change

    # ---- what Textual asks of the widget itself ------------------------------------------------

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if (done := work_done(self, event)) is not None:
            self.post_message(done)  # (the app shows a failed one)

    @property
    def text(self) -> str:
        return "\n".join(self._lines)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def set_text(self, text: str, language: str | None = "python", head: list[Text] | None = None) -> None:
        self.set_lines(text.split("\n"), language, head)

    def set_lines(self, lines: list[str], language: str | None = "python", head: list[Text] | None = None) -> None:
        """Show `lines` (split in a worker thread for a big payload: no stall here); `head`: their
        first block highlighted (first_block), if the loading thread did it."""
        self._lines = lines
        self._language = language
        self._generation += 1
        self._cache.clear()
        self._strips.clear()
        for number, part in enumerate(head or ()):
            self._cache[number] = part
        self._gutter = len(str(len(self._lines))) + 1
        self._layout()
        self.scroll_to(0, 0, animate=False)
        self.line_search.again()
        self.refresh()

    # ---- wrapping ------------------------------------------------------------------------------

    @property
    def _body_width(self) -> int:
        return max(self.size.width - self._gutter - 1 - self.scrollbar_size_vertical, 10)

    def _layout(self) -> None:
        """The virtual size: lines (wrapped: rows) by the longest line of the first 2,000."""
        if not self.wrap:
            self._row_of = None
            width = min(max((len(line) for line in self._lines[:2000]), default=0), MAX_LINE)
            size_the_text(self, Size(width + self._gutter + 2, len(self._lines)))
            return
        body = self._wrap_width = self._body_width
        rows, row = array("q", [0]), 0
        self._row_starts = {}
        for number, line in enumerate(self._lines):
            if len(line) <= body and line.isascii() and "\t" not in line:
                row += 1
            elif line.isascii() and "\t" not in line:
                starts = self._row_starts[number] = word_rows(line[:MAX_LINE], body)
                row += len(starts)
            else:  # (wide characters: cut by cells)
                row += max(1, -(-min(cell_len(display_line(line)), MAX_LINE) // body))
            rows.append(row)
        self._row_of = rows
        # (as wide as the columns it draws in: the view's width left one column to scroll sideways)
        size_the_text(self, Size(self._gutter + 1 + body, row))

    def on_resize(self) -> None:
        if self.wrap and self._body_width != self._wrap_width:
            self._layout()

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        self.notify("wrapping long lines" if self.wrap else "long lines cut (h / l scroll sideways)", timeout=1.5)

    def nothing_sideways(self) -> str:
        if self.wrap:
            return "long lines are wrapped: w cuts them, then h / l scroll sideways"
        return super().nothing_sideways()

    def watch_wrap(self) -> None:
        top = self.line_at(self.scroll_offset.y)[0]  # (laid out as it was)
        self._layout()
        self.scroll_to(0, self.row_of(top), animate=False)
        self.refresh()

    def line_at(self, row: int) -> tuple[int, int]:
        """(line, row within the line) drawn at virtual row `row`."""
        if self._row_of is None:
            return row, 0
        line = bisect_right(self._row_of, row) - 1
        return line, row - self._row_of[line]

    def row_of(self, line: int, column: int = 0) -> int:
        if self._row_of is None:
            return line
        first = self._row_of[min(line, len(self._row_of) - 1)]
        if (starts := self._row_starts.get(line)) is not None:
            return first + bisect_right(starts, column) - 1
        return first + column // max(self._wrap_width, 1)

    def _row_span(self, line: int, part: int) -> tuple[int, int]:
        """(start, end) columns of row `part` of a wrapped line."""
        if (starts := self._row_starts.get(line)) is not None:
            return starts[part], starts[part + 1] if part + 1 < len(starts) else MAX_LINE
        return part * self._wrap_width, (part + 1) * self._wrap_width

    # ---- what its search asks (search.ShownLines) ---------------------------------------------

    def search_lines(self) -> list[str]:
        return self._lines

    @property
    def search_generation(self) -> int:
        return self._generation

    def scrolls_sideways(self) -> bool:
        return self._row_of is None

    def search_width(self) -> int:
        return self._body_width

    def searched(self) -> None:
        self.refresh()

    def highlighted(self, index: int) -> Text:
        """Line `index` as it is drawn: made visible, highlighted (cached). Lines are highlighted
        a block at a time: one lexer run for 64 lines costs what 15 single-line runs do, and a
        string spanning lines reads right. The lexer runs in a thread (10-20 ms a block, measured,
        which the UI thread must not spend while a pane opens): until it is done the line is
        drawn plain."""
        text = self._cache.get(index)
        if text is not None:
            return text
        start = index - index % HIGHLIGHT_BLOCK
        if not self._language:
            self._store(self._generation, start, [Text(line) for line in self._block(start)])
            return self._cache[index]
        if (self._generation, start) not in self._pending:
            self._pending.add((self._generation, start))
            self.run_worker(partial(self._highlight, self._generation, start,
                                    self._lines[start:start + HIGHLIGHT_BLOCK], self._language),
                            name="highlight", group="highlight", thread=True, exit_on_error=False)
        # (this line alone: a search that jumps draws a screen of lines not highlighted yet, and
        # making each one's block here cost 1-2 ms a frame)
        return Text(display_line(self._lines[index]))

    def _block(self, start: int) -> list[str]:
        return [display_line(line) for line in self._lines[start:start + HIGHLIGHT_BLOCK]]

    def _highlight(self, generation: int, start: int, lines: list[str], language: str) -> None:
        """(a worker thread)"""
        parts = highlighted_lines([display_line(line) for line in lines], language)
        try:
            self.app.call_from_thread(self._store, generation, start, parts)
        except RuntimeError:  # the app closed meanwhile: nothing to draw
            pass

    def _store(self, generation: int, start: int, parts: list[Text]) -> None:
        self._pending.discard((generation, start))
        if generation != self._generation:
            return  # highlighted for text no longer shown
        for offset, part in enumerate(parts):
            self._cache[start + offset] = part
        self._strips.clear()  # drawn before these lines were highlighted
        self.refresh()

    def _with_matches(self, index: int, text: Text) -> Text:
        spans = self.search.spans(index, text.plain) if self.search is not None else []
        if not spans:
            return text
        text = text.copy()
        match, current = self.line_search.match_styles()
        for start, end, is_current in spans:
            text.stylize(current if is_current else match, start, end)
        return text

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index, part = self.line_at(scroll_y + y)
        width = self.size.width
        if index >= len(self._lines) or (y + scroll_y) >= self.virtual_size.height:
            return Strip.blank(width, self.rich_style)
        wrapped = self._row_of is not None
        start = self._row_span(index, part)[0] if wrapped else scroll_x
        found = self.search
        # only a line with a match depends on the search (typing a query drew every line again)
        search = (found.query, found.current) if found is not None and found.has_match(index) else None
        key = (self._generation, index, part, start, width, self._wrap_width if wrapped else 0, search)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._draw_line(index, part, start, width, wrapped)
        return strip

    def _draw_line(self, index: int, part: int, start: int, width: int, wrapped: bool) -> Strip:
        if self._line_styles is None:
            # (rich_style walks every ancestor: it was half of what drawing a line cost)
            base = self.rich_style
            self._line_styles = base, base + self.get_component_rich_style("payload--gutter")
        base, gutter_style = self._line_styles
        number = Segment(f"{index + 1:>{self._gutter}} " if part == 0 else " " * (self._gutter + 1),
                         gutter_style)
        segments = list(self._with_matches(index, self.highlighted(index)).render(self.app.console))
        body_width = width - self._gutter - 1
        end = self._row_span(index, part)[1] if wrapped else start + body_width
        body = Strip(segments).crop(start, end)
        strip = Strip([number, *body]).apply_style(base)
        return strip.extend_cell_length(width, base).crop(0, width)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        # The drawn lines go (their base colours are CSS's); the highlighted ones stay: their
        # colours are the lexer theme's. `/` (a class, then focus) highlighted the screen anew.
        self._line_styles = None
        self._strips.clear()
