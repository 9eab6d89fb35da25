"""The explorer, driven with Textual's Pilot on real traces."""

from __future__ import annotations

import hashlib
import json
import threading

import pytest
from conftest import CORPUS, SCENARIOS, SIZE, compile_entries, plain, press, ready, tlview_status, until, visible_lines

from tlview.ui.app import TlviewApp
from tlview.ui.frame_tree import FrameTree
from tlview.ui.payload_view import PayloadView
from tlview.views.filters import Filter


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_tree_ids_and_statuses_match_truth(scenario, truths):
    app = TlviewApp(str(CORPUS / scenario / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        tree = app.query_one(FrameTree)
        entries = compile_entries(app)
        for per_rank in truths[scenario]["per_rank"]:
            rank = per_rank["rank"]
            ids = {e.node.id for e in entries if e.rank == rank}
            assert ids == set(per_rank["compile_ids"])
            for cid, status in per_rank["tlparse_like_status"].items():
                entry = next(e for e in entries if e.rank == rank and e.node.id == cid)
                broke = bool(per_rank["per_compile_id"][cid]["graph_break_reasons"])
                assert entry.status.word == tlview_status(status, broke)
                node = tree.node_for_key(entry.key)
                assert node is not None and f"[{cid}]" in node.label.plain  # it is on screen
        if len(truths[scenario]["per_rank"]) > 1:  # ranks at the top level
            assert [n.label.plain.split()[0:2] for n in tree.root.children] == [["rank", "0"], ["rank", "1"]]


async def test_recompile_reason_and_enter_jumps_to_failed_compile():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        tree = app.query_one(FrameTree)
        await pilot.press("r")  # next recompile: [0/1]
        await until(pilot, lambda: tree.entry.node.id == "0/1")
        await press(pilot, "4")  # Recompiles tab
        pane = app.query_one("#recompiles-pane")
        options = pane.query_one("#recompile-list")
        await until(pilot, lambda: options.option_count == 1)
        assert "n == 2" in options.get_option_at_index(0).prompt.plain
        assert "[0/0]" in options.get_option_at_index(0).prompt.plain
        options.focus()
        options.highlighted = 0
        await pilot.press("enter")
        await until(pilot, lambda: tree.entry.node.id == "0/0")
        assert app.focused is tree


async def test_filter_graph_breaks_leaves_only_compile_ids_with_breaks(truths):
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"), Filter.parse("graph_breaks"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        shown = {e.node.id for e in compile_entries(app) if e.kind == "compile"}
        per_id = truths["graph_breaks"]["per_rank"][0]["per_compile_id"]
        with_breaks = {cid for cid, d in per_id.items() if d["graph_break"] and d["attempt"] == 0}
        assert shown == with_breaks
        note = str(app.query_one("#tree-note").render())
        assert f"{app.model.shown} of {app.model.shown + app.model.hidden} shown" in note, note
        assert app.model.hidden > 0


async def test_filter_bar_typing_and_escape():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        total = len(compile_entries(app))
        await pilot.press("slash")
        await pilot.press(*"errors")
        await until(pilot, lambda: [e.node.id for e in compile_entries(app)] == ["3/4"])
        await pilot.press("escape")
        await until(pilot, lambda: len(compile_entries(app)) == total)
        await pilot.press("slash", *"rank:0")  # no ranks here: everything hidden
        await until(pilot, lambda: compile_entries(app) == [])


def _trace_with_huge_payload(tmp_path, lines: int):
    """A real trace whose first dynamo_output_graph payload is replaced by `lines` lines."""
    src = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(src) if b'{"dynamo_output_graph"' in line)
    end = at + 1
    while end < len(src) and src[end].startswith(b"\t"):
        end += 1
    payload = "\n".join(f"op_{i} = add(x, 1)  # [bold]{i}[/]" for i in range(lines))
    meta = json.loads(src[at][src[at].index(b"] {") + 2:])
    meta["has_payload"] = hashlib.md5(payload.encode()).hexdigest()
    header = src[at][:src[at].index(b"] {") + 2] + json.dumps(meta).encode()
    body = [b"\t" + line.encode() for line in payload.split("\n")]
    path = tmp_path / "dedicated_log_torch_trace_huge.log"
    path.write_bytes(b"\n".join(src[:at] + [header] + body + src[end:]))
    return path


async def test_a_100k_line_payload_opens(tmp_path):
    path = _trace_with_huge_payload(tmp_path, 100_000)
    app = TlviewApp(str(path))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("2")  # Graphs of [0/0]: its dynamo_output_graph first
        view = app.query_one("#graph-view", PayloadView)
        await until(pilot, lambda: view.line_count == 100_000)
        view.focus()
        await pilot.press("G")
        await until(pilot, lambda: visible_lines(view)[-1].startswith("100000 "))
        screen = visible_lines(view)
        assert screen[-1].startswith("100000 ") and "op_99999" in screen[-1]
        assert "[bold]99999[/]" in screen[-1]  # markup in a payload is shown literally
        info = str(app.query_one("#graph-info").render())
        assert "100,000 lines" in info and "md5" not in info


async def test_diff_pane_3_1_against_3_0():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        tree = app.query_one(FrameTree)
        for expected in ("0/1", "1/1", "2/1", "2/2", "3/1"):  # r: the next recompile
            await pilot.press("r")
            await until(pilot, lambda: tree.entry.node.id == expected)
        await pilot.press("8")
        view = app.query_one("#diff-pane").query_one(PayloadView)
        await until(pilot, lambda: "against [3/0]" in view.text)
        assert "!!! 3/0: tensor 'x' size mismatch at index 1. expected 8, actual 10" in view.text
        assert "L['x'] size index 1: 8 -> 10" in view.text
        assert "+| | +- TENSOR_MATCH" in view.text  # the guard diff
        await press(pilot, "1")  # the summary says why and what to do
        summary = plain(app.query_one("#summary-body"))
        assert "size_mismatch" in summary and "mark_dynamic" in summary


async def test_run_pane_and_rank_switcher():
    app = TlviewApp(str(CORPUS / "distributed" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("9")
        body = app.query_one("#run-body")
        await until(pilot, lambda: "Ranks 0-1" in plain(body))
        text = plain(body)
        assert "[4/1] only on rank 1 (not on " in text and "Compile time by compile id" in text
        await press(pilot, "right_square_bracket")  # rank 0
        entries = compile_entries(app)
        assert {e.rank for e in entries} == {0} and len(entries) == 8
        await press(pilot, "right_square_bracket", "right_square_bracket")  # rank 1, then all
        assert len(compile_entries(app)) == 19


async def test_copy_gives_the_text_a_pane_shows():
    """`y` and `e` take the plain text of what the pane shows, whatever widget shows it."""
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press("r")
        await until(pilot, lambda: app.tree.entry.node.id == "0/1")
        for tab, expected in (("1", "✓ [0/1] ok"), ("4", "[0/0] n == 2"), ("5", "No graph breaks here."),
                              ("9", "Total compile time")):
            await press(pilot, tab)
            await until(pilot, lambda: expected in (app.detail.copy_text() or ""), what=expected)
            assert "Visual(" not in app.detail.copy_text() and "\x1b" not in app.detail.copy_text()


async def test_text_replaced_while_highlighting_is_highlighted(monkeypatch):
    """A new text shown while the old one's block is still being highlighted gets its own colours:
    the old block's result, arriving last, is dropped, never drawn for the new text. The lexer's
    run for the old text is held until the new one is drawn, so the order is always that one."""
    from tlview.ui import payload_view

    held = threading.Event()
    lexer = payload_view._highlighter

    class HeldForOld:
        def __init__(self, language):
            self.syntax = lexer(language)

        def highlight(self, code):
            if code.startswith("x = 1\nx = 1"):  # the old text's block (not the warm-up's "x = 1")
                held.wait(10)
            return self.syntax.highlight(code)

    monkeypatch.setattr(payload_view, "_highlighter", HeldForOld)
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "2")
        view = app.query_one("#graph-view", PayloadView)
        view.set_text("x = 1\n" * 10)
        view.highlighted(0)  # its block starts highlighting, and waits
        view.set_text("def f(y):\n    return y + 2\n")

        def drawn(y: int) -> list:
            """The line's text segments as drawn, after the line-number gutter."""
            return list(view.render_line(y))[1:]

        def keyword_coloured() -> bool:
            segments = drawn(0)
            styles = {seg.style.color for seg in segments if seg.text.strip() and seg.style is not None}
            return "".join(seg.text for seg in segments).strip() == "def f(y):" and len(styles) > 1

        await until(pilot, keyword_coloured, timeout=5, what="the new text highlighted")
        held.set()  # the old block's result now comes in
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert keyword_coloured(), drawn(0)
        assert "".join(seg.text for seg in drawn(1)).strip() == "return y + 2"




@pytest.mark.asyncio
@pytest.mark.parametrize("tab", ["2", "3", "6", "9"])
async def test_a_pane_loader_that_fails_is_shown_and_the_app_goes_on(monkeypatch, tab):
    """A pane's loader (a thread worker) that raises: a toast and the status line say which pane
    and what, the app goes on (keys, other panes), and a later load that works clears the line."""
    from tlview.domain import artifacts
    from tlview.ui import dynamic_pane, run_pane
    from tlview.ui.guards_pane import GuardsPane
    from tlview.ui.status_line import status_text

    broken = {"on": True}

    def failing(real):
        def call(*args, **kwargs):
            if broken["on"]:
                raise ValueError("a [bold]broken[/] payload")
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(artifacts.Artifact, "load", failing(artifacts.Artifact.load))
    monkeypatch.setattr(GuardsPane, "text_for", failing(GuardsPane.text_for))
    monkeypatch.setattr(dynamic_pane, "group_dynamic", failing(dynamic_pane.group_dynamic))
    monkeypatch.setattr(run_pane, "run_summary", failing(run_pane.run_summary))
    title = {"2": "Graphs", "3": "Guards", "6": "Dynamic shapes", "9": "Run"}[tab]
    app = TlviewApp(str(next((CORPUS / "dynamic_shapes" / "trace").glob("*.log"))))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await pilot.press(tab)
        said = f"the {title} pane could not load: ValueError: a [bold]broken[/] payload"
        await until(pilot, lambda: said in str(status_text(app.facts)), what="the failure on the status line")
        assert app.is_running and app.return_code is None
        assert any(said in str(n.message) for n in app.said)  # as written
        await press(pilot, "1")  # keys still work
        assert app.detail.active == "summary" and app.is_running
        broken["on"] = False
        await press(pilot, tab, "j", "k")  # shown again (and another compile id): loaded again
        await until(pilot, lambda: said not in str(status_text(app.facts)), what="the line cleared")
        assert app.is_running


@pytest.mark.asyncio
@pytest.mark.parametrize("typed", ["nonzero", "rank:9", "recompiles"])
async def test_a_filter_that_hides_the_selected_entry_moves_the_panes_with_the_tree(typed):
    """`b` selects a compile id; a filter typed then that hides it: the panes show the entry the
    tree's cursor is on (the first one left), or nothing when the tree is empty, never the hidden one."""
    from conftest import GENERATED

    app = TlviewApp(str(GENERATED / "failures" / "trace"))
    async with app.run_test(size=SIZE) as pilot:
        await ready(app, pilot)
        await press(pilot, "b")
        chosen = app.tree.entry
        assert chosen is not None and app.detail.selection.entry is chosen
        await press(pilot, "slash", *typed, "enter")
        await until(pilot, lambda: app.detail.selection.entry is app.tree.entry, what="the panes on the tree's entry")
        shown = [e.key for e in app.model.compile_entries()]
        assert chosen.key not in shown
        if shown:
            assert app.tree.entry is not None and app.tree.entry.key in shown
        else:
            assert app.tree.entry is None and app.detail.selection.entry is None


@pytest.mark.asyncio
@pytest.mark.parametrize("tab", ["1", "2", "5", "9"])
async def test_m_from_the_tree_maximizes_the_panes_and_gives_the_tree_back(tab):
    """`m` with the tree focused maximizes the panes with their tabs, on any tab (nothing happened
    on Summary, Run and Graph breaks); `m` again (or Esc) restores, the tree has the focus again,
    and j moves it (it was dead: the focus stayed in the pane)."""
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await press(pilot, tab)
        app.tree.focus()
        await pilot.pause()
        for restore in ("m", "escape"):
            await press(pilot, "m")
            assert app.screen.maximized is app.detail and app.detail.has_focus_within, (tab, app.focused)
            await press(pilot, restore)
            assert app.screen.maximized is None and app.focused is app.tree, (tab, restore, app.focused)
            before = app.tree.cursor_line
            await press(pilot, "j")
            assert app.tree.cursor_line == before + 1


@pytest.mark.asyncio
@pytest.mark.parametrize("tab, view", [("1", "#summary-body"), ("5", "#breaks-body"), ("9", "#run-body")])
async def test_every_pane_reads_with_j_k_g_G_space(tab, view):
    """Summary, Graph breaks and Run scroll as the payload views do (only arrows and PageDown did),
    and search as they do: `/`, n, N, Esc."""
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await press(pilot, "b", tab)
        widget = app.query_one(view)
        await until(pilot, lambda: widget.max_scroll_y > 3, what="a pane longer than the screen")
        widget.focus()
        await pilot.pause()
        await press(pilot, "j", "j")
        assert widget.scroll_y == 2
        await press(pilot, "k")
        assert widget.scroll_y == 1
        await press(pilot, "G")
        await until(pilot, lambda: widget.scroll_y == widget.max_scroll_y, what="the bottom")
        await press(pilot, "g")
        await until(pilot, lambda: widget.scroll_y == 0, what="the top")
        await press(pilot, "space")
        await until(pilot, lambda: widget.scroll_y > 3, what="a page down")
        assert app.tree.has_focus is False  # the keys read the pane, not the tree
        await press(pilot, "g", "slash", *"break", "enter")
        lines = [strip.text.lower() for strip in widget._strips]
        total = sum(line.count("break") for line in lines)
        assert total > 1 and widget.border_subtitle.startswith(f"/break: match 1 of {total}")
        first = widget.search.position()[0]
        await press(pilot, "n")
        assert widget.border_subtitle.startswith(f"/break: match 2 of {total}")
        await press(pilot, "N", "N")  # back past the first: wraps to the last
        assert widget.border_subtitle.startswith(f"/break: match {total} of {total}")
        last = widget.search.position()[0]
        assert last > first and widget.scroll_y <= last < widget.scroll_y + widget.size.height
        current = widget.get_component_rich_style("search--match-current")
        row = last - widget.scroll_y
        assert any(seg.style and seg.style.bgcolor == current.bgcolor for seg in widget.render_line(row))
        await press(pilot, "escape")
        assert widget.search is None and widget.border_subtitle == ""


@pytest.mark.asyncio
async def test_slash_on_the_graph_dropdown_searches_the_graph():
    """At 80x24 the Graphs pane's list is a dropdown: `/` there opened the tree's filter. It
    searches the graph shown, as `/` in the graph does; in the tree, `/` still filters."""
    from tlview.ui.filter_bar import FilterBar
    from tlview.ui.search import SearchBar

    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await press(pilot, "2")
        app.query_one("#graph-select").focus()
        await press(pilot, "slash")
        bar = app.query_one(SearchBar)
        assert bar.display and bar.view is app.query_one("#graph-view", PayloadView)
        assert not app.query_one(FilterBar).display
        await press(pilot, "escape")
        app.tree.focus()
        await press(pilot, "slash")
        assert app.query_one(FilterBar).display


@pytest.mark.asyncio
async def test_o_shows_the_output_code_and_the_choice_sticks_across_compile_ids():
    """`o` from the tree: the Graphs pane with the output code, focused (it took 8 keys). The graph
    chosen stays chosen on the next compile id (j reset it to the Dynamo graph), or the nearest
    kind where that compile has none. From 100 columns the list stands beside the code."""
    from tlview.ui.graphs_pane import GraphsPane

    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app, pilot)
        graphs = app.query_one(GraphsPane)
        shown = lambda: graphs._artifacts[app.query_one("#graph-list").highlighted]
        loaded, load = [], graphs.load
        graphs.load = lambda artifact: (loaded.append(artifact.name), load(artifact))[1]
        await press(pilot, "o")
        assert app.detail.active == "graphs" and app.focused is app.query_one("#graph-view", PayloadView)
        assert loaded == ["inductor_output_code"]  # the code alone (a graph was loaded, then cancelled)
        assert shown().kind.role.value == "code" and not graphs.has_class("-narrow")
        assert any(b.key == "o" and b.action == "output_code" for b in app.BINDINGS)  # in the help
        app.tree.focus()
        seen = 0
        for _ in range(5):
            await press(pilot, "j")
            if graphs._artifacts:  # (a frame's row has none)
                assert shown().name == "inductor_output_code", app.tree.entry.title
                seen += 1
        assert seen >= 2
        first, second = [e for e in app.model.compile_entries()][:2]
        app.tree.select_key(first.key)
        await press(pilot)
        aot = next(i for i, a in enumerate(graphs._artifacts) if a.name == "aot_inference_graph")
        app.query_one("#graph-list").highlighted = aot  # the user picks the AOT graph
        await press(pilot)
        app.tree.select_key(second.key)
        await press(pilot)
        assert shown().name == "aot_inference_graph"
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await press(pilot, "o")
        assert app.query_one(GraphsPane).has_class("-narrow")  # a dropdown at 80 columns


@pytest.mark.asyncio
async def test_what_the_app_says_covers_no_pane():
    """`b` said "graph break 1 of 7" in a toast over the Summary's "restarted because" lines: it is
    said on the footer's line for a moment (the keys come back after), and no toast is drawn."""
    from textual.widgets._toast import Toast

    from tlview.ui.key_hints import KeyHints

    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(app, pilot)
        await press(pilot, "b")
        footer = app.query_one(KeyHints)
        said = app.said[-1].message
        assert said.startswith("graph break ") and " of 7: " in said
        assert said in str(footer.render()) and not app.query(Toast)
        await until(pilot, lambda: "? Help" in str(footer.render()), what="the keys back")
        await press(pilot, "m")  # maximized: the footer's line is still there
        await press(pilot, "b")
        assert app.said[-1].message != said and app.said[-1].message in str(footer.render())
        assert footer.display and footer.region.height == 1
