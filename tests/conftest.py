"""Shared paths and helpers: the command line in-process, Pilot waits on conditions (never a
fixed sleep), and tmux sessions on sockets of their own (two runs never collide)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = FIXTURES / "corpus"
PEER = FIXTURES / "peer" / "tlparse-tests"
GENERATED = FIXTURES / "generated"
SCENARIOS = ["graph_breaks", "recompiles", "dynamic_shapes", "model", "distributed"]
SIZE = (150, 45)
TMUX = shutil.which("tmux") or "tmux"  # required: .ci/run installs it when missing


def run_cli(*args: str) -> tuple[int, str]:
    """Run tlview's main() in this process; return (exit code, stdout)."""
    from tlview.cli import main

    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8")
    with redirect_stdout(out):
        code = main(list(args))
        out.flush()
    return code, buf.getvalue().decode("utf-8")


def tlview_status(tlparse_status: str, broke: bool) -> str:
    """tlview's status of a compile tlparse calls `tlparse_status`: a compile that broke the graph
    without a restart (a data-dependent branch) is a `break` in tlview (README: "Status symbols"),
    and `ok` in tlparse, which looks only at restart reasons."""
    return "break" if tlparse_status == "ok" and broke else tlparse_status


def json_for(path: os.PathLike | str, *args: str) -> dict:
    code, out = run_cli("--json", str(path), *args)
    assert code == 0, out
    return json.loads(out)


def without_paths(doc: dict) -> dict:
    """A summary to compare with one of a copy of the same files: no file paths in it."""
    doc = dict(doc)
    doc.pop("sources", None)
    doc["compiles"] = [{k: v for k, v in c.items() if k != "source"} for c in doc["compiles"]]
    return doc


@pytest.fixture(scope="session")
def truths() -> dict[str, dict]:
    return {s: json.loads((CORPUS / s / "truth.json").read_text()) for s in SCENARIOS}


# ---- Pilot ---------------------------------------------------------------------------------------

async def until(pilot, predicate, timeout: float = 15.0, what: str = "") -> None:
    """Let the app run until `predicate()` holds (workers and messages take their time)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        assert loop.time() < deadline, f"timed out waiting for {what or predicate}"
        await pilot.pause(0.02)


async def ready(app, pilot) -> None:
    """The logs are read, the tree shows them and the panes' loaders are done."""
    await until(pilot, lambda: app.facts.finished, what="indexing to finish")
    await app.workers.wait_for_complete()
    await until(pilot, lambda: app.tree.entry is not None or not app.model.roots, what="a cursor")
    await pilot.pause()  # the refresh after the last message
    await app.workers.wait_for_complete()


async def press(pilot, *keys: str) -> None:
    """Press keys and let what they start (pane loaders) finish."""
    await pilot.press(*keys)
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def plain(static) -> str:
    """What a Static shows, as plain text (its content rendered with rich)."""
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(static.content)
    return console.export_text()


def visible_lines(view) -> list[str]:
    lines = ["".join(seg.text for seg in view.render_line(y)).strip() for y in range(view.size.height)]
    return [line for line in lines if line]


def compile_entries(app):
    return app.model.compile_entries()


# ---- a real terminal ---------------------------------------------------------------------------

def tlview_command() -> str:
    exe = Path(sys.executable).parent / "tlview"
    return str(exe) if exe.exists() else f"{sys.executable} -m tlview"


class Tmux:
    """One tmux server of its own (`-L`), running one command in a window of a given size."""

    def __init__(self, command: str, width: int = 150, height: int = 45, env: dict | None = None):
        self.socket = f"tlview-test-{uuid.uuid4().hex[:12]}"
        self.name = "main"
        self.run("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height),
                 f"{command}; echo EXITED:$?; sleep 60", env={**os.environ, "TERM": "xterm-256color",
                                                             **(env or {})})

    def run(self, *args: str, env=None) -> str:
        return subprocess.run([TMUX, "-L", self.socket, *args], capture_output=True, text=True,
                              check=True, env=env).stdout

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", self.name, *keys)

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", self.name)

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not on screen:\n{screen}")

    def wait_gone(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = self.screen()
        while text in screen and time.monotonic() < deadline:
            time.sleep(0.05)
            screen = self.screen()
        assert text not in screen, f"{text!r} still on screen:\n{screen}"
        return screen

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def tmux():
    """Start tmux sessions with `tmux(command)`; every server is killed at the end."""
    started = []

    def start(command: str, **kwargs) -> Tmux:
        term = Tmux(command, **kwargs)
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()
