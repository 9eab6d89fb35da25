"""The compare view's first lines: the two runs, and the totals line before → after (the counts
of `--report --compare`, read from the comparison). It wraps: never cut, at any width."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from tlview.diagnose.compare import Comparison
from tlview.report.rich_text import distinct_paths
from tlview.textsafe import visible_name

FEWER, MORE = "bold green", "bold red"  # (bold: a change reads without colour too)


class CompareHead(Static):
    DEFAULT_CSS = """
    CompareHead { dock: top; height: auto; padding: 0 1; background: $boost; }
    """

    # layout=True: the totals line that comes wraps at a narrow width, a line more than "reading
    # both runs…" took; with a repaint alone, the head kept its height until some other layout
    # came, and cut it (the 80x24 snapshot, once under load).
    comparison: reactive[Comparison | None] = reactive(None, layout=True)
    failure: reactive[str] = reactive("", layout=True)

    def __init__(self, before: str, after: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.names = tuple(visible_name(name) for name in distinct_paths(before, after))

    def render(self) -> Text:
        before, after = self.names
        text = Text("compare ", style="bold")
        text.append(before, style="bold")
        text.append(" → ")
        text.append(after, style="bold")
        text.append("\n")
        if self.failure:
            text.append(f"could not compare: {self.failure}", style="bold red")
        elif self.comparison is None:
            text.append("reading both runs…")
        else:
            text.append_text(totals_line(self.comparison))
        return text


def totals_line(comparison: Comparison) -> Text:
    """`failures 2 → 0 · recompiles 5 → 1 · ...`: fewer in green, more in red, both bold."""
    line = Text()
    for what, before, after in comparison.count_changes():
        if line:
            line.append(" · ")
        line.append(f"{what} ")
        line.append(f"{before} → {after}", style=FEWER if after < before else MORE if after > before else "")
    if (change := comparison.compile_seconds_change) is not None:
        line.append(" · compile time ")
        line.append(f"{change:+.3f} s", style=FEWER if change < 0 else MORE if change > 0 else "")
    return line
