"""The recompile diff: the selected recompile against the compile whose guard failed."""

from __future__ import annotations

from tlview.diagnose.diff import describe_change, recompile_diff
from tlview.ui.pane import Selection
from tlview.ui.text_pane import TextPane


def diff_text(selection: Selection) -> str:
    """Reads records from disk: call from a worker."""
    node = selection.entry.node
    if not node.reasons:
        return (f"[{node.id}] is not a recompile: select one (↻ in the tree, r jumps to the next) "
                "to compare it with the compile whose guard failed.")
    diff = recompile_diff(selection.index, node)
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


class DiffPane(TextPane):
    language = "diff"
    empty_message = "select a recompiled compile id"

    def text_for(self, selection: Selection) -> str:
        return diff_text(selection)
