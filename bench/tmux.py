"""A real terminal for benchmarks: tmux on a socket of its own, the screen polled every few ms
(what a person sees, measured from outside the app)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

TMUX = shutil.which("tmux") or "tmux"


class Tmux:
    """A tmux server of its own (`-L`), one window running `command`."""

    def __init__(self, command: str, cwd: Path) -> None:
        self.socket = f"tlview-bench-{uuid.uuid4().hex[:10]}"
        self.run("new-session", "-d", "-s", "b", "-x", "160", "-y", "45", "-c", str(cwd),
                 f"{command}; sleep 60")

    def run(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True,
                              check=True, env={**os.environ, "TERM": "xterm-256color"}).stdout

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "b", *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "b")

    def styled_screen(self) -> str:
        """The screen with its colours (SGR escapes): what shows the active tab and the cursor."""
        return self.run("capture-pane", "-p", "-e", "-t", "b")

    def pane_pid(self) -> int:
        return int(self.run("display-message", "-p", "-t", "b", "#{pane_pid}").strip())

    def wait_for(self, text: str, timeout: float = 120) -> str:
        """The screen, once it shows `text` (polled every 10 ms: the measure's resolution)."""
        started = time.monotonic()
        screen = self.screen()
        while text not in screen:
            if time.monotonic() - started > timeout:
                raise SystemExit(f"timed out waiting for {text!r}:\n{screen}")
            time.sleep(0.01)
            screen = self.screen()
        return screen

    def __enter__(self) -> "Tmux":
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)
