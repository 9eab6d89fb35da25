"""The installed `tlview` in a real terminal (tmux): open a trace, move, filter, quit cleanly."""

from __future__ import annotations

from conftest import CORPUS, tlview_command


def test_open_move_filter_quit(tmux):
    term = tmux(f"{tlview_command()} {CORPUS / 'recompiles' / 'trace'}")
    screen = term.wait_for("✓ [0/0] ok")  # the Summary of the first compile id: the cursor is on it
    assert "scale_by_int" in screen and "[3/4]" in screen and "12 compile ids" in screen
    term.keys("j")  # move down: [0/1]
    term.wait_for("recompile of")
    term.keys("4")  # Recompiles tab
    screen = term.wait_for("n == 2")
    term.keys("/")
    term.wait_for("Esc: clear")  # the filter bar is open and has the focus
    term.keys(*"errors")
    screen = term.wait_for("11 hidden")
    tree_side = "\n".join(line[:60] for line in screen.splitlines())
    assert "[3/4]" in tree_side and "[0/0]" not in tree_side and "pooled" in tree_side
    term.keys("Escape")
    screen = term.wait_gone("hidden")  # the filter is cleared: every compile id is back
    assert "[0/0]" in "\n".join(line[:60] for line in screen.splitlines())
    term.keys("q")
    screen = term.wait_for("EXITED:0")
    assert "Traceback" not in screen


def test_follow_stdin_keeps_the_keyboard(tmux):
    """`job 2>&1 | tlview --follow -`: the piped TORCH_LOGS text is shown, keys come from the tty."""
    text = CORPUS / "recompiles" / "torch_logs.txt"
    term = tmux(f"cat {text} | {tlview_command()} --follow -")
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
