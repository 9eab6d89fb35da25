"""A read-only code view that renders only the visible lines (Textual's Line API).

Hand-written because Textual's TextArea highlights the whole document up front (measured: 19 s
for 50,000 lines of Python, see research/tui-anchors.md section 5), and inductor output code or a
joint graph easily has 100,000 lines. Here each visible line is highlighted on demand and the
result cached, so a page costs the same whatever the payload's size.
"""

from __future__ import annotations

from functools import lru_cache, partial

from rich.segment import Segment
from rich.syntax import Syntax
from rich.text import Text
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tlview.textsafe import visible

MAX_LINE = 4000  # characters rendered per line: a 10 MB single-line payload must not stall
HIGHLIGHT_BLOCK = 64  # lines highlighted by one lexer run


@lru_cache(maxsize=4)
def _highlighter(language: str) -> Syntax:
    return Syntax("", language, theme="ansi_dark", word_wrap=False)


def warm_up(language: str = "python") -> None:
    """Build the lexer once, off the UI thread: pygments compiles its regexes on first use (80 ms,
    measured), which would otherwise land on the first code pane a person opens."""
    _highlighter(language).highlight("x = 1")


class PayloadView(ScrollView, can_focus=True):
    """Shows a payload's lines with line numbers; Python highlighting of what is on screen."""

    DEFAULT_CSS = """
    PayloadView { background: $surface; }
    PayloadView > .payload--gutter { color: $text-muted; }
    """
    COMPONENT_CLASSES = {"payload--gutter"}
    BINDINGS = [
        ("j", "scroll_down", "Down"),
        ("k", "scroll_up", "Up"),
        ("g", "top", "Top"),
        ("G", "bottom", "Bottom"),
        ("space", "page_down", "Page down"),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._lines: list[str] = []
        self._language: str | None = None
        self._cache: dict[int, Text] = {}
        self._pending: set[tuple[int, int]] = set()  # (generation, first line) being highlighted
        self._generation = 0  # which text (and style) a highlighted block belongs to
        self._gutter = 1

    @property
    def text(self) -> str:
        return "\n".join(self._lines)

    @property
    def line_count(self) -> int:
        return len(self._lines)

    def set_text(self, text: str, language: str | None = "python") -> None:
        self.set_lines(text.split("\n"), language)

    def set_lines(self, lines: list[str], language: str | None = "python") -> None:
        """Show `lines` (split in a worker thread for a big payload: no stall here)."""
        self._lines = lines
        self._language = language
        self._generation += 1
        self._cache.clear()
        self._gutter = len(str(len(self._lines))) + 1
        width = min(max((len(line) for line in self._lines[:2000]), default=0), MAX_LINE)
        self.virtual_size = Size(width + self._gutter + 2, len(self._lines))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    def action_top(self) -> None:
        self.scroll_home(animate=False)

    def action_bottom(self) -> None:
        self.scroll_end(animate=False)

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
        lines = self._block(start)
        if not self._language:
            self._store(self._generation, start, [Text(line) for line in lines])
            return self._cache[index]
        if (self._generation, start) not in self._pending:
            self._pending.add((self._generation, start))
            self.run_worker(partial(self._highlight, self._generation, start, lines, self._language),
                            name="highlight", group="highlight", thread=True, exit_on_error=False)
        return Text(lines[index - start])

    def _block(self, start: int) -> list[str]:
        return [visible(line[:MAX_LINE].expandtabs(4))
                for line in self._lines[start:start + HIGHLIGHT_BLOCK]]

    def _highlight(self, generation: int, start: int, lines: list[str], language: str) -> None:
        """(a worker thread)"""
        parts = list(_highlighter(language).highlight("\n".join(lines))
                     .split("\n", allow_blank=True))[:len(lines)]
        for part in parts:
            part.rstrip()
        try:
            self.app.call_from_thread(self._store, generation, start, parts)
        except RuntimeError:  # the app closed meanwhile: nothing to draw
            pass

    def _store(self, generation: int, start: int, parts: list[Text]) -> None:
        self._pending.discard((generation, start))
        if generation != self._generation:
            return  # highlighted for text no longer shown
        if len(self._cache) > 2000:
            self._cache.clear()
        for offset, part in enumerate(parts):
            self._cache[start + offset] = part
        self.refresh()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.size.width
        base = self.rich_style
        if index >= len(self._lines):
            return Strip.blank(width, base)
        gutter_style = base + self.get_component_rich_style("payload--gutter")
        number = Segment(f"{index + 1:>{self._gutter}} ", gutter_style)
        segments = list(self.highlighted(index).render(self.app.console))
        body = Strip(segments).crop(scroll_x, scroll_x + width - self._gutter - 1)
        strip = Strip([number, *body]).apply_style(base)
        return strip.extend_cell_length(width, base).crop(0, width)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._generation += 1
        self._cache.clear()
