"""The installed `tlview` in a real terminal (terminal): open a trace, move, filter, quit cleanly."""

from __future__ import annotations

import pytest
from conftest import CORPUS, GENERATED, tlview_command


def test_open_move_filter_quit(terminal):
    term = terminal(f"{tlview_command()} {CORPUS / 'recompiles' / 'trace'}")
    term.wait_for("✓ [0/0] ok")  # the Summary of the first compile id: the cursor is on it
    term.wait_for("12 compile ids")  # the status line can come before the tree's last refresh
    screen = term.wait_for("[3/4]")
    assert "scale_by_int" in screen
    term.keys("j")  # move down: [0/1]
    term.wait_for("recompile of")
    term.keys("4")  # Recompiles tab
    screen = term.wait_for("n == 2")
    term.keys("/")
    term.wait_for("Esc: clear")  # the filter bar is open and has the focus
    term.keys(*"errors")
    screen = term.wait_for("1 of 12 shown")
    tree_side = "\n".join(line[:60] for line in screen.splitlines())
    assert "[3/4]" in tree_side and "[0/0]" not in tree_side and "pooled" in tree_side
    term.keys("Escape")
    screen = term.wait_gone("of 12 shown")  # the filter is cleared: every compile id is back
    assert "[0/0]" in "\n".join(line[:60] for line in screen.splitlines())
    term.keys("q")
    screen = term.wait_for("EXITED:0")
    assert "Traceback" not in screen


@pytest.mark.parametrize("follow", ["--follow ", ""])
def test_follow_stdin_keeps_the_keyboard(terminal, follow):
    """`job 2>&1 | tlview --follow -` (or `tlview -`: a pipe is followed until it ends): the piped
    TORCH_LOGS text is shown, keys come from the tty."""
    text = CORPUS / "recompiles" / "torch_logs.txt"
    term = terminal(f"cat {text} | {tlview_command()} {follow}-")
    screen = term.wait_for("■ ended")  # cat closed the pipe: all of it read
    assert "12 compile ids" in screen and "[3/4]" in screen and "stdin" in screen
    assert "tlview-stdin" not in screen  # the temp copy of stdin is never shown
    term.keys("?")  # a key from the terminal, not from the pipe
    term.wait_for("next / previous recompile")
    term.keys("q")  # closes the help (Escape then q at once would read as Alt+q)
    term.wait_gone("next / previous recompile")
    term.keys("q")
    screen = term.wait_for("EXITED:0")
    assert "Traceback" not in screen


def test_80x24_search_wrap_and_maximize(terminal):
    """A person at 80x24: every tab and the footer's help key on screen, 40+ columns of code,
    `/` search with its count and `n`, `w` wrap, `m` maximize and Esc back."""
    term = terminal(f"{tlview_command()} {CORPUS / 'model'}", width=80, height=24)
    term.wait_for("✓ [0/0] ok")
    term.keys("2")
    screen = term.wait_for("class GraphModule")
    lines = screen.splitlines()
    assert all(str(n) in lines[1] for n in range(1, 10))  # every tab (below the headline): its number at least
    code = next(line for line in lines if "class GraphModule" in line)
    # the footer's keys, once the run's first notice (source lines not read here) is over
    assert "? Help" in term.wait_for("? Help").splitlines()[-1]
    assert len(code.split("▕", 1)[1]) >= 40  # the code side of the screen
    term.keys("Enter")  # into the graph
    term.keys("/")
    term.wait_for("search in this pane")
    term.keys(*"view")
    screen = term.wait_for("/view: match 1 of ")
    total = screen.split("/view: match 1 of ", 1)[1].split()[0]
    term.keys("Enter", "n")
    term.wait_for(f"/view: match 2 of {total}")
    term.keys("N", "N")
    term.wait_for("search wrapped")  # before the first: to the last, and it says so
    term.wait_for(f"/view: match {total} of {total}")
    term.keys("m")  # maximized: the tree is gone, the code takes the width
    screen = term.wait_gone("[0/1]")
    term.keys("w")
    term.wait_for("wrapping long lines")
    term.keys("Escape")  # back: the tree again
    term.wait_for("[0/1]")
    term.keys("q")
    screen = term.wait_for("EXITED:0")
    assert "Traceback" not in screen


def test_80x24_the_first_screen_of_a_job_that_died_says_it_whole(terminal):
    """The verdict opens the Run pane: wrapped at the view's own width, each line keeps its last
    character (the pane's width less 2 was one column more than the view, next to its scrollbar)."""
    term = terminal(f"{tlview_command()} {GENERATED / 'dist215' / 'raise_in3'}", width=80, height=24)
    screen = term.wait_for("Why the job may hang")
    run = " ".join(line.split("▕", 1)[1].strip() for line in screen.splitlines()[2:16] if "▕" in line)
    run = " ".join(run.replace("▂", "").replace("▃", "").split())
    said = "RuntimeError: activations overflow: max |h| = 1.87e+06 > 1e4 (at program.py:42 in layer)"
    assert f"died: rank 1: {said}" in run  # the verdict
    assert f"⚠ the job died: rank 1 raised {said}" in run  # and why, indented
