"""The footer: the keys that work where the focus is, on one line (`q Quit  ? Help  / Filter`),
the command palette's key on the right; and, for a moment, what the app says (`say`): a toast
covered the panes' text ("restarted because", "match 2 of 7"), this line covers nothing.

Written here, not Textual's Footer: that one composes a widget per key and recomposes them all on
every change of the bindings, that is on every focus change (the tree to a pane, a search bar
opening). Measured on the 2-core machine: 150-250 ms of the main thread a focus change, most of a
key's time. This is one Static updated with one line. A key is still clicked as in the Footer
(its click presses the key).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.app import App
from textual.message import Message
from textual.reactive import reactive
from textual.timer import Timer
from textual.widgets import Static

SAID_KEPT = 100  # what the app said, kept for tests and for a look back


class KeyHints(Static):
    DEFAULT_CSS = """
    KeyHints {
        dock: bottom;
        height: 1;
        width: 1fr;
        text-wrap: nowrap;
        text-overflow: clip;
        background: $footer-background;
    }
    KeyHints > .key-hints--key { color: $footer-key-foreground; text-style: bold; }
    KeyHints > .key-hints--description { color: $footer-description-foreground; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-hints--key", "key-hints--description"}
    ALLOW_SELECT = False

    hints: reactive[tuple | None] = reactive(None, init=False, repaint=False)  # (the keys, the palette's)
    saying: reactive[Text | None] = reactive(None, init=False, repaint=False)  # said instead of the keys

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.shown: list[tuple[str, str, str]] = []  # (key, as shown, description), left to right
        self._drawn: tuple | None = None
        self._said_timer: Timer | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def on_resize(self) -> None:
        self._draw()

    def _bindings_changed(self, screen) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        shown: list[tuple[str, str, str, bool]] = []
        palette: tuple[str, str, str, bool] | None = None
        seen = set()
        for _node, binding, enabled, _tooltip in screen.active_bindings.values():
            if binding.key == self.app.COMMAND_PALETTE_BINDING and self.app.ENABLE_COMMAND_PALETTE:
                palette = (binding.key, self.app.get_key_display(binding), binding.description, enabled)
            elif binding.show and binding.action not in seen:  # one key an action, as the Footer
                seen.add(binding.action)
                shown.append((binding.key, self.app.get_key_display(binding), binding.description, enabled))
        self.shown = [(key, display, description) for key, display, description, _ in shown]
        self.hints = (tuple(shown), palette)  # (drawn by the watcher when they changed)

    SEVERITY_STYLE: ClassVar[dict[str, str]] = {"information": "bold", "warning": "bold yellow",
                                                 "error": "bold red"}

    def say(self, title: str, message: Text, severity: str, seconds: float) -> None:
        said = Text(" ")
        if title:
            said.append(f"{title}: ", style=self.SEVERITY_STYLE.get(severity, "bold"))
        said.append_text(message)
        said.stylize(self.SEVERITY_STYLE.get(severity, "bold") if severity != "information" else "")
        if self._said_timer is not None:
            self._said_timer.stop()
        self._said_timer = self.set_timer(seconds, self.unsay)
        self.saying = said

    def unsay(self) -> None:
        if self._said_timer is not None:
            self._said_timer.stop()
        self._said_timer = None
        self.saying = None

    def watch_saying(self, said: Text | None) -> None:
        if said is not None:
            self.update(said)
        else:
            self._drawn = None  # the keys come back
            self._draw()

    def watch_hints(self) -> None:
        self._draw()

    def _draw(self) -> None:
        hints = self.hints
        if self.saying is not None:
            return  # the keys come back when what was said is over
        if hints is None or (hints, self.size.width) == self._drawn:
            return  # the same keys: no redraw (a focus change within one widget's keys)
        self._drawn = (hints, self.size.width)
        shown, palette = hints
        key_style = self.get_component_rich_style("key-hints--key", partial=True)
        words_style = self.get_component_rich_style("key-hints--description", partial=True)
        line = Text(no_wrap=True, overflow="crop")
        for key, display, description, enabled in shown:
            hint = self._hint(key, display, description, enabled, key_style, words_style)
            if self.size.width and line.cell_len + hint.cell_len > self.size.width:
                break  # whole hints only (at 80 columns one was cut: "m Maxi", "^p palettez")
            line.append_text(hint)
        if palette is not None:
            palette_key, palette_display, palette_description, palette_enabled = palette
            right = self._hint(palette_key, palette_display, palette_description, palette_enabled,
                               key_style, words_style)
            room = self.size.width - line.cell_len - right.cell_len - 1
            if room >= 1:  # the palette's key on the right, as the Footer has it
                line.append(" " * room + "▏")
                line.append_text(right)
        self.update(line)

    @staticmethod
    def _hint(key: str, display: str, description: str, enabled: bool, key_style: Style,
              words_style: Style) -> Text:
        click = Style(meta={"@click": f"app.simulate_key({key!r})"})
        dim = Style(dim=not enabled)
        hint = Text(" ")
        hint.append(display, key_style + dim + click)
        hint.append(f" {description} ", words_style + dim + click)
        return hint


@dataclass
class Said(Message):
    """What the app says (App.notify): said on the footer's line, on the app's thread."""

    title: str
    message: str
    severity: str
    seconds: float
    markup: bool


class FooterVoice:
    """What an app says (its `notify`, thread-safe as Textual's) is said on the footer's line for
    a moment, where it covers nothing, and kept in `said` (the newest last). Textual's toasts
    covered the panes' text ("restarted because", "match 2 of 7"). The app owns one and routes
    `notify`, `clear_notifications` and the Said message to it."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.said: deque[Said] = deque(maxlen=SAID_KEPT)

    def notify(self, message: str, *, title: str = "", severity: str = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        seconds = self.app.NOTIFICATION_TIMEOUT if timeout is None else timeout
        self.app.post_message(Said(title, message, severity, seconds, markup))

    def clear(self) -> None:
        for hints in self.app.query(KeyHints):
            hints.unsay()

    def say(self, event: Said) -> None:
        self.said.append(event)
        try:
            message = Text.from_markup(event.message) if event.markup else Text(event.message)
        except Exception:  # noqa: BLE001 - not valid markup: as written
            message = Text(event.message)
        for hints in self.app.query(KeyHints):
            hints.say(event.title, message, event.severity, event.seconds)
