"""What the explorer (app.py) and the compare view (compare_app.py) share: the objects both own
(the footer's voice, the filter's keys, the panes' keys, the payload's actions, `m`/`o`) and the
`action_*`/`on_*` that pass keys and messages on to them, written once.

Textual dispatches an `on_*` handler in every class along the MRO that defines one, so a handler
defined here is not defined again in a subclass (it would run twice); what differs (`on_mount`,
the workers' failures) is each subclass's own."""

from __future__ import annotations

import os
from collections.abc import Callable

from textual import on
from textual.app import App
from textual.color import Color
from textual.events import Mount

from tlview.diagnose.what_ran import rank_groups
from tlview.domain.rank_history import RankGroups
from tlview.index.index import Index
from tlview.ui.actions import PayloadActions
from tlview.ui.commands import tlview_commands
from tlview.ui.detail import DetailPane
from tlview.ui.filter_bar import FilterBar
from tlview.ui.filtering import FilterKeys
from tlview.ui.key_hints import FooterVoice, Said
from tlview.ui.no_color import readable_no_color
from tlview.ui.pane_keys import PaneKeys
from tlview.ui.pane_reading import PaneReading
from tlview.ui.saved_theme import save_theme, saved_theme
from tlview.ui.search import SearchAsked, SearchBar
from tlview.ui.sixteen_colours import ReadableIn16, draws_sixteen, sixteen_theme
from tlview.ui.theme_colours import ReadableDim, terminal_theme
from tlview.views.filters import Filter


class LogsApp(App[int]):
    """An app on logs with the explorer's keys: what it does on a shared key or message is done by
    the objects it owns (each built here), its `action_*` and `on_*` pass them on. A subclass
    says which logs (`index`), what a filter does (`apply_filter`) and what b/r/x jump to
    (`action_jump`)."""

    def __init__(self, flt: Filter | None, key_table: Callable[[], list[tuple[str, str, str]]]) -> None:
        super().__init__()
        self._sixteen = ReadableIn16(enabled=False)  # on at mount, where the terminal draws sixteen colours
        self.flt = flt or Filter()  # which compile ids are shown (--rank/--filter, then `/`)
        self.voice = FooterVoice(self)
        self.filter_keys = FilterKeys(self, lambda: self.flt, self.apply_filter)
        self.pane_keys = PaneKeys(self, key_table)
        self.payload_actions = PayloadActions(self)
        self.pane_reading = PaneReading(self)  # `m` and `o`
        # the theme chosen at an earlier start (saved_theme.py), when this Textual still has it
        self._theme_kept = saved_theme()
        if self._theme_kept in self.available_themes:
            self.theme = self._theme_kept
        readable_no_color(self._filters)  # NO_COLOR: grays that read (Textual's turned red into 1.3:1)
        self._filters.insert(0, ReadableDim(lambda: self.ansi_theme))  # dim text that reads
        self._filters.append(self._sixteen)
        self._use_theme_colours()
        if "TEXTUAL_ANIMATIONS" not in os.environ:
            # A tab's sliding underline holds the new pane's first paint for 300 ms: a log viewer
            # shows content at once (TEXTUAL_ANIMATIONS=full brings animations back).
            self.animation_level = "none"

    @on(Mount)
    def _sixteen_colours_at_mount(self) -> None:
        # (a headless app, tests and snapshots, is known as such only once it runs; not on_mount:
        # each app has its own, and Textual would run both)
        self._sixteen.enabled = draws_sixteen(self)
        if self._sixteen.enabled:
            self._use_theme_colours()

    def watch_theme(self, theme: str) -> None:
        """A theme chosen: its colours, and kept for the next start."""
        self._use_theme_colours()
        self._keep_theme(theme)

    def _use_theme_colours(self) -> None:
        """The ANSI colours of tlview's styles from the theme's variables (theme_colours.py);
        Textual draws the screen again with them."""
        current = self.current_theme
        colours = terminal_theme(current)
        if self._sixteen.enabled:
            colours = sixteen_theme(Color(*colours.background_color), Color(*colours.foreground_color))
        if current.dark:
            self.ansi_theme_dark = colours
        else:
            self.ansi_theme_light = colours

    # ---- what each app says for itself -----------------------------------------------------------

    @property
    def index(self) -> Index:
        """The logs the palette's commands speak of."""
        raise NotImplementedError

    def rank_groups(self) -> RankGroups:
        """The ranks grouped (compile history, what they ran: the palette's Rank commands)."""
        return rank_groups(self.index)

    def apply_filter(self, flt: Filter) -> None:
        """A filter chosen (the bar, Esc, the palette): shown."""
        raise NotImplementedError

    def action_jump(self, kind: str, step: int) -> None:
        """b/r/x (and the palette's jumps): the next compile id of that kind."""
        raise NotImplementedError

    @property
    def detail(self) -> DetailPane:
        return self.query_one(DetailPane)

    def get_system_commands(self, screen):
        yield from super().get_system_commands(screen)
        yield from tlview_commands(self)

    # ---- reading the panes (pane_reading.py, search.py) ----------------------------------------

    def on_search_asked(self, message: SearchAsked) -> None:
        self.query_one(SearchBar).open(message.search)

    async def action_output_code(self) -> None:
        await self.pane_reading.output_code()

    def action_toggle_maximize(self) -> None:
        self.pane_reading.toggle_maximize()

    # ---- the theme, kept for the next start (saved_theme.py) -------------------------------------

    _theme_kept: str | None = None

    def _keep_theme(self, theme: str) -> None:
        if theme == self._theme_kept:
            return
        self._theme_kept = theme
        if (why := save_theme(theme)) is not None:
            self.notify(f"the theme is not kept for the next start: {why}", title="theme",
                        severity="warning", timeout=8, markup=False)

    # ---- what the app says (key_hints.FooterVoice) ------------------------------------------------

    @property
    def said(self):
        return self.voice.said

    def notify(self, message: str, *, title: str = "", severity: str = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        self.voice.notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def clear_notifications(self) -> None:
        self.voice.clear()

    def on_said(self, event: Said) -> None:
        self.voice.say(event)

    # ---- the filter (filtering.FilterKeys) ------------------------------------------------------

    @property
    def filter_bar(self) -> FilterBar:
        return self.filter_keys.bar

    def action_filter(self) -> None:
        self.filter_keys.open()

    def set_filter(self, expression: str) -> None:
        self.filter_keys.set_filter(expression)

    def on_filter_bar_applied(self, message: FilterBar.Applied) -> None:
        self.apply_filter(message.flt)

    def on_filter_bar_invalid(self, message: FilterBar.Invalid) -> None:
        self.filter_keys.invalid(message)

    def action_clear_filter(self) -> None:
        self.filter_keys.clear()

    # ---- the panes' keys (pane_keys.PaneKeys, actions.PayloadActions) ------------------------------

    def action_show_tab(self, tab_id: str) -> None:
        self.pane_keys.show_tab(tab_id)

    def action_command_palette(self) -> None:
        self.pane_keys.command_palette()

    def search_themes(self) -> None:
        self.pane_keys.search_themes()

    def search_commands(self, commands, placeholder: str = "Search for commands…"):
        return self.pane_keys.search_commands(commands, placeholder)

    def action_help(self) -> None:
        self.pane_keys.help()

    def action_copy_payload(self) -> None:
        self.payload_actions.copy()

    def action_open_external(self) -> None:
        self.payload_actions.open_external()
