"""`/` takes a regex, in a pane and in the tree (views/text_query.py), in the app: the highlights
are the regex's matches, and a text that is not a regex is searched as text, which is said."""

from __future__ import annotations

import re

import pytest
from conftest import CORPUS, compile_entries, plain, press, ready, until

from tlview.ui.app import TlviewApp
from tlview.ui.tree_note import TreeNote


@pytest.mark.asyncio
async def test_a_pane_search_highlights_the_regexs_matches():
    app = TlviewApp(str(CORPUS / "graph_breaks" / "trace"))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(app, pilot)
        await press(pilot, "b", "5")
        widget = app.query_one("#breaks-body")
        await until(pilot, lambda: widget.max_scroll_y > 3, what="the graph break pane")
        widget.focus()
        await press(pilot, "slash", *r"break\w*", "enter")
        lines = [strip.text for strip in widget._strips]
        expected = [(n, m.span()) for n, line in enumerate(lines)
                    for m in re.finditer(r"break\w*", line, re.IGNORECASE)]
        assert expected and widget.border_subtitle.startswith(f"/break\\w*: match 1 of {len(expected)}")
        match = widget.get_component_rich_style("search--match")
        row = next(n for n, _ in expected if widget.scroll_y <= n < widget.scroll_y + widget.size.height)
        drawn = widget.render_line(row - widget.scroll_y)
        current = widget.get_component_rich_style("search--match-current")
        marked = [seg.text for seg in drawn if seg.style and seg.style.bgcolor in (match.bgcolor, current.bgcolor)]
        words = [lines[row][a:b] for n, (a, b) in expected if n == row]
        assert "".join(marked).strip() == "".join(words)  # the words the regex took, whole
        await press(pilot, "escape", "slash", *"break(", "enter")
        assert "(not a regex: searching the text)" in widget.border_subtitle


@pytest.mark.asyncio
async def test_the_tree_filter_takes_a_regex_and_says_when_the_text_is_not_one():
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(app, pilot)
        await press(pilot, "slash", *"(dtype|requires_grad) mismatch")
        await until(pilot, lambda: [e.node.id for e in compile_entries(app)] == ["2/1", "2/2"],
                    what="the two ids whose reasons the regex matches")
        note = app.query_one(TreeNote)
        assert "not a regex" not in plain(note)
        await press(pilot, "escape", "slash", *"mismatch (dtype")
        await until(pilot, lambda: "not a regex: searching the text" in plain(note), what="the note")
