"""The line under the tree: the filter and how much it hides, why the tree is empty, "+N new"."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tlview.model.filters import Filter
from tlview.model.tree import TreeModel


class TreeNote(Static):
    def show(self, flt: Filter, model: TreeModel, search_note: str, empty: str, new_unseen: int) -> None:
        text = Text()
        if flt.active:
            text.append(f"filter: {flt.describe()} — {model.shown} shown, {model.hidden} hidden"
                        f"{search_note}", style="cyan")
        elif empty:
            text.append(empty, style="yellow")
        if new_unseen:
            text.append(f"{' · ' if text else ''}+{new_unseen} new — f: follow the newest", style="bold green")
        self.update(text)
