"""`?`: every key, from the app's and the widgets' bindings."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HELP_ROWS = [
    ("Tree", [("↑ ↓ / j k", "move"), ("← → / h l", "collapse / expand"), ("g G / Home End", "top / bottom"),
              ("Enter", "open the detail of a compile id"), ("Tab / Shift+Tab", "next / previous pane")]),
    ("Jumps", [("b / B", "next / previous graph break"), ("r / R", "next / previous recompile"),
               ("x / X", "next / previous error"), ("Enter on a recompile reason", "go to the compile whose guard failed")]),
    ("Panes", [("1 … 9", "Summary, Graphs, Guards, Recompiles, Graph breaks, Dynamic shapes, Log, "
                          "Diff (a recompile against the compile whose guard failed), Run (costs, "
                          "timeline, ranks)"),
               ("[ / ]", "previous / next rank (all ranks, 0, 1, ...)"),
               ("y", "copy the shown payload (OSC 52: works over SSH)"), ("e", "open the shown payload in $PAGER / $EDITOR")]),
    ("Filter", [("/", "filter: recompiles, graph_breaks, guards, dynamic, perf_hints, output_code, errors, rank:N, or text"),
                ("Esc", "clear the filter")]),
    ("App", [("f", "follow the newest compile id (live)"), ("Ctrl+P", "command palette"), ("?", "this help"), ("q", "quit")]),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96; height: auto; max-height: 90%; border: round $accent;
                                  background: $panel; padding: 0 1; }
    """

    def compose(self):
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for section, rows in HELP_ROWS:
            table.add_row(Text(section, style="bold underline"), "")
            for key, what in rows:
                table.add_row(key, what)
        table.add_row("", "")
        table.add_row("", Text("Status symbols: ✓ ok  ◐ break (restarted)  ✗ error  ○ empty graph  ? no metrics  "
                               "… compiling (live).\n"
                               "Badges: ↻N recompile reasons  ✂N graph breaks  GN guards  ⚠N problems in the input.", style="dim"))
        with VerticalScroll():
            yield Static(table)

    def action_dismiss(self) -> None:
        self.dismiss()
