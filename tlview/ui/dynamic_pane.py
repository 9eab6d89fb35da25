"""Dynamic shapes of the selected compile id: symbols created, specializations, guards added."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.widgets import DataTable

from tlview.textsafe import visible
from tlview.ui.pane import Pane, Selection


class DynamicPane(Pane, DataTable):
    def on_mount(self) -> None:
        self.cursor_type = "row"
        self.add_columns("event", "detail")

    def show(self, selection: Selection) -> None:
        self.clear()
        if selection.entry is None or selection.entry.node is None:
            return
        self.load(selection)

    @work(thread=True, exclusive=True, group="dynamic-load")
    def load(self, selection: Selection) -> None:
        rows = [(Text(d.kind, style="bold"), Text(visible(d.summary))) for d in selection.entry.node.dynamic]
        if not rows:
            rows = [(Text("none", style="dim"), Text("no dynamic-shape events for this compile id", style="dim"))]
        self.app.call_from_thread(self.add_rows, rows)

    def copy_text(self) -> str:
        return "\n".join(f"{row[0]}\t{row[1]}" for row in (self.get_row_at(i) for i in range(self.row_count)))
