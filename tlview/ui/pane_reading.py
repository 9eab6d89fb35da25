"""Reading the panes: `m` maximizes them (Textual's maximize; Esc or `m` again restores) and `o`
opens the selected compile id's output code. Owned by both apps (their `pane_reading`); their actions
call it. (`/` in a pane is search.py.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from textual.screen import Screen
from textual.widget import Widget

from tlview.domain.role import Role
from tlview.ui.detail import DetailPane
from tlview.ui.payload_view import PayloadView

if TYPE_CHECKING:  # (at run time imported once its tab is first opened: detail.TABS)
    from tlview.ui.graphs_pane import GraphsPane

W = TypeVar("W", bound=Widget)


class ReadingApp(Protocol):
    """What PaneReading asks of its app."""

    @property
    def screen(self) -> Screen[Any]: ...

    def query_one(self, selector: str, expect_type: type[W]) -> W: ...

    def notify(self, message: str, *, timeout: float | None = None, markup: bool = True) -> None: ...

    def call_after_refresh(self, callback: Callable[..., Any], *args: Any) -> bool: ...


class PaneReading:
    def __init__(self, app: ReadingApp) -> None:
        self.app = app
        self._focused_before_maximize: Widget | None = None  # where `m` was pressed: focused again once restored

    @property
    def _detail(self) -> DetailPane:
        return self.app.query_one("#detail", DetailPane)

    async def output_code(self) -> None:
        """`o`: the output code of the selected compile id, in one key (it took eight)."""
        detail = self._detail
        graphs = cast("GraphsPane", await detail.pane_mounted("graphs"))  # (pressed before it was: mounted now)
        graphs.choose(Role.CODE, detail.selection.entry)
        detail.open("graphs")
        if graphs.pick(Role.CODE):
            self.app.screen.set_focus(self.app.query_one("#graph-view", PayloadView))
        elif detail.selection.entry is not None:
            self.app.notify("no output code for this entry (TORCH_LOGS text needs output_code; a compile "
                            "that failed or broke before Inductor has none)", timeout=5, markup=False)

    def toggle_maximize(self) -> None:
        """The panes with their tabs fill the screen, from the tree or from inside a pane (Textual
        maximized the focused widget's container: nothing from the Summary, and the tree kept a
        pane's focus after, so j no longer moved it)."""
        screen = self.app.screen
        if screen.maximized is not None:
            screen.minimize()  # (the focus goes back in maximized_changed)
            return
        detail = self._detail
        self._focused_before_maximize = screen.focused
        target = screen.focused if detail.has_focus_within else detail.main_view()
        screen.maximize(detail, container=False)
        screen.set_focus(target)

    def maximized_changed(self, maximized: Widget | None) -> None:
        """Restored (`m` again, or Esc): the focus goes back to where `m` was pressed."""
        if maximized is not None:
            return
        back, self._focused_before_maximize = self._focused_before_maximize, None
        if back is not None and back.is_attached:
            self.app.call_after_refresh(self.app.screen.set_focus, back)  # (once shown again: focusable)
