"""What a person feels on opening things, in a real terminal (tmux), for bench/ui.py:

firstscreen: from starting tlview on the 3 MB corpus trace to the screen that shows its compile
    ids, against Textual's own smallest app (one Static) in the same run. Target: <= 0.6 s.
firstopen: the first open of each pane (2-9) on a 10 MB trace, from the key to the screen that
    stays the same for SETTLED seconds (settled: drawn, highlighted, filled in). Target: <= 150 ms.
search: each character typed in a search of the output code (`o`, `/`), from the key to the
    screen that shows that query's count (`/que: match 1 of 9`). Target: <= 30 ms.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synth import CORPUS, ROOT, build_trace
from tmux import Tmux

SETTLED = 0.3  # s with no change on screen: the pane is done
HELLO = ("from textual.app import App\nfrom textual.widgets import Static\n"
         "class Hello(App):\n    def compose(self):\n        yield Static('hello compile ids')\n"
         "Hello().run()\n")


def _started(command: str, shows: str) -> float:
    start = time.perf_counter()
    with Tmux(command, cwd=ROOT) as tmux:
        tmux.wait_for(shows, timeout=60)
        return time.perf_counter() - start


def first_screen(runs: int = 5) -> None:
    trace = next((CORPUS / "recompiles" / "trace").glob("*.log"))
    ours, hello = [], []
    for _ in range(runs):  # alternating: the machine's load falls on both alike
        ours.append(_started(f"exec {sys.executable} -m tlview {trace}", "compile ids ·"))
        hello.append(_started(f"exec {sys.executable} -c \"{HELLO}\"", "hello compile ids"))
    print(f"firstscreen 3 MB trace: median {statistics.median(ours):.2f} s (max {max(ours):.2f}); "
          f"Textual's smallest app {statistics.median(hello):.2f} s; ratio "
          f"{statistics.median(ours) / statistics.median(hello):.2f}   (target <= 0.6 s)")


def _settled_after(tmux: Tmux, key: str, timeout: float = 10.0) -> float:
    """Milliseconds from `key` to the last change of the screen before SETTLED s of none."""
    before = tmux.screen()
    start = time.perf_counter()
    tmux.keys(key)
    last_change, screen = None, before
    while time.perf_counter() - start < timeout:
        now = tmux.screen()
        t = time.perf_counter()
        if now != screen:
            screen, last_change = now, t
        elif last_change is not None and t - last_change >= SETTLED:
            return (last_change - start) * 1000
        time.sleep(0.005)
    raise SystemExit(f"{key!r} never settled")


def first_open(size_mb: int = 10) -> None:
    trace = build_trace(size_mb << 20)
    times = {}
    for key in "23456789":
        with Tmux(f"exec {sys.executable} -m tlview {trace}", cwd=ROOT) as tmux:
            tmux.wait_for("compile ids ·")
            tmux.keys("g", "j")
            tmux.wait_for("attempts")
            time.sleep(1.5)  # the tree filled in, the Summary drawn
            times[key] = _settled_after(tmux, key)
    parts = ", ".join(f"{key}: {ms:.0f}" for key, ms in times.items())
    print(f"firstopen {size_mb} MB trace, key to settled (ms): {parts}; max {max(times.values()):.0f}   "
          "(target <= 150 ms)")


def search_typing(query: str = "buf0") -> None:
    trace = next((CORPUS / "model" / "trace").glob("*.log"))
    with Tmux(f"exec {sys.executable} -m tlview {trace}", cwd=ROOT) as tmux:
        tmux.wait_for("compile ids ·")
        tmux.keys("o")
        tmux.wait_for("output code")
        time.sleep(1.5)
        tmux.keys("/")
        tmux.wait_for("search in this pane")
        times = []
        for i, char in enumerate(query):
            time.sleep(TYPING)
            start = time.perf_counter()
            tmux.keys(char)
            tmux.wait_for(f"/{query[:i + 1]}: ", timeout=10, poll=0.002)
            times.append((time.perf_counter() - start) * 1000)
    print(f"search   typed {query!r} in the output code, a key every {TYPING * 1000:.0f} ms: per character "
          f"(ms) {', '.join(f'{t:.0f}' for t in times)}; max {max(times):.0f}   (target <= 30 ms)")


# A fast typist's pace (80 words a minute). Each key was sent as soon as the one before showed, 30 ms
# apart: faster than anyone types, each key then landed on the frames the one before had started.
TYPING = 0.15
