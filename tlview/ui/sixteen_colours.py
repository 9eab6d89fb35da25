"""Sixteen colours (TERM=screen: a console whose colour system is `standard`). Rich draws each
colour as the nearest of sixteen numbers and the terminal draws the number in its own palette:
the theme's warning yellow became bright red, its error red a magenta, and the panel's gray
(xterm's 127) left white words at 4:1. Here each word's number is measured in xterm's palette
on its background's, and one that reads under MIN_CONTRAST (3:1 bold) becomes the nearest that
reads: the same hue's other brightness, else white or black. Failures, breaks and recompiles
stay apart by weight and symbol where their colours had to go."""

from __future__ import annotations

from functools import lru_cache

from rich.color import STANDARD_PALETTE, ColorSystem
from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from rich.terminal_theme import TerminalTheme
from textual.app import App
from textual.color import Color
from textual.filter import LineFilter

from tlview.ui.theme_colours import MIN_CONTRAST, contrast

BOLD_CONTRAST = 3.0  # WCAG's for bold (large) text
# xterm's sixteen colours: what a 16-colour terminal draws for each number
XTERM_16 = tuple(Color(*rgb) for rgb in (
    (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205), (0, 205, 205),
    (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0), (255, 255, 0), (92, 92, 255),
    (255, 0, 255), (0, 255, 255), (255, 255, 255)))


def draws_sixteen(app: App) -> bool:
    """The terminal draws sixteen colours: rich's `standard` console (TERM=screen, TERM=xterm).
    Not a headless app (tests, snapshots): what it draws is read in truecolor."""
    return app.console.color_system == "standard" and not app.is_headless


def sixteen_theme(background: Color, foreground: Color) -> TerminalTheme:
    """ANSI's names as their own numbers: the theme's red (a dark rose in the light theme) was
    drawn as the nearest of sixteen, a gray; ANSI red is red here, then made to read."""
    colours = [(c.red, c.green, c.blue) for c in (STANDARD_PALETTE[number] for number in range(16))]
    return TerminalTheme(background.rgb, foreground.rgb, colours[:8], colours[8:])


def number_of(color: RichColor) -> int:
    """The number of sixteen that rich draws `color` as."""
    number = color.downgrade(ColorSystem.STANDARD).number
    return 0 if number is None else number


@lru_cache(4096)
def readable_number(fore: int, back: int, bold: bool) -> int:
    """`fore`, or the nearest number that reads on `back` in xterm's palette."""
    need = BOLD_CONTRAST if bold else MIN_CONTRAST
    background = XTERM_16[back]
    hue = fore % 8
    extremes = sorted((15, 0), key=lambda n: -contrast(XTERM_16[n], background))
    for number in (fore, hue + 8 if fore < 8 else hue, *extremes):
        if number != back and contrast(XTERM_16[number], background) >= need:
            return number
    return extremes[0]


@lru_cache(4096)
def readable_style(style: Style, background: RichColor) -> Style:
    if style.color is None:
        return style
    if style.reverse:  # (its colours swapped: the cursor's, drawn as chosen)
        return style
    back = number_of(style.bgcolor if style.bgcolor is not None else background)
    fore = number_of(style.color)
    number = readable_number(fore, back, bool(style.bold))
    return style if number == fore else style + Style(color=RichColor.from_ansi(number))


class ReadableIn16(LineFilter):
    """Every word's colour readable on its background once drawn in sixteen colours."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        back = background.rich_color
        return [Segment(text, readable_style(style, back) if style is not None else style, control)
                for text, style, control in segments]
