"""The colours of tlview's words, from the current Textual theme's variables.

tlview's rich styles name ANSI colours (tlview/report/rich_text.py: red for a failure, yellow for a
graph break, cyan for a recompile, green for what went well), the same for the headless report and
the explorer. Textual draws ANSI colours through a terminal theme of its own (Monokai, Alabaster),
not the app's: a yellow break read at 1.8:1 on the light theme's gray. Here the terminal theme is
made from the app's theme instead ($text-error, $text-warning, ...), each colour made lighter or
darker (as $foreground is) until it reads at MIN_CONTRAST on every background the explorer draws
words on, and made again at each change of theme.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from rich.color import Color as RichColor
from rich.color import ColorSystem
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from textual.color import Color
from textual.constants import DIM_FACTOR
from textual.filter import LineFilter
from textual.theme import Theme

MIN_CONTRAST = 4.5  # WCAG's for text (bold or large text needs 3:1; every word gets 4.5 here)

# ANSI's eight colours (black, red, green, yellow, blue, magenta, cyan, white) as the theme's
# variables: the `text-` ones are the theme's colours made to be read as text.
ANSI_VARIABLES = ("foreground-darken-3", "text-error", "text-success", "text-warning", "text-primary",
                  "text-secondary", "text-primary", "foreground")
# The backgrounds words are drawn on: the screen, the panes, the status line and footer.
BACKGROUNDS = ("background", "surface", "panel", "footer-background")


def luminance(color: Color) -> float:
    """WCAG's relative luminance."""
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * channel(color.r) + 0.7152 * channel(color.g) + 0.0722 * channel(color.b)


def contrast(a: Color, b: Color) -> float:
    """WCAG's contrast ratio of two colours, 1 to 21."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def in_256(color: Color) -> Color:
    """The nearest of a 256-colour terminal's colours (what rich draws there)."""
    r, g, b = RichColor.from_rgb(*color.rgb).downgrade(ColorSystem.EIGHT_BIT).get_truecolor()
    return Color(r, g, b)


def reads(color: Color, background: Color) -> bool:
    """At MIN_CONTRAST in truecolor and with 256 colours (there a yellow at 4.5:1 fell to 3.4:1)."""
    return (contrast(color, background) >= MIN_CONTRAST
            and contrast(in_256(color), in_256(background)) >= MIN_CONTRAST)


def readable(color: Color, backgrounds: list[Color], towards: Color) -> Color:
    """`color`, made lighter or darker (as `towards`, the theme's foreground, is) just enough to
    read at MIN_CONTRAST on each of `backgrounds`. Lightness only, in Lab: a yellow blended
    towards the light theme's foreground became a black-brown, and red in 256 colours."""
    lighter = luminance(towards) > luminance(color)
    for step in range(51):
        changed = color.lighten(step / 50) if lighter else color.darken(step / 50)
        if all(reads(changed, back) for back in backgrounds):
            return changed
    return towards


def theme_variables(theme: Theme) -> dict[str, str]:
    return theme.to_color_system().generate()


def terminal_theme(theme: Theme) -> TerminalTheme:
    """The ANSI colours of tlview's styles, from `theme`'s variables, readable on its backgrounds."""
    variables = theme_variables(theme)
    background = Color.parse(variables["background"])
    foreground = Color.parse(variables["foreground"])
    backs = [background.blend(Color.parse(variables[name]), 1.0) for name in BACKGROUNDS]
    colours = [readable(background + Color.parse(variables[name]), backs, foreground).rgb
               for name in ANSI_VARIABLES]
    # the bright eight are the same (a bright red on the light theme read at 3:1)
    return TerminalTheme(background.rgb, foreground.rgb, colours, colours)


@lru_cache(4096)
def readable_dim(color: tuple[int, int, int], background: tuple[int, int, int]) -> RichColor:
    """Textual's dim (the colour 2/3 of the way from its background), brought back towards the
    colour until it reads."""
    fore, back = Color(*color), Color(*background)
    dimmed = back.blend(fore, DIM_FACTOR)
    return RichColor.from_rgb(*readable(dimmed, [back], fore).rgb)


class ReadableDim(LineFilter):
    """Dim text that reads: Textual blends a dim colour towards its background whatever it was,
    and a dim yellow badge read at 2.5:1 on the light theme. Put before Textual's ANSIToTruecolor
    (which would dim it again), with the app's terminal theme for the ANSI colours."""

    def __init__(self, ansi_theme: Callable[[], TerminalTheme]) -> None:
        super().__init__()
        self._ansi_theme = ansi_theme

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        theme = self._ansi_theme()
        return [Segment(text, self._undimmed(style, background, theme)) if style is not None and style.dim
                and style.color is not None else Segment(text, style, control)
                for text, style, control in segments]

    @staticmethod
    def _undimmed(style: Style, background: Color, theme: TerminalTheme) -> Style:
        assert style.color is not None
        fore = style.color.get_truecolor(theme)
        back = background.rgb if style.bgcolor is None else style.bgcolor.get_truecolor(theme, foreground=False)
        return style + Style(color=readable_dim(tuple(fore), tuple(back)), dim=False)
