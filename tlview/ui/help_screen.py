"""`?`: every key, from the key table of the app and its widgets (keys.key_table: each binding
says what it does in its tooltip), and what the status symbols mean."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tlview.domain.status import Status
from tlview.ui.keys import HELP_SCREEN_BINDINGS


def sections(table: list[tuple[str, str, str]]) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section, [(keys, what)]): the rows of a key table (keys.key_table) under their sections."""
    grouped: dict[str, list[tuple[str, str]]] = {}
    for section, keys, what in table:
        grouped.setdefault(section, []).append((keys, what))
    return list(grouped.items())


def legend() -> Text:
    symbols = "  ".join(f"{s.label} ({s.meaning})" for s in Status)
    return Text(f"Status symbols: {symbols}.\n"
                "Badges: ↻N recompile reasons  ✂N graph breaks  GN guards  ↯N perf problems (dim: informational "
                "only)  ⚠N problems in the input.\n"
                "Mouse: a click selects a row, a tab or a pane; the wheel scrolls; a drag selects "
                "text (Ctrl+C copies it while selected).",
                style="dim")


class HelpScreen(ModalScreen[None]):
    """Sections side by side when the terminal is wide enough: at 40 rows nothing scrolls."""

    BINDINGS = HELP_SCREEN_BINDINGS
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96; max-width: 96%; height: auto; max-height: 96%;
                                  border: round $accent; background: $panel; padding: 0 1; }
    HelpScreen > VerticalScroll.-two-columns { width: 150; }
    """
    TWO_COLUMNS = 130  # terminal columns from which the sections go in two columns

    def __init__(self, table: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = sections(table)

    def _section_table(self, sections) -> Table:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold cyan", no_wrap=True)
        table.add_column(max_width=52)
        for section, rows in sections:
            table.add_row(Text(section, style="bold underline"), "")
            for key, what in rows:
                table.add_row(key, what)
        return table

    def compose(self):
        two_columns = self.app.size.width >= self.TWO_COLUMNS
        if two_columns:
            sizes = [len(rows) + 1 for _, rows in self.rows]
            half, split, count = sum(sizes) / 2, 0, 0
            while split < len(sizes) and count + sizes[split] <= half:
                count += sizes[split]
                split += 1
            body = Table.grid(padding=(0, 4))
            body.add_row(self._section_table(self.rows[:split]), self._section_table(self.rows[split:]))
        else:
            body = self._section_table(self.rows)
        with VerticalScroll(classes="-two-columns" if two_columns else "") as view:
            view.border_subtitle = "j/k space g/G scroll · Esc closes"
            yield Static(Group(body, Text(""), legend()))

    def action_scroll(self, how: str) -> None:
        """j/k, space, g/G: the help read as a pane (at 80x24 it is three screens long)."""
        view = self.query_one(VerticalScroll)
        {"down": view.scroll_down, "up": view.scroll_up, "page_down": view.scroll_page_down,
         "page_up": view.scroll_page_up, "home": view.scroll_home, "end": view.scroll_end}[how](animate=False)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
