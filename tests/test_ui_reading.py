"""Reading as in less and lnav (#15): search in a pane (`/`, `n`, `N`, the count), wrap, maximize,
80x24, the jumps that say where they are, Enter from a recompile, the filter bar's words."""

from __future__ import annotations

import re
from contextlib import asynccontextmanager

from conftest import (
    CORPUS,
    SIZE,
    plain,
    press,
    ready,
    type_in,
    until,
    visible_lines,
)

from tlview.domain.verdict import Kind
from tlview.ui.app import TlviewApp
from tlview.ui.help_screen import HelpScreen
from tlview.ui.key_hints import KeyHints
from tlview.ui.payload_view import PayloadView
from tlview.ui.search import SearchBar, display_line
from tlview.ui.tabs import numbered_tabs
from tlview.views.filters import Filter


async def _graph_view(app, pilot) -> PayloadView:
    await ready(app, pilot)
    await press(pilot, "2")
    view = app.query_one("#graph-view", PayloadView)
    await until(pilot, lambda: view.line_count > 1, what="a graph")
    return view


def _occurrences(view: PayloadView, query: str) -> list[tuple[int, int]]:
    """(line, column) of every occurrence, found here independently of the app's search."""
    found = []
    for number, line in enumerate(view.text.split("\n")):
        shown = display_line(line).lower()
        start = shown.find(query)
        while start >= 0:
            found.append((number, start))
            start = shown.find(query, start + 1)
    return found


def _keys_on_the_footer(app) -> KeyHints:
    """The footer with its keys: what the app said there for a while (a run's first notice, such
    as the source lines not read here) is over."""
    hints = app.query_one(KeyHints)
    hints.unsay()
    return hints


def _footer_says(app, key: str) -> str:
    """What the footer says a key does, as drawn (one line: `/ Filter`)."""
    hints = _keys_on_the_footer(app)
    display, description = next((d, words) for k, d, words in hints.shown if k == key)
    drawn = "".join(segment.text for segment in hints.render_line(0))
    assert f"{display} {description}" in drawn
    return description


async def test_search_in_a_graph_counts_highlights_and_moves_with_n():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        view = await _graph_view(app, pilot)
        expected = _occurrences(view, "view")
        assert len(expected) > 3
        assert _footer_says(app, "slash") == "Filter"
        await press(pilot, "enter")  # from the tree into the pane's main view
        assert app.focused is view
        assert _footer_says(app, "slash") == "Search"  # the footer says which `/` this is
        await press(pilot, "slash")
        bar = app.query_one(SearchBar)
        assert bar.display and app.focused is bar and not app.filter_bar.display  # not the tree filter
        await type_in(pilot, "view")
        assert view.search.total == len(expected)
        assert f"match 1 of {len(expected)}" in view.border_subtitle
        await press(pilot, "enter")  # keeps the matches; the keys go back to the view
        assert not bar.display and app.focused is view
        for number in range(2, 5):
            await press(pilot, "n")
            assert f"match {number} of {len(expected)}" in view.border_subtitle
            line, _ = expected[number - 1]
            top = view.scroll_offset.y
            assert top <= line < top + view.size.height  # scrolled to it
        await press(pilot, "N")
        assert f"match 3 of {len(expected)}" in view.border_subtitle
        # the current match is drawn in its own style, the others in the match style
        line, _column = expected[2]
        strip = view.render_line(line - view.scroll_offset.y)
        current = view.get_component_rich_style("search--match-current")
        drawn = "".join(s.text for s in strip if s.style and s.style.bgcolor == current.bgcolor)
        assert drawn.lower() == "view"
        await press(pilot, "escape")  # in the view, Esc ends the search
        assert view.search is None and "match" not in view.border_subtitle
        await press(pilot, "slash")
        await type_in(pilot, "view")
        await press(pilot, "escape")  # and in the bar, too
        assert view.search is None and app.focused is view


async def test_a_character_typed_and_its_matches_come_in_one_frame_with_no_new_layout():
    """What a search key costs (#23, typing <= 30 ms): the query's matches are found as the value
    changes, not on the message it posts (that came a frame later), and a character typed does not
    lay out the whole screen (Input's virtual size did, once per key)."""
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        view = await _graph_view(app, pilot)
        await press(pilot, "enter", "slash", "enter")  # nothing typed: no search border stays
        assert view.search is None and not view.has_class("-searching")
        await press(pilot, "slash")  # the view's search border comes with the bar
        assert view.has_class("-searching")
        screen = app.screen
        # (the bar's own layout is done first: beside a CPU hog its frame came after the counting began)
        await until(pilot, lambda: not screen._layout_required
                    and not any(w._layout_required for w in screen.walk_children()), what="the bar laid out")
        layouts = []
        real_layout = screen._refresh_layout
        screen._refresh_layout = lambda *a, **k: (layouts.append(1), real_layout(*a, **k))[1]
        await type_in(pilot, "v")
        bar = app.query_one(SearchBar)
        bar.insert_text_at_cursor("i")  # as a key does, with no message handled after it
        assert view.search.query == "vi" and "/vi: match 1 of" in view.border_subtitle
        await type_in(pilot, "ew")
        assert view.search.query == "view" and not layouts, f"{len(layouts)} layouts for 4 characters"


async def test_a_text_comes_with_its_scrollbars_in_the_same_frame():
    """First open of a pane (#23, settled <= 150 ms): a text longer and wider than its view shows
    its scrollbars as it is set, not after the next layout (the text was drawn at full width,
    then a frame later one column narrower); the scrollbars exist before they are first needed."""
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        view = await _graph_view(app, pilot)
        assert view._vertical_scrollbar is not None and view._horizontal_scrollbar is not None
        view.set_lines(["short"], None)
        await pilot.pause()
        assert not view.show_vertical_scrollbar and not view.show_horizontal_scrollbar
        view.set_lines([f"{n} " + "x" * 500 for n in range(500)], None)  # no pause: the same frame
        assert view.show_vertical_scrollbar and view.show_horizontal_scrollbar
        assert view.vertical_scrollbar.window_virtual_size == 500


async def test_search_wraps_and_says_so_and_a_query_with_no_match_says_that():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        view = await _graph_view(app, pilot)
        await press(pilot, "enter", "slash")
        await type_in(pilot, "GraphModule")  # a capital: case-sensitive
        await press(pilot, "enter")
        total = len([1 for line in view.text.split("\n") for _ in range(line.count("GraphModule"))])
        assert view.search.total == total >= 1
        for _ in range(total):
            await press(pilot, "n")
        assert "match 1 of" in view.border_subtitle  # past the last: back to the first
        await press(pilot, "slash", "ctrl+u")
        await type_in(pilot, "no-such-text-here")
        await press(pilot, "enter")
        assert view.search.total == 0 and "no match" in view.border_subtitle


async def test_slash_in_the_tree_still_filters():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        assert app.focused is app.tree
        await press(pilot, "slash")
        assert app.filter_bar.display and not app.query_one(SearchBar).display


async def test_search_in_the_guards_pane():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "3", "enter")
        view = app.query_one("#guards-pane PayloadView", PayloadView)
        assert app.focused is view
        await press(pilot, "slash")
        await type_in(pilot, "tensor_match")
        await press(pilot, "enter")
        expected = _occurrences(view, "tensor_match")
        assert expected and view.search.total == len(expected)


async def test_wrap_shows_every_character_of_a_long_line_within_the_width():
    """Wrapped between words (by cells it split `specialize_float=Fal` / `se`), nothing lost."""
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=(100, 40)) as pilot:
        view = await _graph_view(app, pilot)
        lines = view.text.split("\n")
        longest = max(range(len(lines)), key=lambda i: len(lines[i]))
        assert len(lines[longest]) > view.size.width * 2
        rows_before = view.virtual_size.height
        await press(pilot, "enter", "w")
        assert view.wrap and view.virtual_size.height > rows_before
        view.scroll_to(0, view.row_of(longest), animate=False)
        await pilot.pause()
        shown = display_line(lines[longest])
        taken = view.row_of(longest + 1) - view.row_of(longest)
        assert taken > 1
        rows = [view.render_line(y).text for y in range(min(taken, view.size.height))]
        gutter = len(str(len(lines))) + 2
        width = view._wrap_width
        bodies = [row[gutter:] for row in rows]
        # every character, in order (the rows on screen are the line's start)
        assert "".join(shown.split()).startswith("".join("".join(bodies).split()))
        assert len("".join(bodies).split()) > 3
        for body in bodies[:-1]:
            assert len(body.rstrip()) <= width
        starts = view._row_starts[longest]  # where each row of the line starts
        assert len(starts) == taken
        for start in starts[1:]:  # a row ends between words, or in a word longer than a row
            if shown[start - 1] != " ":
                word = shown[:start].split(" ")[-1] + shown[start:].split(" ")[0]
                assert len(word) > width, (shown[start - 20:start], shown[start:start + 20])
        assert all(len(view.render_line(y).text) <= view.size.width for y in range(view.size.height))
        await press(pilot, "w")
        assert not view.wrap and view.virtual_size.height == rows_before


async def test_maximize_fills_the_screen_and_escape_restores():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        view = await _graph_view(app, pilot)
        width = view.size.width
        await press(pilot, "m")  # from the tree: the panes are maximized, the focus goes in
        assert app.screen.maximized is not None and app.focused is view
        assert view.size.width > width and app.screen.maximized.size.width == SIZE[0]
        await press(pilot, "3")  # the tabs still switch
        assert app.detail.active == "guards"
        await press(pilot, "escape")
        assert app.screen.maximized is None


async def test_80x24_keeps_40_columns_of_code_every_tab_and_the_footer():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=(80, 24)) as pilot:
        view = await _graph_view(app, pilot)
        code_columns = view.size.width - (len(str(view.line_count)) + 2)
        assert code_columns >= 40
        select = app.query_one("#graph-select")
        assert select.display  # the list is a selector above the code
        pane = app.query_one("#graphs-pane")
        picks = [value for _, value in select._options if isinstance(value, int)]
        assert picks == list(range(len(pane._artifacts))) and len(picks) > 2  # every artifact in it
        select.value = 2  # picking one shows it
        third = pane._artifacts[2].label
        await until(pilot, lambda: third in str(app.query_one("#graph-info").render()), what="the third")
        select.value = 0
        await until(pilot, lambda: view.line_count > 1 and "Dynamo" in str(app.query_one("#graph-info").render()))
        # (its lines are drawn a refresh later: beside a CPU hog, none yet when the count was there)
        await until(pilot, lambda: visible_lines(view), what="the code drawn")
        rows = visible_lines(view)
        assert max(len(r) for r in rows) >= 40
        for number, (tab_id, *_) in numbered_tabs():
            await press(pilot, number)
            assert app.detail.active == tab_id
            tab = app.query_one("#tabs").get_tab(tab_id)
            assert tab.region.right <= 80 and tab.region.width > 0  # drawn on screen
        footer = _keys_on_the_footer(app)
        drawn = "".join(segment.text for segment in footer.render_line(0))
        assert footer.region.right <= 80 and "? Help" in drawn  # drawn on screen


async def test_help_fits_40_rows_without_scrolling():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=(150, 40)) as pilot:
        await ready(app, pilot)
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        scroll = app.screen.query_one("VerticalScroll")
        assert scroll.max_scroll_y == 0
        text = plain(app.screen.query_one("Static"))
        for words in ("search in this pane", "wrap long lines", "maximize", "next / previous match"):
            assert words in text


async def test_enter_on_a_recompile_goes_to_the_compile_whose_guard_failed():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "r")
        assert app.tree.entry.title == "[0/1]"
        await press(pilot, "enter")
        await until(pilot, lambda: app.tree.entry.title == "[0/0]", what="the jump to [0/0]")
        assert app.focused is app.tree


async def test_jumps_stop_at_the_last_before_wrapping_and_one_recompile_says_so():
    app = TlviewApp(str(CORPUS / "model"))  # one recompile
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "r")
        assert app.tree.entry.title == "[0/1]"
        await press(pilot, "r")
        assert app.tree.entry.title == "[0/1]"
        assert any("the only recompile" in n.message for n in app.said)
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        stops = [e.title for e in app.model.compile_entries() if e.shows(Kind.RECOMPILE)]
        for title in stops:
            await press(pilot, "r")
            assert app.tree.entry.title == title
        assert any(f"recompile {len(stops)} of {len(stops)}" in n.message for n in app.said)
        await press(pilot, "r")  # at the last: says so and stays
        assert app.tree.entry.title == stops[-1]
        assert any("that was the last recompile" in n.message for n in app.said)
        await press(pilot, "r")  # again: wraps
        assert app.tree.entry.title == stops[0]


async def test_a_compile_that_restarted_shows_the_graphs_of_its_final_attempt():
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "2")
        entry = app.tree.entry
        assert entry.kind == "compile" and len(entry.compile.attempts) > 1
        assert not any(a.kind.role.in_graphs_pane for a in entry.node.artifacts)  # [0/0] restarted
        view = app.query_one("#graph-view", PayloadView)
        await until(pilot, lambda: view.line_count > 1, what="the final attempt's graph")
        info = str(app.query_one("#graph-info").render())
        assert f"[{entry.compile.attempts[-1].id}]" in info


async def test_filter_bar_closes_on_enter_and_a_rank_on_a_run_without_ranks_says_so():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"), Filter())
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "slash")
        await type_in(pilot, "recompiles")
        await press(pilot, "enter")
        assert not app.filter_bar.display and app.flt.active and app.focused is app.tree
        await press(pilot, "escape")
        assert not app.flt.active
        await press(pilot, "slash")
        await type_in(pilot, "rank:1")
        # (the tree is shown again once the keys' moment is over: app.keys_first)
        await until(pilot, lambda: "no ranks" in str(app.query_one("#tree-note").render()),
                    what="the note that the run has no ranks")


async def test_the_footer_says_the_keys_of_the_focus_and_a_click_presses_one():
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        hints = _keys_on_the_footer(app)
        drawn = "".join(segment.text for segment in hints.render_line(0))
        assert drawn.startswith(" q Quit  ? Help  / Filter") and drawn.rstrip().endswith("▏ ^p palette")
        await pilot.click(KeyHints, offset=(drawn.index("? Help") + 2, 0))
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help, clicked")


async def test_a_graph_s_first_lines_come_highlighted(monkeypatch):
    """The thread that loads a payload highlights its first lines: the pane's first frame is its
    last (the lexer's own thread came 50-90 ms after it). With that thread kept from delivering,
    the first lines are still highlighted."""
    monkeypatch.setattr(PayloadView, "_highlight", lambda self, *args: None)
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        view = await _graph_view(app, pilot)
        await pilot.pause()
        colours = {seg.style.color for y in range(min(10, view.size.height))
                   for seg in view.render_line(y) if seg.style is not None and seg.style.color is not None}
        assert len(colours) > 2, colours  # keywords, names and strings in their colours, not one


async def test_slash_keeps_the_lines_highlighted(monkeypatch):
    """`/` restyles the view (a class, then the focus leaves it): its drawn lines go, its
    highlighted ones stay (their colours are the lexer theme's, not CSS's). The view was
    highlighted anew, and the search's first character waited for the lexer's threads."""
    from tlview.ui import payload_view

    runs = []
    lexer = payload_view.highlighted_lines
    monkeypatch.setattr(payload_view, "highlighted_lines", lambda *a: runs.append(1) or lexer(*a))
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        view = await _graph_view(app, pilot)
        await until(pilot, lambda: runs and not view._pending, what="the screen highlighted")
        before = len(runs)
        await press(pilot, "enter")  # into the view: `/` searches it
        await press(pilot, "slash")
        assert app.focused is app.query_one(SearchBar)
        await type_in(pilot, "x")
        await pilot.pause()
        assert len(runs) == before and not view._pending
        colours = {seg.style.color for y in range(min(10, view.size.height))
                   for seg in view.render_line(y) if seg.style is not None and seg.style.color is not None}
        assert len(colours) > 2, colours


async def test_a_match_in_view_keeps_the_page_where_it_is():
    """As in less: typing a query whose match is on the page leaves the page where it is (it
    jumped a third down at every character, and drew every line and the scrollbar again); a
    match off the page brings it a third down."""
    app = TlviewApp(str(CORPUS / "model"))
    # 5 rows more than SIZE: [0/0]'s first new word below the signature is on row 34 of its graph
    async with app.run_test(size=(SIZE[0], SIZE[1] + 5)) as pilot:
        view = await _graph_view(app, pilot)
        await press(pilot, "enter")
        await press(pilot, "slash")
        height = view.scrollable_content_region.height  # the page as the search bar leaves it
        lines = [display_line(line).lower() for line in view.text.split("\n")]

        def first_seen_in(rows: range) -> str:  # a word whose first occurrence is in these rows
            return next(word for row in rows for word in re.findall(r"[a-z_0-9]{3,}", lines[row])
                        if not any(word in line for line in lines[:row]))

        # below a third of the page: a search that scrolled to every match would move it
        on_page = first_seen_in(range(height // 3 + 1, height))
        off_page = first_seen_in(range(2 * height, len(lines)))
        await type_in(pilot, on_page)
        assert view.search.total and view.scroll_offset.y == 0
        await press(pilot, "escape")
        await press(pilot, "slash")
        await type_in(pilot, off_page)
        line, _ = view.search.position()
        assert line >= 2 * height and view.scroll_offset.y == line - view.size.height // 3


async def test_a_digit_from_inside_a_pane_shows_that_pane_and_reading_goes_on_there():
    """At 80x24, reading the output code (`o`), `9` stayed on Graphs: the hidden code view gave
    its focus to the pane's list (a Select at 80 columns) and TabbedContent showed its pane
    again. A digit shows its pane, and the keys go on to that pane's view."""
    from tlview.ui.rendered_view import RenderedView

    app = TlviewApp(str(CORPUS / "graph_breaks"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await press(pilot, "o")
        assert app.detail.active == "graphs" and isinstance(app.focused, PayloadView)
        await press(pilot, "9")
        assert app.detail.active == "run" and isinstance(app.focused, RenderedView)
        assert app.focused in app.detail.pane("run").walk_children()
        await press(pilot, "3")
        assert app.detail.active == "guards" and app.focused in app.detail.pane("guards").walk_children()
        app.tree.focus()
        await press(pilot, "9")  # from the tree: the tree keeps the keys
        assert app.detail.active == "run" and app.focused is app.tree


@asynccontextmanager
async def _palette_open(size: tuple[int, int]):
    """The explorer on graph_breaks, read, its palette open (Ctrl+P): (app, pilot, palette)."""
    from tlview.ui.commands import Palette

    app = TlviewApp(str(CORPUS / "graph_breaks"))
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, Palette), what="the palette")
        yield app, pilot, app.screen


async def test_a_page_key_while_the_palette_replaces_its_options_moves_nothing():
    """Ctrl+P, a query typed, PageDown: the palette had replaced its options (each character of
    a query does) and not laid them out yet, and Textual's list paged by lines it did not have:
    KeyError, and tlview ended (random keys in tmux, three times in eight runs)."""
    from textual.command import CommandList

    async with _palette_open((80, 24)) as (app, pilot, palette):
        commands = palette.query_one(CommandList)
        commands.styles.max_height = 0  # not laid out yet: no room, no lines (OptionList._update_lines)
        await pilot.pause()
        commands.clear_options()  # as a character typed does
        commands.add_options(["Show: Run", "Show: Log"])
        commands.highlighted = 0
        for key in ("page_down", "page_up"):
            await palette.run_action(f"command_list('{key}')")
        await press(pilot, "pagedown", "escape")
        assert app.is_running and app.screen is not palette


async def test_the_palette_chosen_twice_in_a_moment_closes_once():
    """Enter on the palette's command came again after the palette was closed (a queued Enter):
    Textual dismissed it a second time, popping the screen under it (ScreenStackError at the last
    one, and tlview ended; random keys in tmux). It closes once; the screen under it stays."""
    from textual.command import DiscoveryHit

    from tlview.ui.help_screen import HelpScreen

    async with _palette_open((120, 40)) as (app, pilot, palette):
        ran = []
        palette._selected_command = DiscoveryHit("Keys", lambda: ran.append(1))
        palette._list_visible = False  # (a command chosen: Enter runs it)
        palette._select_or_command()  # the first Enter: closed, its command run
        await until(pilot, lambda: ran and app.screen is not palette, what="the command")
        await press(pilot, "question_mark")
        assert isinstance(app.screen, HelpScreen)
        palette._select_or_command()  # the second, queued: nothing more is closed
        await pilot.pause()
        assert app.is_running and isinstance(app.screen, HelpScreen)


async def test_the_palette_s_theme_and_command_searches_are_tlview_s_palette():
    """The palette's "Theme" command opened Textual's own palette, races and all (chosen twice
    in a moment it ended tlview: bench/random_keys.py). Both apps' searches open tlview's."""
    from tlview.ui.commands import Palette

    async with _palette_open((120, 40)) as (app, pilot, _palette):
        await press(pilot, "escape")
        for search in (app.search_themes, lambda: app.search_commands([("Keys", app.action_help)])):
            search()
            await until(pilot, lambda: isinstance(app.screen, Palette), what="the search")
            await app.workers.wait_for_complete()  # (its commands gathered: closing meanwhile is Textual's race)
            await press(pilot, "escape")
            assert not isinstance(app.screen, Palette)


async def test_escape_on_a_filter_keeps_the_compile_id():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "slash")
        await type_in(pilot, "errors")
        await press(pilot, "enter")
        await until(pilot, lambda: app.tree.entry is not None and app.tree.entry.node.id == "3/4")
        await pilot.press("escape")
        await until(pilot, lambda: len(app.model.compile_entries()) == 12)
        await pilot.pause()
        assert app.tree.entry.node.id == "3/4"
        assert "3/4" in plain(app.query_one("#summary-body"))


async def test_end_in_the_search_bar_moves_the_cursor_and_esc_ends_the_search():
    """End (and Ctrl+E) in the search bar is the Input's: the cursor to the end of the query, the
    search goes on. The bar's own Esc action had Input's name for End, so End ended the search."""
    app = TlviewApp(str(CORPUS / "model"))
    async with app.run_test(size=SIZE) as pilot:
        view = await _graph_view(app, pilot)
        await press(pilot, "enter", "slash")
        bar = app.query_one(SearchBar)
        await type_in(pilot, "view")
        await press(pilot, "home")
        assert bar.cursor_position == 0
        await press(pilot, "end")
        assert bar.display and app.focused is bar and bar.cursor_position == len("view")
        await press(pilot, "home", "ctrl+e")
        assert bar.display and bar.cursor_position == len("view")
        assert view.search is not None and view.search.query == "view"
        await press(pilot, "escape")
        assert not bar.display and app.focused is view and view.search is None
