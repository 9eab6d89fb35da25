"""The footer: the keys that work where the focus is, on one line (`q Quit  ? Help  / Filter`),
the command palette's key on the right.

Written here, not Textual's Footer: that one composes a widget per key and recomposes them all on
every change of the bindings, that is on every focus change (the tree to a pane, a search bar
opening). Measured on the 2-core machine: 150-250 ms of the main thread a focus change, most of a
key's time. This is one Static updated with one line. A key is still clicked as in the Footer
(its click presses the key).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.widgets import Static


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
    COMPONENT_CLASSES = {"key-hints--key", "key-hints--description"}
    ALLOW_SELECT = False

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.shown: list[tuple[str, str, str]] = []  # (key, as shown, description), left to right
        self._hints: tuple | None = None  # (the keys, the palette's key) to draw
        self._drawn: tuple | None = None

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
        shown, palette, seen = [], None, set()
        for _node, binding, enabled, _tooltip in screen.active_bindings.values():
            if binding.key == self.app.COMMAND_PALETTE_BINDING and self.app.ENABLE_COMMAND_PALETTE:
                palette = (binding.key, self.app.get_key_display(binding), binding.description, enabled)
            elif binding.show and binding.action not in seen:  # one key an action, as the Footer
                seen.add(binding.action)
                shown.append((binding.key, self.app.get_key_display(binding), binding.description, enabled))
        self.shown = [(key, display, description) for key, display, description, _ in shown]
        self._hints = (tuple(shown), palette)
        self._draw()

    def _draw(self) -> None:
        hints = self._hints
        if hints is None or (hints, self.size.width) == self._drawn:
            return  # the same keys: no redraw (a focus change within one widget's keys)
        self._drawn = (hints, self.size.width)
        shown, palette = hints
        key_style = self.get_component_rich_style("key-hints--key", partial=True)
        words_style = self.get_component_rich_style("key-hints--description", partial=True)
        line = Text(no_wrap=True, overflow="crop")
        for key, display, description, enabled in shown:
            line.append_text(self._hint(key, display, description, enabled, key_style, words_style))
        if palette is not None:
            right = self._hint(*palette, key_style, words_style)
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
