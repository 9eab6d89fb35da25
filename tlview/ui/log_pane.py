"""TORCH_LOGS text of the selected compile id (when a text log was read), perf hints first."""

from __future__ import annotations

from tlview.ui.pane import Selection
from tlview.ui.text_pane import TextPane

NO_TEXT = ("No TORCH_LOGS text for this compile id. Open a folder (or file) that holds the job's "
           "stderr run with TORCH_LOGS=... to see it here.")


def log_text(selection: Selection) -> str:
    """Reads the text records from disk: call from a worker."""
    node = selection.entry.node
    if not node.text_records:
        return NO_TEXT
    lines = []
    if node.perf_hints:
        lines.append(f"# perf hints ({len(node.perf_hints)})")
        lines += node.perf_hints
        lines.append("")
    for record in node.text_records:
        lines.append(f"[{record.channel}] {record.load_text()}")
    return "\n".join(lines)


class LogPane(TextPane):
    def text_for(self, selection: Selection) -> str:
        return log_text(selection)
