"""The command palette (Ctrl+P): every action of the keys, plus filter words and ranks, generated
from the same tables the keys and the filter use."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from textual.app import SystemCommand
from textual.await_complete import AwaitComplete
from textual.command import CommandPalette

from tlview.domain.rank_history import RankGroups
from tlview.report.rich_text import ranks_text
from tlview.ui.detail import TABS
from tlview.views.filters import CATEGORIES
from tlview.views.tree import JUMPS


class CommandsApp(Protocol):
    """What the palette's commands run: the explorer's and the compare view's actions."""

    def rank_groups(self) -> RankGroups: ...
    def set_filter(self, expression: str) -> None: ...
    def action_clear_filter(self) -> None: ...
    def action_jump(self, kind: str, step: int) -> None: ...
    def action_show_tab(self, tab_id: str) -> None: ...
    def action_copy_payload(self) -> None: ...
    def action_help(self) -> None: ...


def tlview_commands(app: CommandsApp) -> Iterable[SystemCommand]:
    for word in CATEGORIES:
        yield SystemCommand(f"Filter: {word}", f"show only compile ids with {word}",
                            lambda w=word: app.set_filter(w))
    yield SystemCommand("Filter: clear", "show every compile id", app.action_clear_filter)
    for kind in JUMPS:
        article = "an" if kind[0] in "aeiou" else "a"
        yield SystemCommand(f"Jump: next {kind}", f"select the next compile id with {article} {kind}",
                            lambda k=kind: app.action_jump(k, 1))
    for tab_id, title, what, _ in TABS:
        yield SystemCommand(f"Show: {title}", what, lambda t=tab_id: app.action_show_tab(t))
    # alike ranks (one compile history, the same run) are one command (1,024 ranks: never 1,024 rows)
    for group in app.rank_groups():
        stands = f" (it stands for {ranks_text(group.ranks)})" if group.count > 1 else ""
        yield SystemCommand(f"Rank: {group.title()}", f"show rank {group.rank} only{stands}",
                            lambda r=group.rank: app.set_filter(f"rank:{r}"))
    yield SystemCommand("Copy payload", "copy the shown payload to the clipboard", app.action_copy_payload)
    yield SystemCommand("Keys", "list every key", app.action_help)


class Palette(CommandPalette):
    """Textual's palette, with two of its races closed (each ended tlview; random keys in tmux
    found them). Its list pages by the lines it has laid out: a page key while the palette
    replaced its options (as a query was typed) found none (KeyError in OptionList); there is no
    page to move by then. And a second Enter as the first one's command was chosen dismissed it
    again: it popped the screen under it (ScreenStackError, the last one)."""

    def dismiss(self, result=None) -> AwaitComplete:
        if self.app.screen is not self:  # dismissed already
            return AwaitComplete.nothing()
        return super().dismiss(result)

    def _action_command_list(self, action: str) -> None:
        try:
            super()._action_command_list(action)
        except KeyError:
            if action not in ("page_up", "page_down"):
                raise
