"""The line above the explorer: what happened in the run, its worst problem in one line
(diagnose/worst.py), in the colour of its kind and with a symbol where colour is gone."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tlview.diagnose.worst import JOB, WorstProblem
from tlview.domain.verdict import Kind
from tlview.textsafe import visible

# (ANSI's names, drawn in the theme's colours: theme_colours.py), as the status line counts them
LOOKS = {JOB: ("✗ ", "bold red"), Kind.FRAME_SKIPPED.key: ("✗ ", "bold red"), Kind.FAILURE.key: ("✗ ", "bold red"),
         Kind.RECOMPILE.key: ("⚠ ", "bold cyan"), Kind.GRAPH_BREAK.key: ("⚠ ", "bold yellow"),
         Kind.PERF.key: ("⚠ ", "bold magenta"),
         None: ("✓ ", "bold green")}


class Headline(Static):
    DEFAULT_CSS = """
    Headline { height: 1; padding: 0 1; background: $panel; text-wrap: nowrap; text-overflow: ellipsis; }
    """

    def show(self, worst: WorstProblem) -> None:
        symbol, style = LOOKS.get(worst.kind, ("", "bold"))
        # (a span, not the Text's base style: Textual draws a base style's ANSI colour raw, not
        # in the theme's readable colours)
        self.update(Text().append(symbol + visible(worst.headline), style=style), layout=False)

    @property
    def text(self) -> str:
        return str(self.render())
