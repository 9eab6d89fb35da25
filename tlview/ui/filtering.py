"""The tree's filter: `/` opens the bar, what is typed filters as it is typed, Enter keeps the
filter and closes the bar, Esc clears both; text is also looked for inside payloads, in a worker.
Mixed into the app."""

from __future__ import annotations

from functools import partial

from rich.text import Text

from tlview.domain.rank_history import RankGroups
from tlview.ui import workers
from tlview.ui.filter_bar import FilterBar
from tlview.ui.messages import PayloadMatches, while_shown
from tlview.ui.payload_view import PayloadView
from tlview.ui.tree_note import TreeNote
from tlview.views.filters import Filter
from tlview.views.tree import TreeModel


class Filtering:
    @property
    def filter_bar(self) -> FilterBar:
        return self.query_one(FilterBar)

    def action_filter(self) -> None:
        """`/` filters the tree; from inside a pane with a payload (its list of graphs, its
        dropdown), it searches that payload, as `/` in the payload itself does."""
        view = self.detail.main_view() if self.detail.has_focus_within else None
        if isinstance(view, PayloadView):
            view.action_search()
            return
        self.filter_bar.open()

    def set_filter(self, expression: str) -> None:
        self.filter_bar.show_expression(expression)

    def on_filter_bar_applied(self, message: FilterBar.Applied) -> None:
        self.apply_filter(message.flt)

    def on_filter_bar_invalid(self, message: FilterBar.Invalid) -> None:
        self.query_one(TreeNote).update(Text(message.reason, style="yellow"))

    def apply_filter(self, flt: Filter) -> None:
        self.flt = flt
        self.search_note = ""
        self.show_model(TreeModel(self.index, flt, live=self.live is not None, ranks=self.model.ranks))
        self.refresh_views()
        if flt.text:
            self.run_worker(partial(workers.search_in_payloads, self, self.index, flt), name="search",
                            group="search", thread=True, exclusive=True, exit_on_error=False)

    def fold_ranks(self, groups: RankGroups | None, folded: TreeModel | None = None) -> None:
        """The folder is read: ranks of one compile history become one entry of the tree, the
        first rank standing for them (the model's rank_groups; `rank:N` shows any other).
        `folded`: that tree, built by the worker, if made with the filter still in use."""
        if self.live is None and groups is not None and groups.folds:
            usable = folded is not None and folded.filter is self.flt and folded.index is self.index
            self.show_model(folded if usable else TreeModel(self.index, self.flt, ranks=groups))

    def action_cycle_rank(self, step: int) -> None:
        groups = self.model.ranks  # once read: a rank for each group of one compile history
        ranks = [g.rank for g in groups] if groups is not None else list(self.index.numbered_ranks())
        if len(ranks) < 2:
            self.notify("these logs have one rank", timeout=2)
            return
        self.apply_filter(self.flt.cycle_rank(ranks, step))
        self.notify("all ranks" if self.flt.rank is None else f"rank {self.flt.rank}", timeout=1.5)

    @while_shown
    def on_payload_matches(self, message: PayloadMatches) -> None:
        if not message.flt.same_query(self.flt):
            return  # a search for an older filter
        self.search_note = message.note
        self.flt = self.flt.with_payload_matches(message.nodes)
        self.model.filter = self.flt
        self.tree.apply(self.model.apply({n.compile for n in message.nodes}))
        self._show_tree_note()

    def _show_tree_note(self) -> None:
        """What the filter hides, or why the tree is empty, over the tree."""
        empty = self.model.shown == 0 and not self._backlog and (self.facts.finished or self.caught_up)
        self.query_one(TreeNote).show(self.flt, self.model, self.search_note,
                                      (self.facts.waiting or "no compile ids in these logs") if empty else "",
                                      0 if self.auto_follow else self.new_unseen)

    def action_clear_filter(self) -> None:
        if not self.flt.active and not self.filter_bar.display:
            return
        self.filter_bar.close()
        self.apply_filter(Filter())
        self.screen.set_focus(self.tree)
