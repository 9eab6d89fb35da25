"""The status line: what is open, the run's counts, the filter, and whether it is live or indexing.

One reactive holds what it shows (a frozen dataclass): it renders again only when that changed.
The live state comes first, where no toast covers it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import ProgressBar, Static

from tlview.model.look import ranks_text
from tlview.model.totals import Totals
from tlview.model.verdict import Kind
from tlview.textsafe import visible


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


class StatusLine(Horizontal):
    DEFAULT_CSS = """
    StatusLine { height: 1; background: #262626; }
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
        self.query_one("#status", Static).update(status_text(facts))

    @property
    def text(self) -> str:
        return str(self.query_one("#status", Static).render())


# Colours that read on the line's background (#262626: black in 16 colours) at 5:1 or more, with
# 256 colours and 16: named ANSI colours went through the theme, and a failure count drawn
# magenta on the theme's panel (gray in 16 colours) read at 1.2:1.
RED, CYAN, YELLOW, GREEN = "#ff5f5f", "#5fd7ff", "#ffd75f", "#5fd75f"


def status_text(facts: StatusFacts) -> Text:
    text = Text()
    if facts.live == "live":
        text.append(" ● LIVE ·", style=f"bold {GREEN}")
    elif facts.live == "paused":
        text.append(" ● live (paused: f) ·", style=GREEN)
    elif facts.live == "ended":
        text.append(" ■ ended ·", style="bold")
    text.append(f" {visible(facts.name)}", style="bold")
    text.append(f" · {facts.files} file{'s' if facts.files != 1 else ''}")
    if facts.ranks:
        text.append(f" · {ranks_text(facts.ranks)}")
    t = facts.totals
    if t is not None:
        text.append(f" · {t.records:,} records · {t.compile_ids} compile ids")
        # the verdicts' counts, in the README's words; failures first: never the one cut off
        for kind, style in ((Kind.FAILURE, f"bold {RED}"), (Kind.RECOMPILE, CYAN), (Kind.GRAPH_BREAK, YELLOW)):
            count = getattr(t, kind.word)
            text.append(f" · {kind.count(count)}", style=style if count else "")
        if t.problems:
            text.append(f" · {t.problems:,} input problem{'s' if t.problems != 1 else ''}", style=RED)
    if facts.filter:
        text.append(f" · filter: {facts.filter}", style=CYAN)
    if facts.failure or facts.pane_failure:
        text.append(f" · {visible(facts.failure or facts.pane_failure)}", style=f"bold {RED}")
    if facts.failure:
        return text
    if facts.waiting and not facts.files:
        text.append(f" · {visible(facts.waiting)}", style=f"bold {YELLOW}")
    elif not facts.finished and facts.total and not facts.live:
        text.append(f" · indexing {facts.done * 100 // facts.total}%", style="bold")
    elif not facts.shown_all:
        text.append(" · showing…", style="bold")
    return text
