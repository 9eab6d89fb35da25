"""TORCH_LOGS text of the selected compile id (when a text log was read), perf hints first."""

from __future__ import annotations

from textual import work
from textual.containers import Vertical

from tlview.model.index import Index
from tlview.model.tree import TreeEntry
from tlview.ui.payload_view import PayloadView


class LogPane(Vertical):
    def compose(self):
        yield PayloadView(id="log-view")

    def show(self, index: Index, entry: TreeEntry | None) -> None:
        view = self.query_one(PayloadView)
        if entry is None or entry.node is None:
            view.set_text("", None)
            return
        if not entry.node.text_records:
            view.set_text("No TORCH_LOGS text for this compile id. Open a folder (or file) that holds "
                          "the job's stderr run with TORCH_LOGS=... to see it here.", None)
            return
        self.load(entry)

    @work(thread=True, exclusive=True, group="log-load")
    def load(self, entry: TreeEntry) -> None:
        node = entry.node
        lines = []
        if node.perf_hints:
            lines.append(f"# perf hints ({len(node.perf_hints)})")
            lines += node.perf_hints
            lines.append("")
        for record in node.text_records:
            text = record.source.load_payload(record.rec).text
            lines.append(f"[{record.channel}] {text}")
        self.app.call_from_thread(self.query_one(PayloadView).set_text, "\n".join(lines), None)

    def payload_text(self) -> str:
        return self.query_one(PayloadView).text
