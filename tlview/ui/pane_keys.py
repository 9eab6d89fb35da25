"""What the explorer and the compare view share about their panes: 1-9 show one, `?` lists every
key (the app's key table, keys.py), Ctrl+P opens the palette. Each app owns one."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App
from textual.command import SimpleProvider
from textual.theme import ThemeProvider

from tlview.ui.commands import Palette
from tlview.ui.detail import DetailPane
from tlview.ui.help_screen import HelpScreen


class PaneKeys:
    def __init__(self, app: App, key_table: Callable[[], list[tuple[str, str, str]]]) -> None:
        self.app = app
        self.key_table = key_table  # what `?` lists (keys.key_table, or the compare view's)

    def show_tab(self, tab_id: str) -> None:
        self.app.query_one(DetailPane).active = tab_id

    def command_palette(self) -> None:
        """Ctrl+P: Textual's palette, its races closed (commands.Palette)."""
        if self.app.use_command_palette and not Palette.is_open(self.app):
            self.app.push_screen(Palette(id="--command-palette"))

    def search_themes(self) -> None:
        """The palette's "Theme" command: Textual's theme search, in tlview's palette (Textual's
        own, chosen twice in a moment, ended tlview: bench/random_keys.py)."""
        self.app.push_screen(Palette(providers=[ThemeProvider], placeholder="Search for themes…"))

    def search_commands(self, commands, placeholder: str = "Search for commands…"):
        """Textual's command search, in tlview's palette (as search_themes)."""
        # an instance, not a class, as Textual's own search_commands passes it (its hint says a class)
        provider = SimpleProvider(self.app.screen, commands)
        return self.app.push_screen(Palette(providers=[provider], placeholder=placeholder))  # type: ignore[list-item]

    def help(self) -> None:
        self.app.push_screen(HelpScreen(self.key_table()))
