"""The recompile diff: the selected recompile against the compile whose guard failed."""

from __future__ import annotations

from textual import work
from textual.containers import Vertical

from tlview.diagnose.diff import describe_change, recompile_diff
from tlview.model.index import Index
from tlview.model.tree import TreeEntry
from tlview.ui.payload_view import PayloadView


def diff_text(index: Index, entry: TreeEntry) -> str:
    """Reads records from disk: call from a worker."""
    node = entry.node
    if not node.effective_recompile_reasons():
        return (f"[{node.id}] is not a recompile: select one (↻ in the tree, r jumps to the next) "
                "to compare it with the compile whose guard failed.")
    diff = recompile_diff(index, node)
    if diff.against is None:
        return f"[{node.id}] recompiled, but the compile whose guard failed is not in these logs."
    lines = [f"# [{node.id}] against [{diff.against.id}], whose guard failed:",
             f"!!! {diff.reason.summary}", ""]
    lines.append("# inputs that changed")
    lines += [f"  {describe_change(c)}" for c in diff.changes] or ["  (none found in the describe records)"]
    lines.append("")
    lines.append("# guards")
    lines += diff.guard_diff or ["  (the same guards)"]
    lines.append("")
    lines.append("# Dynamo output graph")
    lines += diff.graph_diff or ["  (the same graph)"]
    return "\n".join(lines)


class DiffPane(Vertical):
    def compose(self):
        yield PayloadView(id="diff-view")

    def show(self, index: Index, entry: TreeEntry | None) -> None:
        if entry is None or entry.node is None:
            self.query_one(PayloadView).set_text("select a recompiled compile id", None)
            return
        self.load(index, entry)

    @work(thread=True, exclusive=True, group="diff-load")
    def load(self, index: Index, entry: TreeEntry) -> None:
        text = diff_text(index, entry)
        self.app.call_from_thread(self.query_one(PayloadView).set_text, text, "diff")

    def payload_text(self) -> str:
        return self.query_one(PayloadView).text
