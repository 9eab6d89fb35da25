"""Reading a payload pane as in `less`: `/` searches in it (the bar at the bottom; matches are
highlighted as the query is typed, Enter keeps them, Esc ends the search), and `m` maximizes the
panes (Textual's maximize; Esc or `m` again restores). Mixed into the app."""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.widgets import Input

from tlview.domain.role import Role
from tlview.ui.bar_input import BarInput
from tlview.ui.payload_view import PayloadView
from tlview.ui.view_search import SearchableLines, SearchAsked


class SearchBar(BarInput):
    BINDINGS = [Binding("escape", "end", "End search", show=False)]

    def __init__(self, **kwargs) -> None:
        super().__init__(placeholder="search in this pane  (Enter: keep, n / N: next / previous, "
                         "Esc: end)", **kwargs)
        self.display = False
        self.view: SearchableLines | None = None

    def open(self, view: SearchableLines) -> None:
        self.view = view
        self.value = view.search.query if view.search is not None else ""
        view.add_class("-searching")  # its border now, with the bar: the first character typed
        self.display = True            # then lays nothing out (it took 55-66 ms, the others 35)
        self.screen.set_focus(self)  # now: the keys typed next are the query

    def watch_value(self, value: str) -> None:
        # Searched as the value changes, not on the Changed message it posts: the character typed
        # and the matches it finds are then drawn in one frame (the message came a frame later).
        if self.view is not None and self.display:
            self.view.search_for(value)

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()  # (searched by watch_value already)

    def action_submit(self) -> None:
        # At once, not by the Submitted message: a key typed right after Enter (`n`) is for the view.
        self._close()

    def action_end(self) -> None:
        if self.view is not None:
            self.view.end_search()
        self._close()

    def _close(self) -> None:
        self.display = False
        if self.view is not None and self.view.search is None:
            self.view.remove_class("-searching")  # nothing was searched
        if self.view is not None and self.view.is_attached:
            self.screen.set_focus(self.view)


class PaneReading:
    def on_search_asked(self, message: SearchAsked) -> None:
        self.query_one(SearchBar).open(message.view)

    _focused_before_maximize = None  # where `m` was pressed: focused again once restored

    async def action_output_code(self) -> None:
        """`o`: the output code of the selected compile id, in one key (it took eight)."""
        graphs = await self.detail.pane_mounted("graphs")  # (pressed before it was: mounted now)
        graphs.choose(Role.CODE, self.detail.selection.entry)
        self.detail.open("graphs")
        if graphs.pick(Role.CODE):
            self.screen.set_focus(self.query_one("#graph-view", PayloadView))
        elif self.detail.selection.entry is not None:
            self.notify("no output code for this entry (TORCH_LOGS text needs output_code; a compile "
                        "that failed or broke before Inductor has none)", timeout=5, markup=False)

    def action_toggle_maximize(self) -> None:
        """The panes with their tabs fill the screen, from the tree or from inside a pane (Textual
        maximized the focused widget's container: nothing from the Summary, and the tree kept a
        pane's focus after, so j no longer moved it)."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()  # (the focus goes back in maximized_changed)
            return
        self._focused_before_maximize = screen.focused
        target = screen.focused if self.detail.has_focus_within else self.detail.main_view()
        screen.maximize(self.detail, container=False)
        screen.set_focus(target)

    def maximized_changed(self, maximized) -> None:
        """Restored (`m` again, or Esc): the focus goes back to where `m` was pressed."""
        if maximized is not None:
            return
        back, self._focused_before_maximize = self._focused_before_maximize, None
        if back is not None and back.is_attached:
            self.call_after_refresh(self.screen.set_focus, back)  # (once shown again: focusable)
