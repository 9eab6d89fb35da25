"""The `/` bar: what is typed becomes a Filter (category words, `rank:N`, free text), posted as a
message; the app applies it."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input

from tlview.ui.bar_input import BarInput
from tlview.views.filters import Filter, FilterError


class FilterBar(BarInput):
    @dataclass
    class Applied(Message):
        flt: Filter

    @dataclass
    class Invalid(Message):
        """What is typed is not a filter yet (e.g. `rank:` while it is being typed)."""

        reason: str

    def __init__(self, flt: Filter, **kwargs) -> None:
        super().__init__(value=flt.expression(), placeholder="filter: recompiles graph_breaks errors "
                         "rank:N or text  (Enter: keep, Esc: clear)", **kwargs)
        self.display = False
        self._came_from: Widget | None = None  # the widget focused when `/` opened the bar

    def open(self) -> None:
        self._came_from = self.screen.focused
        self.display = True
        self.screen.set_focus(self)  # now: the keys typed next are the filter

    def show_expression(self, expression: str) -> None:
        self.display = True
        self.value = expression

    def action_submit(self) -> None:  # type: ignore[override]  # sync: BarInput calls it as Enter comes
        # The focus goes back at once, not with a message: a key typed right after Enter (`j`)
        # is for the tree, not for the bar.
        self.display = False
        if self._came_from is not None and self._came_from.is_attached:
            self.screen.set_focus(self._came_from)

    def close(self) -> None:
        self.value = ""
        self.display = False

    @on(Input.Changed)
    def _typed(self, event: Input.Changed) -> None:
        event.stop()
        try:
            self.post_message(self.Applied(Filter.parse(event.value, strict_words=False)))
        except FilterError as exc:
            self.post_message(self.Invalid(str(exc)))
