"""NO_COLOR: grays that stay readable. Textual's Monochrome filter turns each colour into the gray
of its luminance: the red of a failure became gray 237 on a 234 background (1.3:1), and the
failures vanished. Here a foreground too close to its background is lifted (or lowered) to the
nearest gray that reads at MIN_CONTRAST; bold, underline and reverse stay, and bold text is drawn
at the most contrast, so a failure stands out by its weight. Textual has no such filter: hence
this one."""

from __future__ import annotations

from functools import lru_cache

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter

from tlview.ui.theme_colours import MIN_CONTRAST
from tlview.ui.theme_colours import contrast as theme_contrast
from tlview.ui.theme_colours import luminance as theme_luminance


def luminance(gray: int) -> float:
    return theme_luminance(Color(gray, gray, gray))


def contrast(a: int, b: int) -> float:
    return theme_contrast(Color(a, a, a), Color(b, b, b))


def gray_of(color: RichColor | None, default: int) -> int:
    if color is None:
        return default
    return Color.from_rich_color(color).monochrome.r


def readable_gray(foreground: int, background: int) -> int:
    """The gray nearest `foreground` that reads on `background` at MIN_CONTRAST."""
    if contrast(foreground, background) >= MIN_CONTRAST:
        return foreground
    step = 1 if luminance(background) < 0.18 else -1  # away from the background
    gray = foreground
    while 0 <= gray + step <= 255 and contrast(gray, background) < MIN_CONTRAST:
        gray += step
    return gray


@lru_cache(4096)
def readable_style(style: Style, background: int) -> Style:
    back = gray_of(style.bgcolor, background)
    fore = readable_gray(gray_of(style.color, 255 - background), back)
    if style.bold:  # without colour, weight says it: a failure drawn as far from its background as can be
        fore = 255 if luminance(back) < 0.18 else 0
    gray = lambda value: RichColor.from_rgb(value, value, value)
    return style + Style.from_color(gray(fore), gray(back) if style.bgcolor is not None else None)


class ReadableMonochrome(LineFilter):
    """Textual's Monochrome, with every foreground readable on its background."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        back = background.monochrome.r
        return [Segment(text, readable_style(style, back) if style else style, None)
                for text, style, _ in segments]


def readable_no_color(filters: list) -> None:
    """Put ReadableMonochrome where Textual put its Monochrome (NO_COLOR set, colours not native)."""
    from textual.filter import Monochrome

    filters[:] = [ReadableMonochrome() if type(f) is Monochrome else f for f in filters]
