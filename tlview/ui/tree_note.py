"""The line under the tree: the filter and how much it hides, why the tree is empty, "+N new"."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tlview.views.filters import Filter, missing_rank
from tlview.views.text_query import text_query
from tlview.views.tree import TreeModel


class TreeNote(Static):
    def show(self, flt: Filter, model: TreeModel, search_note: str, empty: str, new_unseen: int) -> None:
        text = Text()
        if flt.active:
            # short: the tree is as narrow as its labels (the status line repeats the filter)
            text.append(f"filter {flt.describe()}: {model.shown} of {model.shown + model.hidden} shown"
                        f"{search_note}", style="cyan")
            if flt.text and not text_query(flt.text).is_regex:
                text.append(" · not a regex: searching the text", style="yellow")
            if problem := missing_rank(flt.rank, model.index.ranks()):
                text.append(f" · {problem}", style="yellow")
        elif empty:
            text.append(empty, style="yellow")
        if new_unseen:
            text.append(f"{' · ' if text else ''}+{new_unseen} new — f: follow the newest", style="bold green")
        shown = self._shown
        if text == (shown or Text()):  # (none yet: empty, as it is composed)
            return  # (each update laid out the whole screen: 11 ms at 10,000 compile ids)
        self._shown = text
        # Its height follows its lines (height: auto): laid out when it has any, or had.
        self.update(text, layout=bool(text) or bool(shown))

    _shown: Text | None = None
