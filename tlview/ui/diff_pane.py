"""The recompile diff: the selected recompile against the compile whose guard failed."""

from __future__ import annotations

from tlview.diagnose.diff import diff_lines, recompile_diff, wrap_prose
from tlview.report.rich_text import source_lines
from tlview.ui.pane import Selection
from tlview.ui.text_pane import TextPane

# The columns of a line: the pane's, less the view's line numbers and scroll bar.
BESIDE_TEXT = 8
UNKNOWN_WIDTH = 100  # before the pane has a size


def diff_text(selection: Selection, width: int = UNKNOWN_WIDTH) -> str:
    """Reads records from disk: call from a worker. Message lines wrap at `width`."""
    node = selection.entry.node if selection.entry is not None else None
    # TextPane.show asks only for an entry with a node; the index links each node to its compile
    assert node is not None and node.compile is not None
    recompile = node.compile.verdict.recompile
    if recompile is not None and not recompile.logged:
        message = (f"[{node.id}] recompiled, but its reason was not logged: {recompile.why}.")
        return "\n".join(wrap_prose(message, width))
    if recompile is None:
        message = (f"[{node.id}] is not a recompile: select one (↻ in the tree, r jumps to the next) "
                   "to compare it with the compile whose guard failed.")
        return "\n".join(wrap_prose(message, width))
    diff = recompile_diff(selection.index, node)
    if diff.against is None:
        message = f"[{node.id}] recompiled, but the compile whose guard failed is not in these logs."
        return "\n".join(wrap_prose(message, width))
    lines = diff_lines(diff, width)
    excerpt = selection.excerpt(recompile.source_place)
    if excerpt is not None:  # the user's line the failed guard came from
        lines += ["", f"# {excerpt.path}:{excerpt.line}", *(text for text, _ in source_lines(excerpt.as_dict()))]
    return "\n".join(lines)


class DiffPane(TextPane):
    language = "diff"
    empty_message = "select a recompiled compile id"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._selection: Selection | None = None
        self._width = UNKNOWN_WIDTH  # what the shown text is wrapped to

    def _text_width(self) -> int:
        width = self.size.width - BESIDE_TEXT
        return width if width > 20 else UNKNOWN_WIDTH

    def show(self, selection: Selection) -> None:
        self._selection = selection
        self._width = self._text_width()  # read here, on the UI thread
        super().show(selection)

    def on_resize(self) -> None:
        """Wrap the messages again to the new width (not while hidden: no width then)."""
        selection = self._selection
        if selection is None or selection.entry is None:
            return  # nothing shown
        if self.size.width - BESIDE_TEXT > 20 and self._text_width() != self._width:
            self.show(selection)

    def text_for(self, selection: Selection) -> str:
        return diff_text(selection, self._width)
