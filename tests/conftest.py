"""Shared paths and helpers: the command line in-process, Pilot waits on conditions (never a
fixed sleep), and real terminals: a pseudo-terminal each, read by a terminal emulator."""

from __future__ import annotations

import asyncio
import copy
import inspect
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import ClassVar

import pyte
import pytest
from ptyprocess import PtyProcess
from rich.console import Console

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = FIXTURES / "corpus"
PEER = FIXTURES / "peer" / "tlparse-tests"
GENERATED = FIXTURES / "generated"
SCENARIOS = ["graph_breaks", "recompiles", "dynamic_shapes", "model", "distributed"]
SIZE = (150, 45)


SLOW_FIXTURES = {"terminal", "snap_compare", "big_trace"}


@pytest.fixture(autouse=True)
def _own_config_dir(tmp_path_factory, monkeypatch):
    """Each test has its own config folder (the saved theme): never the user's, never another's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))


@pytest.fixture(autouse=True)
def _first_screen_on_top(request, monkeypatch):
    """The explorer opens on the run's worst problem; a test of anything else opens on the tree's
    first compile id, as it was written for, unless it is marked `first_screen`."""
    if request.node.get_closest_marker("first_screen") is None:  # (a real terminal's tlview inherits it)
        monkeypatch.setenv("TLVIEW_FIRST_SCREEN", "top")


def pytest_collection_modifyitems(items) -> None:
    """`slow`: a test that starts the app (Pilot, an async test), a real terminal, or reads a big
    input. `pytest -m "not slow"` leaves them out: the edit-and-test loop (README)."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or \
                inspect.iscoroutinefunction(getattr(item, "obj", None)):
            item.add_marker(pytest.mark.slow)
    # The slow ones first: the workers share them from the start, and the run ends on quick tests
    # instead of one worker finishing a long one alone. (sort is stable: file order otherwise.)
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: a worker more than the cores. The app tests wait on their threads (indexing,
    loaders) and the real-terminal tests on a child process, so a worker a core leaves cores idle."""
    return (os.cpu_count() or 1) + 1


def run_cli(*args: str) -> tuple[int, str]:
    """Run tlview's main() in this process; return (exit code, stdout)."""
    from tlview.cli import main

    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8")
    with redirect_stdout(out):
        code = main(list(args))
        out.flush()
    return code, buf.getvalue().decode("utf-8")


def run_cli_bytes(*args: str) -> subprocess.CompletedProcess:
    """tlview's main() in this process: its exit code, and its stdout and stderr as bytes."""
    from tlview.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    stdout, stderr = io.TextIOWrapper(out, encoding="utf-8"), io.TextIOWrapper(err, encoding="utf-8")
    with redirect_stdout(stdout), redirect_stderr(stderr):
        code = main(list(args))
        stdout.flush()
        stderr.flush()
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def tlview_process(*args: str, stdout=subprocess.PIPE, shell: str | None = None) -> subprocess.CompletedProcess:
    """The installed command in a process of its own: stdout is a real file descriptor (60 s at
    most: a case that blocks, as a pipe opened for reading, fails instead of waiting forever)."""
    command = ["sh", "-c", shell] if shell is not None else [*tlview_command().split(), *args]
    return subprocess.run(command, stdout=stdout, stderr=subprocess.PIPE, timeout=60,
                          stdin=subprocess.DEVNULL, check=False)


def one_line(err: bytes) -> str:
    """The one line tlview wrote to stderr: no traceback, no internal error."""
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0] and "internal error" not in lines[0]
    return lines[0]


def write_file(folder, name: str, data: bytes) -> Path:
    """`data` written to folder/name (the folder made if need be)."""
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return path


def diagnoses_by_kind(doc: dict) -> dict:
    """Each diagnosis of a `--json` document by (compile id, kind of problem)."""
    return {(c["id"], d["kind"]): d for c in doc["compiles"] for d in c["diagnosis"]}


def tlview_status(tlparse_status: str, broke: bool) -> str:
    """tlview's status of a compile tlparse calls `tlparse_status`: a compile that broke the graph
    without a restart (a data-dependent branch) is a `break` in tlview (docs/concepts.md: "Status"),
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


def read_into(index, *paths) -> None:
    """Read the logs of `paths` into `index` in this process (no fork, no pool) and judge them:
    an index as --json has it, for tests of what is decided after indexing."""
    from tlview.index.indexing import Indexer
    from tlview.source.discover import find_logs

    for path in paths:
        found, _ = find_logs(str(path))
        for log in found:
            index.add_log(log)
    Indexer(index, use_fork=False, use_pool=False).run()
    index.judge_changed()


# ---- deadlines -----------------------------------------------------------------------------------

def load_factor() -> float:
    """How many times a quiet machine's time a wait may take now: the run queue per core (the
    1-minute load average; 2 cores beside a 2-process CPU hog and the suite's 2 workers read 2-3),
    at least 1, at most 8."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    return min(8.0, max(1.0, load / (os.cpu_count() or 1)))


class Deadline:
    """A wait's deadline, scaled to the machine's speed: `seconds` on a quiet machine, stretched
    by the most load seen since the wait began (a test waits on a condition; the deadline only
    says when waiting is hopeless)."""

    def __init__(self, seconds: float, clock=time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self.start = clock()
        self.factor = load_factor()

    def passed(self) -> bool:
        self.factor = max(self.factor, load_factor())
        return self.clock() - self.start > self.seconds * self.factor


# ---- Pilot ---------------------------------------------------------------------------------------

async def until(pilot, predicate, timeout: float = 15.0, what: str = "") -> None:
    """Let the app run until `predicate()` holds (workers and messages take their time)."""
    deadline = Deadline(timeout, asyncio.get_running_loop().time)
    while not predicate():
        assert not deadline.passed(), f"timed out waiting for {what or predicate}"
        await pilot.pause(0.02)


async def ready(app, pilot) -> None:
    """The logs are read, the tree shows them, every pane is mounted (after the logs' first read)
    and the panes' loaders are done."""
    # (a deadline, not a timing: 1,024 rank files beside a CPU hog took more than 15 s)
    await until(pilot, lambda: app.facts.finished, timeout=90, what="indexing to finish")
    await until(pilot, lambda: app.detail.all_mounted, what="the panes mounted")
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


async def type_in(pilot, text: str) -> None:
    """What typing `text` into the focused input does, as one change instead of a frame per key
    (typing key by key is itself tested in test_ui.py)."""
    field = pilot.app.focused
    field.value = field.value + text
    field.cursor_position = len(field.value)
    await pilot.pause()


def said_by(app) -> list[str]:
    """What the app notifies from now on."""
    said: list[str] = []
    notify = app.notify

    def recording(message, *args, **kwargs):
        said.append(str(message))
        return notify(message, *args, **kwargs)

    app.notify = recording
    return said


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


class _Screen(pyte.Screen):
    """pyte's screen with the alternate screen (private mode 1049), which pyte does not keep: what a
    program drew there is gone when it leaves it, and the shell's lines are back, as in xterm."""

    _saved = None

    def set_mode(self, *modes, **kwargs) -> None:
        if kwargs.get("private") and 1049 in modes and self._saved is None:
            self._saved = (copy.deepcopy(self.buffer), copy.copy(self.cursor))
            self.erase_in_display(2)
        super().set_mode(*modes, **kwargs)

    def reset_mode(self, *modes, **kwargs) -> None:
        super().reset_mode(*modes, **kwargs)
        if kwargs.get("private") and 1049 in modes and self._saved is not None:
            (self.buffer, self.cursor), self._saved = self._saved, None
            self.dirty.update(range(self.lines))


def _without_size(environ) -> dict:
    """The environment less COLUMNS and LINES (pytest-xdist's workers set them to 80x24): a
    program in a real terminal asks the terminal for its size."""
    return {k: v for k, v in environ.items() if k not in ("COLUMNS", "LINES")}


def _cut_prefix(data: bytes, sequence: bytes) -> int:
    """How many bytes at the end of `data` begin `sequence` (it may go on in the next read)."""
    for size in range(min(len(sequence) - 1, len(data)), 0, -1):
        if sequence.startswith(data[-size:]):
            return size
    return 0


class Terminal:
    """One command in a pseudo-terminal of its own (ptyprocess), read through a terminal emulator
    (pyte): the screen a person sees, the title, the modes left set. Both come from PyPI, so the
    test extras are all a newcomer installs."""

    KEYS: ClassVar[dict[str, str]] = {"Enter": "\r", "Escape": "\x1b", "C-c": "\x03", "Tab": "\t", "BSpace": "\x7f",
            "Up": "\x1b[A", "Down": "\x1b[B", "Right": "\x1b[C", "Left": "\x1b[D"}

    # Synchronized output (mode 2026), as most terminals have it: asked whether it has it, the
    # terminal says yes, and shows a frame that the program brackets with these only once it is
    # whole. Without it a frame read in two pieces showed half of it: the tree's note updated above
    # the old tree ("1 of 12 shown" over a tree of 12).
    SYNC_QUERY, SYNC_YES = b"\x1b[?2026$p", b"\x1b[?2026;2$y"
    SYNC_START, SYNC_END = b"\x1b[?2026h", b"\x1b[?2026l"
    SYNC_TIMEOUT = 1.0  # seconds: a frame never ended (the program killed in it) is shown as it is
    _pending = b""  # bytes not shown yet: a frame begun and not ended, or a cut sequence
    _frame_since: float | None = None  # when the frame held now began
    _cut_since = 0.0  # when a cut sequence was held

    def __init__(self, command: str, width: int = 150, height: int = 45, env: dict | None = None):
        self._screen = _Screen(width, height)
        self._stream = pyte.ByteStream(self._screen)
        self._lock = threading.Lock()
        self.process = PtyProcess.spawn(
            ["bash", "-c", f"{command}; echo EXITED:$?; sleep 60"], dimensions=(height, width),
            env={**_without_size(os.environ), "TERM": "xterm-256color", **(env or {})})
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                data = self.process.read(65536)
            except (EOFError, OSError, ValueError):  # (ValueError: closed by close() meanwhile)
                return
            with self._lock:
                if self.SYNC_QUERY in self._pending[-16:] + data:
                    self.process.write(self.SYNC_YES)
                self._show(data)

    def _show(self, data: bytes) -> None:
        """Feed the emulator what is whole: up to a frame's start, and each frame once it ended."""
        data, self._pending = self._pending + data, b""
        while data:
            if self._frame_since is None:
                start = data.find(self.SYNC_START)
                if start < 0:
                    keep = _cut_prefix(data, self.SYNC_START)  # (a start cut between two reads)
                    self._stream.feed(data[:len(data) - keep])
                    self._pending = data[len(data) - keep:]
                    self._cut_since = time.monotonic()
                    return
                self._stream.feed(data[:start])
                data, self._frame_since = data[start:], time.monotonic()
            end = data.find(self.SYNC_END)
            if end < 0:
                self._pending = data
                return
            end += len(self.SYNC_END)
            self._stream.feed(data[:end])
            data, self._frame_since = data[end:], None

    def _show_held_frame(self) -> None:
        """What was held SYNC_TIMEOUT ago and is still held (a frame never ended, the program
        killed in it) is shown as it is, as terminals do."""
        since = self._frame_since if self._frame_since is not None else self._cut_since
        if self._pending and time.monotonic() - since > self.SYNC_TIMEOUT:
            self._stream.feed(self._pending)
            self._pending, self._frame_since = b"", None

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.process.write(self.KEYS.get(key, key).encode())

    def screen(self) -> str:
        with self._lock:
            self._show_held_frame()
            return "\n".join(line.rstrip() for line in self._screen.display)

    def cells(self) -> list[list]:
        """Each row's cells as pyte has them: the character, its colours (a name, or hex) and
        its attributes (bold, reverse, underscore)."""
        with self._lock:
            self._show_held_frame()
            return [[self._screen.buffer[y][x] for x in range(self._screen.columns)]
                    for y in range(self._screen.lines)]

    @property
    def title(self) -> str:
        with self._lock:
            self._show_held_frame()
            return self._screen.title

    def state(self) -> str:
        """`alternate cursor mouse...` as 0/1 flags: the alternate screen, the cursor shown, and the
        mouse reporting modes (1000, 1002, 1003, 1006, 1015) left on."""
        with self._lock:
            self._show_held_frame()
            modes = set(self._screen.mode)
        private = lambda mode: int((mode << 5) in modes)  # pyte keeps a private mode shifted
        flags = [private(1049), int(pyte.modes.DECTCEM in modes)]
        flags += [private(m) for m in (1000, 1002, 1003, 1006, 1015)]
        return " ".join(map(str, flags))

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = Deadline(timeout)
        screen = ""
        while not deadline.passed():
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not on screen:\n{screen}")

    def wait_gone(self, text: str, timeout: float = 30.0) -> str:
        deadline = Deadline(timeout)
        screen = self.screen()
        while text in screen and not deadline.passed():
            time.sleep(0.05)
            screen = self.screen()
        assert text not in screen, f"{text!r} still on screen:\n{screen}"
        return screen

    def close(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.close(force=True)


def descendants(pid: int) -> list[int]:
    """Every process under `pid` (Linux /proc), children first: found by the process tree, never
    by a name in `ps` (a parallel run has other tlviews)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop(0)
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its parent."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][:1] != "Z"
    except OSError:
        return False


def wait_until(predicate, timeout: float, what: str) -> None:
    """Poll a condition outside an app (a process, a file) until it holds, or fail saying what."""
    deadline = Deadline(timeout)
    while not predicate():
        assert not deadline.passed(), f"timed out waiting for {what}"
        time.sleep(0.01)


@pytest.fixture(scope="session")
def gpu_perf_runs(tmp_path_factory) -> Path:
    """The GPU perf runs of fixtures/gpu_perf (runs1-5.tar.xz) extracted once a session into a
    temporary folder (never into the repository): `gpu_perf/NAME.MODE`, `gpu_perf2/NAME.MODE`,
    `gpu_perf3/NAME` (held out), `gpu_perf4/NAME.MODE` and `gpu_perf5/NAME.MODE` (held out, rounds
    2 and 3), each with trace/ and torch_logs.txt."""
    import tarfile

    folder = tmp_path_factory.mktemp("gpu_perf")
    for name in ("runs1.tar.xz", "runs2.tar.xz", "runs3.tar.xz", "runs4.tar.xz", "runs5.tar.xz"):
        with tarfile.open(FIXTURES / "gpu_perf" / name, "r:xz") as archive:
            archive.extractall(folder, filter="data")
    return folder


@pytest.fixture(scope="session")
def big_trace(tmp_path_factory) -> Path:
    """A real trace's small records (starts, strings, recompile and break reasons) repeated with
    renumbered frames to 128 MiB, made once a session: slow enough to index that the pool (the
    explorer) and the forked children (headless) are still indexing when a test signals them.
    Small records are what indexing costs: the whole recompiles trace repeated is mostly payload
    lines, which the pool skips at 1 GB/s, and its compilation metrics (45 KB lines) parse at
    1.7 GB/s. With them, 256 MiB were read by one pool worker 0.9 s after the first screen, and
    a test under load saw the pool done before its signal."""
    import re

    data = next((CORPUS / "graph_breaks" / "trace").glob("*.log")).read_bytes()
    kept = b"".join(r for r in re.split(rb"(?m)^(?=V\d{4} )", data)
                    if re.match(rb'^V[^\n]*?\] \{"(?:str|dynamo_start|artifact": \{"name": '
                                rb'"(?:recompile_reasons|dynamo_graph_break_reason))', r))
    frame = re.compile(rb'(?m)^(V[^\n]*?"frame_id": )(\d+)')
    frames = max(int(m.group(2)) for m in frame.finditer(kept)) + 1
    path = tmp_path_factory.mktemp("big") / "dedicated_log_torch_trace_big.log"
    with open(path, "wb") as f:
        f.writelines(frame.sub(lambda m: m.group(1) + str(int(m.group(2)) + repeat * frames).encode(), kept)
                     for repeat in range((128 << 20) // len(kept)))
    return path


@pytest.fixture
def terminal():
    """Start commands in a real terminal with `terminal(command)`; every one is killed at the end."""
    started = []

    def start(command: str, **kwargs) -> Terminal:
        term = Terminal(command, **kwargs)
        started.append(term)
        return term

    yield start
    for term in started:
        term.close()


def counted_as_truth(totals: dict, key: str) -> int:
    """A total as the corpus truths count it: their graph breaks include the ones PyTorch makes
    on purpose in its own code, which tlview counts apart (graph_breaks_by_design)."""
    return totals[key] + (totals.get("graph_breaks_by_design", 0) if key == "graph_breaks" else 0)
