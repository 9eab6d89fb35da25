"""The right side: one tab per pane; only the visible pane is filled when the selection moves."""

from __future__ import annotations

from textual import on
from textual.containers import Vertical
from textual.widgets import TabbedContent, TabPane

from tlview.ui.breaks_pane import BreaksPane
from tlview.ui.diff_pane import DiffPane
from tlview.ui.dynamic_pane import DynamicPane
from tlview.ui.graphs_pane import GraphsPane
from tlview.ui.guards_pane import GuardsPane
from tlview.ui.log_pane import LogPane
from tlview.ui.pane import Pane, Selection
from tlview.ui.payload_view import warm_up
from tlview.ui.recompiles_pane import RecompilesPane
from tlview.ui.run_pane import RunPane
from tlview.ui.summary_pane import SummaryPane

TABS = [  # id, title, what it shows, pane class
    ("summary", "Summary", "status, where, why and what to do, times, counts", SummaryPane),
    ("graphs", "Graphs", "Dynamo, AOT and Inductor graphs and the output code", GraphsPane),
    ("guards", "Guards", "the guard tree and the guards added while tracing", GuardsPane),
    ("recompiles", "Recompiles", "each failed guard; Enter goes to the compile it failed in", RecompilesPane),
    ("breaks", "Graph breaks", "reason, explanation, hints and user stack", BreaksPane),
    ("dynamic", "Dynamic shapes", "symbols, specializations, guards added", DynamicPane),
    ("log", "Log", "the TORCH_LOGS text of the compile id", LogPane),
    ("diff", "Diff", "a recompile against the compile whose guard failed", DiffPane),
    ("run", "Run", "costs, timeline, where ranks diverge", RunPane),
]


class DetailPane(Vertical):
    def __init__(self, selection: Selection, **kwargs) -> None:
        super().__init__(**kwargs)
        self.selection = selection
        self._shown: dict[str, Selection] = {}

    def compose(self):
        with TabbedContent(id="tabs"):
            for number, (tab_id, title, _, pane) in enumerate(TABS, 1):
                with TabPane(f"{number} {title}", id=tab_id):
                    yield pane(id=f"{tab_id}-pane")

    def on_mount(self) -> None:
        # the code panes' lexer, built before the first of them opens
        self.run_worker(warm_up, name="lexer warm-up", thread=True, exit_on_error=False)

    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    @active.setter
    def active(self, tab_id: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab_id

    def pane(self, tab_id: str | None = None) -> Pane:
        return self.query_one(f"#{tab_id or self.active}-pane")

    def show(self, selection: Selection) -> None:
        """Show a selection in the active pane now, in the others when their tab is opened."""
        self.selection = selection
        self._fill(self.active)

    def _fill(self, tab_id: str) -> None:
        if not tab_id or self._shown.get(tab_id) == self.selection:
            return
        self._shown[tab_id] = self.selection
        self.pane(tab_id).show(self.selection)

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        self._fill(event.pane.id)

    def refresh_entry(self) -> None:
        """What the selection shows grew (live): fill the active pane again."""
        self._shown.clear()
        self._fill(self.active)

    def copy_text(self) -> str | None:
        """The text the active pane shows (what `y` copies and `e` opens)."""
        return self.pane().copy_text()
