"""TORCH_LOGS text of the selected compile id, perf hints first; on a frame or rank, the lines of
the run that belong to no compile id (prints, warnings, what no rule reads), so none is lost."""

from __future__ import annotations

from tlview.ui.pane import Selection
from tlview.ui.text_pane import TextPane

# (lines a narrow pane shows whole: the view cuts long lines unless `w` wraps them)
NO_TEXT = ("No TORCH_LOGS text for this compile id.\nOpen a folder (or file) that holds the job's\n"
           "stderr, run with TORCH_LOGS=..., to see it here.")
UNTAGGED_SHOWN = 2000  # records of the run's own lines shown at once (the rest: `e` opens them all)
SHOWN_BYTES = 8 << 20  # of text read for one pane: memory follows what is shown, not the log


def _records_text(records, lines: list[str]) -> None:
    budget = SHOWN_BYTES
    for record in records:
        if budget <= 0:
            lines.append("… (more records: the pane shows the first 8 MiB)")
            return
        text = record.load_text(budget)
        budget -= len(text)
        lines.append(f"[{record.channel}] {text}")


def log_text(selection: Selection) -> str:
    """Reads the text records from disk: call from a worker."""
    entry = selection.entry
    if entry is None or entry.node is None:
        return untagged_text(selection)
    node = entry.node
    if not node.text_records:
        return NO_TEXT
    lines = []
    if node.perf_hints:
        lines.append(f"# perf hints ({len(node.perf_hints)})")
        lines += node.perf_hints
        lines.append("")
    _records_text(node.text_records, lines)
    return "\n".join(lines)


def untagged_text(selection: Selection) -> str:
    records = list(selection.index.untagged)
    if not records:
        return NO_TEXT if not any(True for _ in selection.index.iter_nodes()) else \
            "Every TORCH_LOGS line of these logs belongs to a compile id:\nselect one to read it."
    count = selection.index.untagged_count
    lines = [f"# {count:,} record(s) of the run with no compile id (prints, warnings, "
             "torch's own lines)" + (f"; the first {UNTAGGED_SHOWN:,}" if count > UNTAGGED_SHOWN else "")]
    _records_text(records[:UNTAGGED_SHOWN], lines)
    return "\n".join(lines)


class LogPane(TextPane):
    def show(self, selection: Selection) -> None:
        self.loading_started(self.load(selection))  # also for a frame or rank: the run's own lines

    def text_for(self, selection: Selection) -> str:
        return log_text(selection)
