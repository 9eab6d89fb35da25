"""Every word on the explorer's screen reads: WCAG's contrast of each cell's colour on its
background, as the terminal gets them (after Textual's filters: the theme's ANSI colours, dim,
NO_COLOR's grays), at least 4.5:1 (3:1 bold), in Textual's dark and light themes, in truecolor,
with 256 colours, with sixteen (TERM=screen, in xterm's palette), and under NO_COLOR.

`python tests/test_contrast.py` prints the figures: the least contrast per kind of text (the
widget it is in, bold or not) per theme."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.color import Color as RichColor
from rich.color import ColorSystem
from textual.color import Color

sys.path.insert(0, str(Path(__file__).parent))
from conftest import CORPUS, GENERATED, press, ready

from tlview.ui.app import TlviewApp
from tlview.ui.sixteen_colours import XTERM_16, number_of
from tlview.ui.theme_colours import contrast

THEMES = ("textual-dark", "textual-light")
# The first screen (the tree's cursor row); each run on its worst problem: a failure's Summary, a
# graph break's pane, a recompile's pane.
SCENES = {"first_screen": (GENERATED / "failures" / "trace", ()),
          "failures": (GENERATED / "failures" / "trace", ("x",)),
          "graph_breaks": (CORPUS / "graph_breaks" / "trace", ("b", "5")),
          "recompiles": (CORPUS / "recompiles" / "trace", ("r",))}
NORMAL, BOLD = 4.5, 3.0  # WCAG: text, and bold (large) text


def _rgb(color: RichColor | None, colours: str) -> Color | None:
    if color is None or color.triplet is None:
        return None
    if colours == "256":  # what a 256-colour terminal draws: the nearest of its colours
        color = color.downgrade(ColorSystem.EIGHT_BIT)
    if colours == "16":  # the number rich picks of sixteen, as xterm draws it
        number = color.downgrade(ColorSystem.STANDARD).number
        assert number is not None
        return XTERM_16[number]
    r, g, b = color.get_truecolor()
    return Color(r, g, b)


def cells(app, colours: str) -> Iterator[tuple[str, str, float]]:
    """(the kind of text, its words, their contrast) for each run of drawn characters."""
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        x = 0
        for segment in strip:
            text, style = segment.text, segment.style
            start, x = x, x + segment.cell_length
            if not text.strip() or style is None:
                continue
            fore, back = _rgb(style.color, colours), _rgb(style.bgcolor, colours)
            if style.reverse:
                fore, back = back, fore
            if fore is None or back is None:
                continue
            if not any(ch.isalnum() for ch in text):  # guides, borders, bars: not words
                continue
            widget, _ = app.screen.get_widget_at(start, y)
            kind = f"{type(widget).__name__}{' bold' if style.bold else ''}"
            yield kind, text.strip(), contrast(fore, back)


async def measure(trace: Path, keys: tuple[str, ...], theme: str, colours: str,
                  size=(120, 40)) -> dict[str, tuple[float, str]]:
    """The least contrast of each kind of text on the run's screen after `keys`, and its words."""
    app = TlviewApp(str(trace))
    least: dict[str, tuple[float, str]] = {}
    async with app.run_test(size=size) as pilot:
        app.theme = theme
        await ready(app, pilot)
        await press(pilot, *keys)
        app.clear_notifications()
        await pilot.pause()
        for kind, words, ratio in cells(app, colours):
            if kind not in least or ratio < least[kind][0]:
                least[kind] = (ratio, words)
    return least


def too_faint(least: dict[str, tuple[float, str]]) -> list[str]:
    return [f"{kind}: {words!r} at {ratio:.2f}:1" for kind, (ratio, words) in least.items()
            if ratio < (BOLD if kind.endswith(" bold") else NORMAL) - 0.005]


COLOURS = ("truecolor", "256", "16", "no_color")


@pytest.mark.parametrize("colours", COLOURS)
@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("scene", list(SCENES))
def test_every_word_reads(monkeypatch, scene, theme, colours):
    if colours == "no_color":
        monkeypatch.setenv("NO_COLOR", "1")
    if colours == "16":  # the app as under TERM=screen
        monkeypatch.setattr("tlview.ui.logs_app.draws_sixteen", lambda app: True)
    trace, keys = SCENES[scene]
    least = asyncio.run(measure(trace, keys, theme, colours))
    assert least, "nothing measured"
    assert not too_faint(least), too_faint(least)


def test_failures_stand_out_without_colour(monkeypatch):
    """NO_COLOR: weight says what colour did: the failures are drawn bolder and further from their
    background than the status line's other words (they had become the faintest words, at 4.12:1)."""
    monkeypatch.setenv("NO_COLOR", "1")

    async def failure_and_body():
        app = TlviewApp(str(GENERATED / "failures" / "trace"))
        async with app.run_test(size=(120, 40)) as pilot:
            await ready(app, pilot)
            await press(pilot, "x")  # the first failure's Summary: its cause
            measured = list(cells(app, "no_color"))
        failures = [ratio for kind, words, ratio in measured if kind == "Static bold" and "failure" in words]
        body = [ratio for kind, words, ratio in measured if kind == "Static"]  # the status line's others
        causes = [kind for kind, words, _ in measured if "backend_compiler_failed" in words]
        return failures, body, causes

    failures, body, causes = asyncio.run(failure_and_body())
    assert failures, "the status line says no failures"
    assert min(failures) > max(body)
    assert causes and all(kind.endswith(" bold") for kind in causes), causes


@pytest.mark.parametrize("theme", THEMES)
def test_in_sixteen_colours_a_failure_is_red_and_bold_and_a_break_has_its_symbol(monkeypatch, theme):
    """TERM=screen: breaks were bright red and failures magenta (the theme's colours drawn as the
    nearest of sixteen). A failure is red (1 or 9) and bold; a break is not red, and says it by
    its symbols (◐ ✂) where its yellow could not read (the light theme's white)."""
    monkeypatch.setattr("tlview.ui.logs_app.draws_sixteen", lambda app: True)

    async def tree_words():
        app = TlviewApp(str(GENERATED / "failures" / "trace"))
        async with app.run_test(size=(120, 40)) as pilot:
            app.theme = theme
            await ready(app, pilot)
            app.clear_notifications()
            await pilot.pause()
            cursor = app.tree.cursor_line  # (drawn in the theme's primary: its own colours)
            # the tree's lines only (their meta has a line): the headline and the Summary say ✗ too,
            # the headline once the worst problem is known (a frame sooner or later than the panes)
            return [(segment.text, segment.style) for strip in app.screen._compositor.render_strips()
                    for segment in strip if segment.style is not None and segment.style.color is not None
                    and ("✗" in segment.text or "◐" in segment.text)
                    and segment.style.meta.get("line") not in (None, cursor)]

    words = asyncio.run(tree_words())
    failures = [style for text, style in words if "✗" in text]
    breaks = [(text, style) for text, style in words if "◐" in text]
    assert failures and breaks, words
    assert all(style.bold and number_of(style.color) in (1, 9) for style in failures), failures
    assert all(number_of(style.color) not in (1, 9) and not style.bold for _, style in breaks), breaks
    assert all("✂" in text for text, _ in breaks if "break" in text)


def main() -> None:
    import os

    from tlview.ui import logs_app
    for colours in COLOURS:
        for theme in THEMES:
            if colours == "no_color":
                os.environ["NO_COLOR"] = "1"
            else:
                os.environ.pop("NO_COLOR", None)
            logs_app.draws_sixteen = lambda app, sixteen=(colours == "16"): sixteen  # type: ignore[assignment]
            least: dict[str, tuple[float, str]] = {}
            for trace, keys in SCENES.values():
                for kind, (ratio, words) in asyncio.run(measure(trace, keys, theme, colours)).items():
                    if kind not in least or ratio < least[kind][0]:
                        least[kind] = (ratio, words)
            print(f"{theme} {colours}:")
            for kind, (ratio, words) in sorted(least.items()):
                print(f"  {kind:28} {ratio:5.2f}:1  {words[:40]!r}")


if __name__ == "__main__":
    main()
