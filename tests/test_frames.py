"""What a key costs in frames (issue #23, pane switch at Textual's speed): a pane switch is drawn
in one frame, as soon as the screen has it, and draws again only what changed."""

from __future__ import annotations

import traceback

from conftest import CORPUS, ready, until

from tlview.ui.app import TlviewApp
from tlview.ui.frame_tree import FrameTree
from tlview.ui.text_size import SteadyOptionList

TRACE = CORPUS / "recompiles" / "trace"
SMALL = (110, 18)  # a tree longer than the screen: it has a scrollbar


def _count_frames(app) -> list:
    """Each frame the screen draws, appended to the list returned."""
    frames: list = []
    screen = app.screen
    draw = screen._compositor_refresh

    def counted():
        frames.append(screen._compositor._dirty_regions.copy())
        draw()

    screen._compositor_refresh = counted
    return frames


async def _switch(app, pilot, key: str, tab: str) -> None:
    await pilot.press(key)
    await until(pilot, lambda: app.detail.active == tab, what=f"the {tab} pane")
    await app.workers.wait_for_complete()
    for _ in range(3):
        await pilot.pause()


async def test_a_pane_switch_is_one_frame_with_its_tab_underlined():
    """Textual's Tabs moves the underline after the switch's frame, and the graph list, shown
    again, cleared its caches: each was a frame of its own, which a next key waited for."""
    app = TlviewApp(str(TRACE))
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(app, pilot)
        await _switch(app, pilot, "2", "graphs")
        await _switch(app, pilot, "1", "summary")
        frames = _count_frames(app)
        for key, tab in (("2", "graphs"), ("1", "summary"), ("2", "graphs")):
            before = len(frames)
            await _switch(app, pilot, key, tab)
            assert len(frames) - before == 1, f"{key}: {len(frames) - before} frames"
            from textual.widgets import Tabs

            bar = app.detail.query_one(Tabs)
            span = bar.active_tab.virtual_region.shrink(bar.active_tab.styles.gutter).column_span
            underline = bar.query_one("Underline")
            assert (underline.highlight_start, underline.highlight_end) == span


async def test_a_pane_switch_leaves_the_tree_s_scrollbar_alone_and_a_resize_does_not():
    """Every whole-screen layout made Textual's ScrollView update its scrollbars (it compares the
    compositor's virtual size, its region, with its own): the tree's was drawn again at each pane
    switch. A change of size still updates it."""
    app = TlviewApp(str(TRACE))
    async with app.run_test(size=SMALL) as pilot:
        await ready(app, pilot)
        tree = app.query_one(FrameTree)
        assert tree.show_vertical_scrollbar
        updates = []
        scroll_update = tree._scroll_update
        tree._scroll_update = lambda size: (updates.append(size), scroll_update(size))
        for key, tab in (("2", "graphs"), ("1", "summary"), ("3", "guards"), ("1", "summary")):
            await _switch(app, pilot, key, tab)
        assert updates == []
        await pilot.resize_terminal(SMALL[0], SMALL[1] + 6)
        await until(pilot, lambda: bool(updates), what="the scrollbar updated for the new height")
        await pilot.pause()
        assert tree.vertical_scrollbar.window_size == tree.scrollable_content_region.height


async def test_the_graph_list_shown_again_keeps_its_drawn_lines_until_its_size_changes():
    app = TlviewApp(str(TRACE))
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(app, pilot)
        await _switch(app, pilot, "2", "graphs")
        graph_list = app.query_one("#graph-list", SteadyOptionList)
        cleared = []
        clear = graph_list._clear_caches
        graph_list._clear_caches = lambda: (cleared.append(graph_list.size), clear())
        for key, tab in (("1", "summary"), ("2", "graphs"), ("1", "summary"), ("2", "graphs")):
            await _switch(app, pilot, key, tab)
        assert cleared == []
        await pilot.resize_terminal(160, 14)  # (the list is as tall as its options: fewer rows now)
        await until(pilot, lambda: bool(cleared), what="the list drawn again at its new size")


async def test_a_key_s_change_is_drawn_as_soon_as_the_screen_has_it():
    """The frame for a key is drawn once the screen has the change, by the screen (not on the
    next tick of Textual's 60 Hz update timer, which after a long frame skipped a tick). (Pilot
    draws too, when a test pauses: those frames are not counted.)"""
    app = TlviewApp(str(TRACE))
    async with app.run_test(size=(160, 45)) as pilot:
        await ready(app, pilot)
        screen = app.screen
        by_the_screen, draw = [], screen._on_timer_update

        def drawn():
            if not any(frame.name == "pause" for frame in traceback.extract_stack()):
                by_the_screen.append(app.detail.active)
            draw()

        screen._on_timer_update = drawn
        screen._update_timer.resume = lambda: None  # no frame from the timer from now on
        screen._update_timer.pause()
        for key, tab in (("2", "graphs"), ("1", "summary"), ("3", "guards")):
            await _switch(app, pilot, key, tab)
        assert by_the_screen == ["graphs", "summary", "guards"]
