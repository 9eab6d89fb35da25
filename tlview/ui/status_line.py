"""The status line: what is open, the run's counts, the filter, and whether it is live or indexing.

One reactive holds what it shows (a frozen dataclass): it renders again only when that changed.
The live state comes first, where no toast covers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import ProgressBar, Static

from tlview.domain.totals import Totals
from tlview.domain.verdict import Kind
from tlview.report.rich_text import counted, ranks_text
from tlview.textsafe import one_line, visible

JOB_WIDTH = 72  # the job's verdict on the line at most: a death's message leaves room for the counts


@dataclass(frozen=True)
class StatusFacts:
    name: str  # the path's last part
    files: int = 0
    ranks: tuple = ()
    totals: Totals | None = None
    done: int = 0  # bytes indexed
    total: int = 0
    finished: bool = False
    filter: str = ""
    live: str = ""  # "", "live", "paused", "ended"
    waiting: str = ""
    failure: str = ""  # an indexing worker failed: what went wrong
    pane_failure: str = ""  # a pane's loader failed (the pane shows what it had): what went wrong
    shown_all: bool = True  # the tree and counts show all the index holds (app.refresh_views)
    job: str = ""  # what happened to the job: "hung: ranks 0-1 vs rank 2 at ...", "died: rank 1: ..."


class StatusLine(Horizontal):
    DEFAULT_CSS = """
    StatusLine { height: 1; background: $panel; }
    StatusLine > #status { width: 1fr; }
    StatusLine > ProgressBar { width: 30; }
    """

    facts: reactive[StatusFacts | None] = reactive(None, layout=False)

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield ProgressBar(id="progress", show_eta=False, show_percentage=True)

    def watch_facts(self, facts: StatusFacts | None) -> None:
        if facts is None:
            return
        bar = self.query_one(ProgressBar)
        indexing = not facts.finished and facts.total and facts.live == "" and not facts.failure
        bar.display = bool(indexing)
        if indexing:
            bar.update(total=facts.total, progress=facts.done)
        self._show(facts)

    def on_resize(self) -> None:
        if self.facts is not None:
            self._show(self.facts)

    def _show(self, facts: StatusFacts) -> None:
        bar = self.query_one(ProgressBar)
        beside = 0  # the bar's columns, while it shows
        if bar.display:
            bar_width = bar.styles.width
            assert bar_width is not None  # DEFAULT_CSS sets it
            beside = int(bar_width.value)
        width = self.size.width - beside if self.size.width else None
        text = status_text(facts, width)
        if _same(text, self._shown):
            return
        self._shown = text
        # layout=False: one row of a set width, whatever it says (Static's default laid out the
        # whole screen at each update: 11 ms at 10,000 compile ids, 38 times while they came in).
        self.query_one("#status", Static).update(text, layout=False)

    _shown: Text | None = None

    @property
    def text(self) -> str:
        return str(self.query_one("#status", Static).render())


# ANSI's names, drawn in the theme's colours made readable on its $panel (theme_colours.py): a
# hard-coded #262626 line under the light theme read at 1.09:1.
RED, CYAN, YELLOW, GREEN, MAGENTA = "red", "cyan", "yellow", "green", "magenta"


def _same(text: Text, other: Text | None) -> bool:
    """Drawn alike (rich's Text == leaves out the base style)."""
    return other is not None and text == other and text.style == other.style


@lru_cache(maxsize=2)
def _ranks_words(ranks: tuple) -> str:
    """The line is drawn at each update of the views and of the progress: 20,000 ranks are put in
    words once, not each time (1.5 ms)."""
    return ranks_text(ranks)


def status_text(facts: StatusFacts, width: int | None = None) -> Text:
    """The line, fitted to `width` columns: the least needed parts go first (the file count, the
    records, the ranks, then the other counts), the name is shortened, and the failures, the input
    problems and what went wrong stay to the last (at 80 columns they were cut off the end)."""
    parts: list[tuple[int | None, Text]] = []  # (the order in which it goes when narrow, its text)

    def add(drop: int | None, words: str, style: str = "") -> Text:
        parts.append((drop, Text(words, style=style)))
        return parts[-1][1]

    if facts.live == "live":
        add(None, " ● LIVE ·", f"bold {GREEN}")
    elif facts.live == "paused":
        add(None, " ● live (paused: f) ·", GREEN)
    elif facts.live == "ended":
        add(None, " ■ ended ·", "bold")
    name = add(None, f" {visible(facts.name)}", "bold")
    if facts.job:  # the job's own verdict: beside its name, never dropped (cut last, at the end)
        add(None, f" · {one_line(visible(facts.job), JOB_WIDTH)}", f"bold {RED}")
    add(1, f" · {facts.files:,} file{'s' if facts.files != 1 else ''}")
    if facts.ranks:
        add(3, f" · {_ranks_words(facts.ranks)}")
    t = facts.totals
    if t is not None:
        add(2, f" · {counted(t.records, 'record')}")
        add(5, f" · {counted(t.compile_ids, 'compile id')}")
        # the verdicts' counts, in the README's words; failures last to go
        for kind, style, drop in ((Kind.FAILURE, f"bold {RED}", None), (Kind.RECOMPILE, CYAN, 8),
                                  (Kind.GRAPH_BREAK, YELLOW, 7)):
            count = getattr(t, kind.word)
            add(drop, f" · {kind.count(count)}", style if count else "")
        if t.skipped_frames:  # said only where it happened: the most costly problem, never dropped
            add(None, f" · {Kind.FRAME_SKIPPED.count(t.skipped_frames)}", f"bold {RED}")
        if t.perf:  # said only where there are some, as frames run eagerly (most runs have none)
            add(6, f" · {Kind.PERF.count(t.perf)}", MAGENTA)  # (goes before the graph breaks)
        if t.problems:
            add(None, f" · {t.problems:,} input problem{'s' if t.problems != 1 else ''}", RED)
    if facts.filter:
        add(4, f" · filter: {facts.filter}", CYAN)  # (the tree says it too)
    if facts.failure or facts.pane_failure:
        add(None, f" · {visible(facts.failure or facts.pane_failure)}", f"bold {RED}")
    if facts.failure:
        return _fitted(parts, name, width)
    if facts.waiting and not facts.files:
        add(None, f" · {visible(facts.waiting)}", f"bold {YELLOW}")
    elif not facts.finished and facts.total and not facts.live:
        add(None, f" · indexing {facts.done * 100 // facts.total}%", "bold")
    elif not facts.shown_all:
        add(None, " · showing…", "bold")
    return _fitted(parts, name, width)


NAME_SHORT, NAME_SHORTEST = 24, 12  # the name is cut to these before the counts, then after them


def _fitted(parts: list[tuple[int | None, Text]], name: Text, width: int | None) -> Text:
    def length() -> int:
        return sum(text.cell_len for _, text in parts)

    def shorten(to: int, width: int) -> None:
        if length() > width:
            name.truncate(max(to, name.cell_len - (length() - width)), overflow="ellipsis")

    if width is not None:
        for drop in sorted({d for d, _ in parts if d is not None}):
            if drop == 5:  # before the counts go, the name gets shorter
                shorten(NAME_SHORT, width)
            if length() <= width:
                break
            parts = [(d, text) for d, text in parts if d != drop]
        shorten(NAME_SHORTEST, width)
    line = Text()
    for _, text in parts:
        line.append_text(text)
    if width is not None:
        line.truncate(width, overflow="ellipsis")
    return line
