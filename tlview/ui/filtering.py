"""The tree's filter: `/` opens the bar, what is typed filters as it is typed, Enter keeps the
filter and closes the bar, Esc clears both; text is also looked for inside payloads, in a worker.
FilterKeys is the bar's keys, for either app; ExplorerFilter what the explorer's tree shows."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import App

from tlview.domain.rank_history import RankGroups
from tlview.ui import workers
from tlview.ui.detail import DetailPane
from tlview.ui.filter_bar import FilterBar
from tlview.ui.messages import PayloadMatches
from tlview.ui.payload_view import PayloadView
from tlview.ui.tree_note import TreeNote
from tlview.views.filters import Filter
from tlview.views.tree import TreeModel

if TYPE_CHECKING:
    from tlview.ui.app import TlviewApp


class FilterKeys:
    """`/`, Esc and the bar's messages, for either app: `current` is the app's filter, `apply`
    shows the tree that a filter keeps."""

    def __init__(self, app: App, current: Callable[[], Filter], apply: Callable[[Filter], None]) -> None:
        self.app = app
        self.current = current
        self.apply = apply

    @property
    def bar(self) -> FilterBar:
        return self.app.query_one(FilterBar)

    def open(self) -> None:
        """`/` filters the tree; from inside a pane with a payload (its list of graphs, its
        dropdown), it searches that payload, as `/` in the payload itself does."""
        detail = self.app.query_one(DetailPane)
        view = detail.main_view() if detail.has_focus_within else None
        if isinstance(view, PayloadView):
            view.action_search()
            return
        self.bar.open()

    def set_filter(self, expression: str) -> None:
        self.bar.show_expression(expression)

    def invalid(self, message: FilterBar.Invalid) -> None:
        self.app.query_one(TreeNote).update(Text(message.reason, style="yellow"))

    def clear(self) -> None:
        """Esc: in a pane, back to the tree (a search there ended first); in the tree or the
        filter bar, the filter cleared."""
        tree = self.app.query_one("#tree")
        if not self.bar.display and self.app.focused is not None and self.app.focused is not tree:
            self.app.screen.set_focus(tree)
            return
        if not self.current().active and not self.bar.display:
            return
        self.bar.close()
        self.apply(Filter())
        self.app.screen.set_focus(self.app.query_one("#tree"))


class ExplorerFilter:
    """What the explorer's tree shows of the index: the filter, the ranks folded or cycled, the
    payloads' matches of a text filter, and the note over the tree."""

    def __init__(self, app: TlviewApp) -> None:
        self.app = app
        self.search_note = ""  # what the search in payloads found, for the tree's note

    def apply(self, flt: Filter) -> None:
        app = self.app
        app.flt = flt
        self.search_note = ""
        app.show_model(TreeModel(app.index, flt, live=app.live is not None, ranks=app.model.ranks))
        app.refresh_views()
        if flt.text:
            app.run_worker(partial(workers.search_in_payloads, app, app.index, flt), name="search",
                           group="search", thread=True, exclusive=True, exit_on_error=False)

    def fold_ranks(self, groups: RankGroups | None, folded: TreeModel | None = None) -> None:
        """The folder is read: alike ranks (diagnose/what_ran.py) become one entry of the tree, the
        first rank standing for them (the model's rank_groups; `rank:N` shows any other).
        `folded`: that tree, built by the worker, if made with the filter still in use."""
        app = self.app
        if app.live is None and groups is not None and groups.folds:
            usable = folded is not None and folded.filter is app.flt and folded.index is app.index
            app.show_model(folded if usable and folded is not None else TreeModel(app.index, app.flt, ranks=groups))

    def cycle_rank(self, step: int) -> None:
        app = self.app
        groups = app.model.ranks  # once read: a rank for each group of alike ranks
        ranks = [g.rank for g in groups] if groups is not None and len(groups) > 1 else []
        # ranks all alike (or not grouped yet): each rank, never "one rank" of a job of several
        ranks = ranks or list(app.index.numbered_ranks())
        if len(ranks) < 2:
            app.notify("these logs have one rank", timeout=2)
            return
        self.apply(app.flt.cycle_rank(ranks, step))
        app.notify("all ranks" if app.flt.rank is None else f"rank {app.flt.rank}", timeout=1.5)

    def payload_matches(self, message: PayloadMatches) -> None:
        app = self.app
        if not message.flt.same_query(app.flt):
            return  # a search for an older filter
        self.search_note = message.note
        app.flt = app.flt.with_payload_matches(message.nodes)
        app.model.filter = app.flt
        app.tree.apply(app.model.apply({n.compile for n in message.nodes if n.compile is not None}))
        self.show_tree_note()

    def show_tree_note(self) -> None:
        """What the filter hides, or why the tree is empty, over the tree."""
        app = self.app
        empty = app.model.shown == 0 and not app._backlog and (app.facts.finished or app.caught_up)
        app.query_one(TreeNote).show(app.flt, app.model, self.search_note,
                                     (app.facts.waiting or "no compile ids in these logs") if empty else "",
                                     0 if app.auto_follow else app.new_unseen)
