"""`?`: every key, generated from the bindings of the app and its widgets (each says what it does
in its tooltip), and what the status symbols mean."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tlview.model.status import Status
from tlview.ui.keys import HELP_SECTIONS

KEY_NAMES = {"question_mark": "?", "slash": "/", "escape": "Esc", "left_square_bracket": "[",
             "right_square_bracket": "]", "enter": "Enter", "left": "←", "right": "→",
             "home": "Home", "end": "End", "up": "↑", "down": "↓", "ctrl+p": "Ctrl+P", "tab": "Tab",
             "shift+tab": "Shift+Tab"}


def key_text(binding: Binding) -> str:
    return " ".join(binding.key_display or KEY_NAMES.get(k, k) for k in binding.key.split(","))


def help_rows(bindings: list[Binding]) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section, [(keys, what)]): bindings of one section that say the same thing share a row."""
    groups: dict[str, dict[str, list[str]]] = {}
    for binding in bindings:
        if not binding.tooltip:
            continue
        group = HELP_SECTIONS.get(binding.id or "", "Other")
        keys = groups.setdefault(group, {}).setdefault(binding.tooltip, [])
        if key_text(binding) not in keys:
            keys.append(key_text(binding))
    return [(group, [(" / ".join(keys), what) for what, keys in rows.items()])
            for group, rows in groups.items()]


def legend() -> Text:
    symbols = "  ".join(f"{s.label} ({s.meaning})" for s in Status)
    return Text(f"Status symbols: {symbols}.\n"
                "Badges: ↻N recompile reasons  ✂N graph breaks  GN guards  ⚠N problems in the input.",
                style="dim")


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96; height: auto; max-height: 90%; border: round $accent;
                                  background: $panel; padding: 0 1; }
    """

    def __init__(self, bindings: list[Binding]) -> None:
        super().__init__()
        self.rows = help_rows(bindings)

    def compose(self):
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column()
        for section, rows in self.rows:
            table.add_row(Text(section, style="bold underline"), "")
            for key, what in rows:
                table.add_row(key, what)
        table.add_row("", "")
        table.add_row("", legend())
        with VerticalScroll():
            yield Static(table)

    def action_dismiss(self) -> None:
        self.dismiss()
