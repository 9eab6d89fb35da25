"""Reading a payload pane as in `less`: `/` searches in it (the bar at the bottom; matches are
highlighted as the query is typed, Enter keeps them, Esc ends the search), and `m` maximizes the
panes (Textual's maximize; Esc or `m` again restores). Mixed into the app."""

from __future__ import annotations

from textual import events, on
from textual.binding import Binding
from textual.widgets import Input

from tlview.ui.payload_view import PayloadView


class SearchBar(Input):
    BINDINGS = [Binding("escape", "end", "End search", show=False)]

    def __init__(self, **kwargs) -> None:
        super().__init__(placeholder="search in this pane  (Enter: keep, n / N: next / previous, "
                         "Esc: end)", **kwargs)
        self.display = False
        self.view: PayloadView | None = None

    def open(self, view: PayloadView) -> None:
        self.view = view
        self.value = view.search.query if view.search is not None else ""
        self.display = True
        self.screen.set_focus(self)  # now: the keys typed next are the query

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        if self.view is not None and self.display:
            self.view.search_for(event.value)

    async def _on_key(self, event: events.Key) -> None:
        if not self.display:
            # Keys typed with the Enter that closed the bar were queued here before it closed:
            # they are for the widget that has the focus now.
            event.stop()
            event.prevent_default()
            self.app.post_message(events.Key(event.key, event.character))
            return
        if event.key == "enter":
            # Here, not by the binding: its action runs after the keys already queued behind it.
            event.stop()
            event.prevent_default()
            self.action_submit()
            return
        await super()._on_key(event)

    def action_submit(self) -> None:
        # At once, not by the Submitted message: a key typed right after Enter (`n`) is for the view.
        self._close()

    def action_end(self) -> None:
        if self.view is not None:
            self.view.end_search()
        self._close()

    def _close(self) -> None:
        self.display = False
        if self.view is not None and self.view.is_attached:
            self.screen.set_focus(self.view)


class PaneReading:
    def on_payload_view_search_asked(self, message: PayloadView.SearchAsked) -> None:
        self.query_one(SearchBar).open(message.view)

    def action_toggle_maximize(self) -> None:
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        target = screen.focused if self.detail.has_focus_within else self.detail.main_view()
        screen.set_focus(target)
        screen.maximize(target)
