"""What a person sees: SVG snapshots of the main screen, the graph pane and the help screen.

Update after a deliberate change with `pytest tests/test_snapshots.py --snapshot-update` and look
at the pictures in snapshot_report.html before committing them.
"""

from __future__ import annotations

import asyncio

import pytest
from conftest import CORPUS, GENERATED, Deadline, press, ready

from tlview.ui.app import TlviewApp
from tlview.ui.compare_app import CompareApp

pytestmark = pytest.mark.first_screen  # the explorer's first screens, on each run's worst problem (conftest.py)

COMPARE = GENERATED / "compare"

SIZE = (140, 40)


def _layout(app):
    """What moves while the layout settles: the tree's width (as wide as its labels) and the tab
    labels (they shorten to fit the pane's width)."""
    tabs = app.query_one("#tabs")
    return (app.tree.size, app.tree.virtual_size, app.detail.size, app.tree.cursor_line,
            tuple(str(tab.label) for tab in tabs.query("ContentTab")))


async def _settle(pilot):
    """Ready, and a layout that stayed the same over three frames (each step of the tree's
    auto width and the tabs' labels takes a frame)."""
    await ready(pilot.app, pilot)
    await _stable(pilot)


async def _stable(pilot, timeout: float = 10.0):
    """A layout that keeps moving (a resize loop, a timer) fails here, instead of hanging."""
    loop = asyncio.get_running_loop()
    deadline = Deadline(timeout, loop.time)
    same, last = 0, None
    while same < 3:
        assert not deadline.passed(), f"the layout never settled: {last}"
        await pilot.pause(0.02)
        await pilot.app.workers.wait_for_complete()  # code highlighted in a thread, as it is drawn
        now = _layout(pilot.app)
        same = same + 1 if now == last else 0
        last = now


def test_main_screen(snap_compare):
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    assert snap_compare(app, terminal_size=SIZE, run_before=_settle)


@pytest.mark.parametrize("theme", ["textual-dark", "textual-light"])
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_main_screen_in_theme(snap_compare, size, theme):
    """The main screen in Textual's dark and light themes: every colour the theme's
    (tests/test_contrast.py measures them)."""
    app = TlviewApp(str(GENERATED / "failures" / "trace"))

    async def in_theme(pilot):
        pilot.app.theme = theme
        await _settle(pilot)
        pilot.app.clear_notifications()  # (a notice lasts seconds: not in the picture)
        await _stable(pilot)

    assert snap_compare(app, terminal_size=size, run_before=in_theme)


def test_graph_pane(snap_compare):
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))

    async def open_graphs(pilot):
        await _settle(pilot)
        await press(pilot, "g", "r", "2")  # from the top (it opens on [3/4]) to [0/1], Graphs: its Dynamo graph
        pilot.app.clear_notifications()  # "recompile 1 of 8" lasts 1.5 s: not in the picture
        await _stable(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=open_graphs)


def test_help_screen(snap_compare):
    app = TlviewApp(str(CORPUS / "model" / "trace"))

    async def open_help(pilot):
        await _settle(pilot)
        await press(pilot, "question_mark")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=open_help)


def test_80x24_graph_search(snap_compare):
    """At 80x24: the tree as wide as its labels, the list a selector, numbered tabs, a search."""
    app = TlviewApp(str(CORPUS / "model" / "trace"))

    async def search(pilot):
        await _settle(pilot)
        await press(pilot, "2", "enter", "slash", *"view", "enter", "n")
        pilot.app.clear_notifications()
        await _stable(pilot)

    assert snap_compare(app, terminal_size=(80, 24), run_before=search)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_compile_errors_without_colour(snap_compare, monkeypatch, size):
    """NO_COLOR: the failed compiles and the failure count still stand out (bold, symbols)."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = TlviewApp(str(GENERATED / "failures" / "trace"))

    async def open_error(pilot):
        await _settle(pilot)
        await press(pilot, "x")  # the first failure: its Summary
        pilot.app.clear_notifications()
        await _stable(pilot)

    assert snap_compare(app, terminal_size=size, run_before=open_error)


@pytest.mark.parametrize("size", [(80, 24), (200, 50)], ids=["80x24", "200x50"])
def test_a_maximized_pane(snap_compare, size):
    """`m` from the tree: the panes fill the screen, the status line and the footer stay."""
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))

    async def maximize(pilot):
        await _settle(pilot)
        await press(pilot, "g", "b", "5", "m")  # from the top, the first graph break, its pane, maximized
        pilot.app.clear_notifications()
        await _stable(pilot)

    assert snap_compare(app, terminal_size=size, run_before=maximize)
async def _compared(pilot):
    """Both runs matched, the panes loaded, and a layout that stayed the same over three frames."""
    app = pilot.app
    loop = asyncio.get_running_loop()
    deadline = Deadline(15, loop.time)
    while app.comparison is None or app.tree.cursor_node is None:
        assert not deadline.passed(), "the comparison never came"
        await pilot.pause(0.02)
    await _stable(pilot)


def test_compare_view_80x24(snap_compare):
    """The compare view at 80x24: the totals line wrapped (never cut), short problem labels."""
    app = CompareApp(str(COMPARE / "before" / "trace"), str(COMPARE / "after" / "trace"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=_compared)


def test_compare_view_200x50(snap_compare):
    """The compare view at 200x50, on the new graph break: its compile in the after run."""
    app = CompareApp(str(COMPARE / "before" / "trace"), str(COMPARE / "after" / "trace"))

    async def on_the_new_break(pilot):
        await _compared(pilot)
        await press(pilot, *"jjjjjj")  # gone, its leaves, to the New problem
        await _stable(pilot)

    assert snap_compare(app, terminal_size=(200, 50), run_before=on_the_new_break)
