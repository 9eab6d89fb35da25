"""A real terminal for benchmarks: tmux on a socket of its own, the screen polled every few ms
(what a person sees, measured from outside the app).

The screen is read through one tmux client in control mode (`tmux -C`), not a `tmux
capture-pane` process each time: polled every 10 ms, those processes took a quarter of a core
(0.51 s of CPU in 2 s) on a 2-core machine, from the app being measured. Through the control
client: 0.04 s. Keys go the same way."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

TMUX = shutil.which("tmux") or "tmux"


def _quoted(word: str) -> str:
    """A word for tmux's command parser (double quotes: backslash, quote and `$` escaped)."""
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


class Tmux:
    """A tmux server of its own (`-L`), one window running `command`."""

    def __init__(self, command: str, cwd: Path) -> None:
        self.socket = f"tlview-bench-{uuid.uuid4().hex[:10]}"
        self.run("new-session", "-d", "-s", "b", "-x", "160", "-y", "45", "-c", str(cwd),
                 f"{command}; sleep 60")
        self._control: subprocess.Popen | None = None

    def run(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True,
                              check=True, env={**os.environ, "TERM": "xterm-256color"}).stdout

    def keys(self, *keys: str) -> None:
        """Keys sent through the control client: a `tmux send-keys` process took 3-6 ms to start,
        which every key's measured latency held."""
        self.command("send-keys -t b " + " ".join(_quoted(key) for key in keys))

    def screen(self) -> str:
        return self.command("capture-pane -p -t b")

    def styled_screen(self) -> str:
        """The screen with its colours (SGR escapes): what shows the active tab and the cursor."""
        return self.command("capture-pane -p -e -t b")

    def command(self, line: str) -> str:
        """A tmux command's output, through the control client (started at the first)."""
        if self._control is None:
            self._control = subprocess.Popen([TMUX, "-L", self.socket, "-C", "attach", "-t", "b"],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             env={**os.environ, "TERM": "xterm-256color"})
            self._reply()  # the attach's own
            self.command("refresh-client -f no-output")  # (no copy of what the pane draws)
        self._control.stdin.write(line.encode() + b"\n")
        self._control.stdin.flush()
        return self._reply()

    def _reply(self) -> str:
        """The next command's output: the lines between `%begin T N F` and its `%end T N F` (a
        screen line may start with "%end" too; notifications come only between blocks)."""
        lines: list[bytes] = []
        begun = None
        while line := self._control.stdout.readline():
            if begun is None:
                if line.startswith(b"%begin "):
                    begun = line.split()[1:3]
            elif line.startswith((b"%end ", b"%error ")) and line.split()[1:3] == begun:
                return b"".join(lines).decode("utf-8", "replace")
            else:
                lines.append(line)
        raise RuntimeError("the tmux control client ended")

    def pane_pid(self) -> int:
        return int(self.run("display-message", "-p", "-t", "b", "#{pane_pid}").strip())

    def wait_for(self, text: str, timeout: float = 120, poll: float = 0.01) -> str:
        """The screen, once it shows `text` (polled every `poll` s: the measure's resolution; at
        2 ms the polling takes 4% of a core)."""
        started = time.monotonic()
        screen = self.screen()
        while text not in screen:
            if time.monotonic() - started > timeout:
                raise SystemExit(f"timed out waiting for {text!r}:\n{screen}")
            time.sleep(poll)
            screen = self.screen()
        return screen

    def __enter__(self) -> Tmux:  # noqa: PYI034 - typing.Self needs Python 3.11; tlview runs on 3.10
        return self

    def __exit__(self, *exc) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, check=False)
        if self._control is not None:
            self._control.stdin.close()
            self._control.wait(timeout=10)
