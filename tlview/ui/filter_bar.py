"""The `/` bar: what is typed becomes a Filter (category words, `rank:N`, free text), posted as a
message; the app applies it."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.message import Message
from textual.widgets import Input

from tlview.model.filters import Filter, FilterError


class FilterBar(Input):
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

    def open(self) -> None:
        self.display = True
        self.focus()

    def show_expression(self, expression: str) -> None:
        self.display = True
        self.value = expression

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
