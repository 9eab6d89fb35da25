"""Nothing cut (#48): each line of a pane drawn as one text (Summary, Graph breaks, Run; the compare
view's too) fits the columns its view draws text in, beside its scrollbar, at 80, 120 and 200
columns; what is drawn is what was rendered. Wrapped a column wider than the view, each line lost
its last character ("...at its first change" without its `:`)."""

from __future__ import annotations

import re

import pytest
from conftest import CORPUS, GENERATED, press, ready, tlview_command, until
from rich.cells import cell_len

from tlview.ui.app import TlviewApp
from tlview.ui.compare_app import CompareApp
from tlview.ui.compare_tree import problem_label
from tlview.ui.rendered_view import RenderedView

SIZES = [(80, 24), (120, 40), (200, 50)]
RUNS = [CORPUS / "model", CORPUS / "recompiles" / "trace", GENERATED / "multi_rank4" / "trace"]
COMPARE = GENERATED / "compare"
PANES = [("1", "#summary-body"), ("5", "#breaks-body")]
ENTRIES = 6  # compile ids gone through in each pane


def cut_lines(view: RenderedView) -> list[str]:
    """The lines of `view` not shown whole: wider than the columns it draws text in (its own less
    its scrollbar), or, on screen, drawn other than rendered."""
    columns = view.scrollable_content_region.width
    lines = view.search_lines()
    cut = [line for line in lines if cell_len(line.rstrip()) > columns]
    top = view.scroll_offset.y
    for y in range(min(view.size.height, len(lines) - top)):
        drawn = view.render_line(y).crop(0, columns).text.rstrip()
        if drawn != lines[top + y].rstrip():
            cut.append(lines[top + y])
    return cut


async def assert_nothing_cut(app, pilot) -> int:
    """Every pane drawn as one text, over the first compile ids: returns the lines checked."""
    checked = 0
    for tab, body in PANES:
        await press(pilot, tab)
        app.tree.focus()
        for _ in range(ENTRIES):
            view = app.query_one(body, RenderedView)
            assert not cut_lines(view), (tab, cut_lines(view))
            checked += len(view.search_lines())
            await press(pilot, "j")
    await press(pilot, "9")
    run = app.query_one("#run-body", RenderedView)
    await until(pilot, lambda: len(run.search_lines()) > 1, what="the Run pane")
    await pilot.pause()
    assert not cut_lines(run), cut_lines(run)
    return checked + len(run.search_lines())


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("run", RUNS, ids=lambda p: p.parent.name if p.name == "trace" else p.name)
async def test_every_line_of_a_pane_is_drawn_whole(run, size):
    app = TlviewApp(str(run))
    async with app.run_test(size=size) as pilot:
        await ready(app, pilot)
        assert await assert_nothing_cut(app, pilot) > 20


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
async def test_every_line_of_a_compare_pane_is_drawn_whole(size):
    app = CompareApp(str(COMPARE / "before" / "trace"), str(COMPARE / "after" / "trace"))
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.comparison is not None and app.tree.cursor_node is not None,
                    what="the comparison")
        await app.workers.wait_for_complete()
        await press(pilot, *"jjj")  # to a compile of a problem
        assert await assert_nothing_cut(app, pilot) > 20


@pytest.mark.parametrize("size", [(80, 24), (64, 12)], ids=lambda s: f"{s[0]}x{s[1]}")
async def test_a_compare_label_narrower_than_its_tree_ends_in_an_ellipsis(size):
    app = CompareApp(str(COMPARE / "before" / "trace"), str(COMPARE / "after" / "trace"))
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.comparison is not None, what="the comparison")
        await pilot.pause()
        tree = app.tree
        # each problem's label in the columns beside its guide and fold icon, scrollbar or not
        room = tree.scrollable_content_region.width - tree.guide_depth - 2
        labels = [item.label for group in tree.root.children for item in group.children]
        assert labels and all(label.cell_len <= room for label in labels), (room, labels)
        assert tree.show_vertical_scrollbar == (size[1] == 12)
        if size == (80, 24):  # cut or not, each row still names its compile id, and no two read alike
            assert all(re.search(r"\[\d+/\d+\]", label.plain) for label in labels), labels
            assert len({label.plain for label in labels}) == len(labels), labels
        problems = [*app.comparison.gone, *app.comparison.new, *app.comparison.same]
        short = [problem_label(problem, 14) for problem in problems]
        assert all(label.cell_len <= 14 and label.plain.endswith("…") for label in short), short
        assert problem_label(problems[0], 10_000).plain.startswith(short[0].plain[:-1])


def test_120x40_a_summary_keeps_the_last_character_of_its_lines(terminal):
    """In a real terminal: [0/1]'s Summary, whose text brings its scrollbar, wraps beside it."""
    term = terminal(f"{tlview_command()} {CORPUS / 'model'}", width=120, height=40)
    term.wait_for("✓ [0/0] ok")
    term.keys("j")
    # [0/1]'s own row ("recompile of" alone is the headline's too, shown before the key is read)
    screen = term.wait_for("(its guard failed)")
    # the pane's text: right of the tree's edge, less the scrollbar's column
    pane = " ".join(line.ljust(120)[:119].split("▕", 1)[1] for line in screen.splitlines()[2:-2] if "▕" in line)
    pane = " ".join(pane.split())
    assert ("torch._dynamo.mark_dynamic(idx, 1) (without it, Dynamo makes it dynamic at its first "
            "change: this recompile); if only a few sizes occur, pad or bucket the inputs") in pane
    term.keys("q")
    assert "Traceback" not in term.wait_for("EXITED:0")
