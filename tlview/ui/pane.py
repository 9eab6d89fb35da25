"""What the detail side asks of every pane: show a selection, and give the text it shows (for `y`
and `e`). Panes are widgets of different bases (a scroll view, a table): this is their mixin."""

from __future__ import annotations

from dataclasses import dataclass

from tlview.model.index import Index
from tlview.model.tree import TreeEntry


@dataclass(frozen=True)
class Selection:
    """What the panes show: an entry of the tree (or nothing) of an index, for a rank or all."""

    index: Index
    entry: TreeEntry | None
    rank: object = ...  # a rank number, None for rank-less logs, ... for all ranks


class Pane:
    def show(self, selection: Selection) -> None:
        raise NotImplementedError

    def copy_text(self) -> str | None:
        """The text this pane shows (what `y` copies and `e` opens), or None."""
        return None
