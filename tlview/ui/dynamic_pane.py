"""Dynamic shapes of the selected compile id: symbols created, specializations, guards added."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.widgets import DataTable

from tlview.model.index import Index
from tlview.model.tree import TreeEntry
from tlview.textsafe import visible


class DynamicPane(DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns("event", "detail")

    def show(self, index: Index, entry: TreeEntry | None) -> None:
        self.clear()
        if entry is None or entry.node is None:
            return
        self.load(entry)

    @work(thread=True, exclusive=True, group="dynamic-load")
    def load(self, entry: TreeEntry) -> None:
        rows = [(Text(d.kind, style="bold"), Text(visible(d.summary))) for d in entry.node.dynamic]
        if not rows:
            rows = [(Text("none", style="dim"), Text("no dynamic-shape events for this compile id", style="dim"))]
        self.app.call_from_thread(self.add_rows, rows)
