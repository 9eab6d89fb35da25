"""The right side: one tab per pane; only the visible pane is filled when the selection moves."""

from __future__ import annotations

from textual import on
from textual.containers import Vertical
from textual.widgets import TabbedContent, TabPane

from tlview.model.index import Index
from tlview.model.tree import TreeEntry
from tlview.ui.breaks_pane import BreaksPane
from tlview.ui.diff_pane import DiffPane
from tlview.ui.dynamic_pane import DynamicPane
from tlview.ui.graphs_pane import GraphsPane
from tlview.ui.guards_pane import GuardsPane
from tlview.ui.log_pane import LogPane
from tlview.ui.recompiles_pane import RecompilesPane
from tlview.ui.run_pane import RunPane
from tlview.ui.summary_pane import SummaryPane

TABS = [  # id, title, pane class
    ("summary", "1 Summary", SummaryPane),
    ("graphs", "2 Graphs", GraphsPane),
    ("guards", "3 Guards", GuardsPane),
    ("recompiles", "4 Recompiles", RecompilesPane),
    ("breaks", "5 Graph breaks", BreaksPane),
    ("dynamic", "6 Dynamic shapes", DynamicPane),
    ("log", "7 Log", LogPane),
    ("diff", "8 Diff", DiffPane),
    ("run", "9 Run", RunPane),
]


class DetailPane(Vertical):
    def __init__(self, index: Index, **kwargs) -> None:
        super().__init__(**kwargs)
        self.index = index
        self.entry: TreeEntry | None = None
        self._shown: dict[str, TreeEntry | None] = {}

    def compose(self):
        with TabbedContent(id="tabs"):
            for tab_id, title, pane in TABS:
                with TabPane(title, id=tab_id):
                    yield pane(id=f"{tab_id}-pane")

    @property
    def active(self) -> str:
        return self.query_one("#tabs", TabbedContent).active

    @active.setter
    def active(self, tab_id: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab_id

    def show(self, entry: TreeEntry | None) -> None:
        """Show `entry` in the active pane now, in the others when their tab is opened."""
        self.entry = entry
        self._fill(self.active)

    def _fill(self, tab_id: str) -> None:
        if not tab_id or (tab_id in self._shown and self._shown[tab_id] is self.entry):
            return
        self._shown[tab_id] = self.entry
        self.query_one(f"#{tab_id}-pane").show(self.index, self.entry)

    @on(TabbedContent.TabActivated)
    def _tab_changed(self, event: TabbedContent.TabActivated) -> None:
        self._fill(event.pane.id)

    def refresh_entry(self) -> None:
        """The entry's data grew (live): fill the active pane again."""
        self._shown.pop(self.active, None)
        self._fill(self.active)

    def payload_text(self) -> str | None:
        """The text the active pane shows (what `y` copies and `e` opens)."""
        pane = self.query_one(f"#{self.active}-pane")
        if hasattr(pane, "payload_text"):
            return pane.payload_text()
        if hasattr(pane, "plain_text"):
            return pane.plain_text()
        return None
