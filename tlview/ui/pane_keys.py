"""What the explorer and the compare view share about their panes: 1-9 show one, `?` lists every
key (the app's, its tree's and the payload views', each with its tooltip), Ctrl+P opens the
palette. Mixed into both apps."""

from __future__ import annotations

from textual.command import SimpleProvider
from textual.theme import ThemeProvider

from tlview.ui.commands import Palette
from tlview.ui.detail import DetailPane
from tlview.ui.help_screen import HelpScreen
from tlview.ui.payload_view import PayloadView


class PaneKeys:
    @property
    def detail(self) -> DetailPane:
        return self.query_one(DetailPane)

    def action_show_tab(self, tab_id: str) -> None:
        self.detail.active = tab_id

    def action_command_palette(self) -> None:
        """Ctrl+P: Textual's palette, its races closed (commands.Palette)."""
        if self.use_command_palette and not Palette.is_open(self):
            self.push_screen(Palette(id="--command-palette"))

    def search_themes(self) -> None:
        """The palette's "Theme" command: Textual's theme search, in tlview's palette (Textual's
        own, chosen twice in a moment, ended tlview: bench/random_keys.py)."""
        self.push_screen(Palette(providers=[ThemeProvider], placeholder="Search for themes…"))

    def search_commands(self, commands, placeholder: str = "Search for commands…"):
        """Textual's command search, in tlview's palette (as search_themes)."""
        return self.push_screen(Palette(providers=[SimpleProvider(self.screen, commands)], placeholder=placeholder))

    def action_help(self) -> None:
        self.push_screen(HelpScreen([*self.BINDINGS, *self.tree.BINDINGS, *PayloadView.BINDINGS]))
