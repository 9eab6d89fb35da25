"""The installed `tlview` in a real terminal (tmux): open a trace, move, filter, quit cleanly."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from conftest import CORPUS

TMUX = shutil.which("tmux") or "tmux"  # required: .ci/run installs it when missing


def _tlview_command() -> str:
    exe = Path(sys.executable).parent / "tlview"
    return str(exe) if exe.exists() else f"{sys.executable} -m tlview"


class Tmux:
    def __init__(self, name: str, command: str, width=150, height=45):
        self.name = name
        subprocess.run([TMUX, "kill-session", "-t", name], capture_output=True)
        subprocess.run([TMUX, "new-session", "-d", "-s", name, "-x", str(width), "-y", str(height),
                        f"{command}; echo EXITED:$?; sleep 30"], check=True,
                       env={**os.environ, "TERM": "xterm-256color"})

    def keys(self, *keys: str) -> None:
        subprocess.run([TMUX, "send-keys", "-t", self.name, *keys], check=True)

    def screen(self) -> str:
        return subprocess.run([TMUX, "capture-pane", "-p", "-t", self.name], capture_output=True,
                              text=True, check=True).stdout

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} not on screen:\n{screen}")

    def wait_gone(self, text: str, timeout: float = 20.0) -> str:
        deadline = time.monotonic() + timeout
        screen = self.screen()
        while text in screen and time.monotonic() < deadline:
            time.sleep(0.1)
            screen = self.screen()
        assert text not in screen, f"{text!r} still on screen:\n{screen}"
        return screen

    def close(self) -> None:
        subprocess.run([TMUX, "kill-session", "-t", self.name], capture_output=True)


def test_open_move_filter_quit():
    term = Tmux("tlview-test", f"{_tlview_command()} {CORPUS / 'recompiles' / 'trace'}")
    try:
        screen = term.wait_for("12 compile ids")
        assert "scale_by_int" in screen and "[3/4]" in screen
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
    finally:
        term.close()


def test_follow_stdin_keeps_the_keyboard():
    """`job 2>&1 | tlview --follow -`: the piped TORCH_LOGS text is shown, keys come from the tty."""
    text = CORPUS / "recompiles" / "torch_logs.txt"
    term = Tmux("tlview-stdin", f"cat {text} | {_tlview_command()} --follow -")
    try:
        screen = term.wait_for("12 compile ids")
        assert "LIVE" in screen and "[3/4]" in screen
        term.keys("k")
        term.wait_for("paused")
        term.keys("q")
        screen = term.wait_for("EXITED:0")
        assert "Traceback" not in screen
    finally:
        term.close()
