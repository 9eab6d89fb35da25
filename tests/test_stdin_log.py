"""A stream given to `tlview --follow -` (source/stdin_log.py, #26): a pipe that is not a log (NUL
bytes, random bytes, a log that turns to garbage, UTF-16) or never ends. Each condition is made
here from a real trace or text log. A stream that is not a log ends the explorer with a one-line
message and exit 2, its copy bounded. (Files and streams with CR line ends: test_cr_line_ends.py.)"""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import (
    CORPUS,
    Deadline,
    alive,
    command_line,
    descendants,
    tlview_command,
    wait_until,
    write_file,
)

from tlview.source import stdin_log
from tlview.source.stdin_log import TextCheck

TRACE = next((CORPUS / "recompiles" / "trace").glob("*.log"))
TEXT = CORPUS / "recompiles" / "torch_logs.txt"
DEADLINE = 20  # generous for a loaded machine: a stream read forever fails here, not forever



# ---- a stream that is not a log: what the check says -------------------------------------------

def feed_all(data: bytes, step: int = 1 << 16) -> str | None:
    """What the check says of `data` read `step` bytes at a time (with the lines read so far,
    as the copy gives them)."""
    check = TextCheck()
    lines = 0
    for at in range(0, len(data), step):
        if (why := check.feed(data[at:at + step], lines)) is not None:
            return why
        lines += data.count(b"\n", at, at + step)
    return check.end(lines)


LOGS = {
    "trace": lambda: TRACE.read_bytes(),
    "text": lambda: TEXT.read_bytes(),
    "CR-only trace": lambda: TRACE.read_bytes().replace(b"\n", b"\r"),
    "colours, UTF-8, a stray binary print": lambda: b"".join(
        b"\x1b[32mI1121 23:27:10.004000 17567 torch/x.py:1] \xe2\x9c\x93 \xe6\x97\xa5 step %d\x1b[0m\n" % i
        for i in range(20_000)) + random.Random(1).randbytes(2048) + TEXT.read_bytes(),
}


@pytest.mark.parametrize("name", LOGS)
def test_a_log_is_never_taken_for_garbage(name):
    data = LOGS[name]()
    for step in (1 << 16, 4096, 100):  # however the pipe's reads fall
        assert feed_all(data, step) is None, f"{name}, read {step} bytes at a time"


def test_text_written_as_utf16_is_told_as_such():
    why = feed_all(TEXT.read_text().encode("utf-16"))
    assert why.startswith("stdin is not a log: UTF-16 text from its start, not UTF-8")


def test_a_line_with_no_end_is_not_a_log(monkeypatch):
    monkeypatch.setattr(stdin_log, "LINE_MAX", 1 << 20)
    text = TEXT.read_bytes()
    lines = text.count(b"\n")
    assert feed_all(text + b"x" * (2 << 20)) == (
        f"stdin is not a log: a line of over 1 MiB with no line end after {len(text):,} bytes "
        f"({lines:,} lines); tlview stopped reading it")
    assert feed_all(text + b"x" * (1 << 20)) is None  # as long as the longest line read whole


# ---- a stream that is not a log: the explorer ---------------------------------------------------

def copy_sizes(pid: int) -> list[int]:
    """The sizes of stdin's copies held open under `pid` (found by the process tree; a process may
    end while it is looked at)."""
    sizes, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            for task in os.listdir(f"/proc/{parent}/task"):
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
            fds = os.listdir(f"/proc/{parent}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if "tlview-stdin" in os.readlink(f"/proc/{parent}/fd/{fd}"):
                    sizes.append(os.stat(f"/proc/{parent}/fd/{fd}").st_size)
            except OSError:
                pass
    return sizes


def run_to_the_end(term) -> tuple[str, int]:
    """Wait for the command to end (at most DEADLINE s), watching the copy's size all along:
    (the screen, the biggest copy seen)."""
    deadline = Deadline(DEADLINE)
    biggest = 0
    while "EXITED:" not in (screen := term.screen()):
        assert not deadline.passed(), f"still running after {DEADLINE} s:\n{screen}"
        biggest = max([biggest, *copy_sizes(term.process.pid)])
        time.sleep(0.01)  # (a poll, not a wait for time to pass: the loop ends on the condition)
    return screen, biggest


@pytest.mark.parametrize("feed, message", [
    ("< /dev/zero", r"tlview: stdin is not a log: NUL bytes from its start; tlview stopped reading it"),
    ("< /dev/urandom", (r"tlview: stdin is not a log: binary data \(control bytes, not UTF-8\) from its "
                        r"start; tlview stopped reading it")),
    (f"cat {TRACE} /dev/zero |", (r"tlview: stdin is not a log: NUL bytes after 3\.\d MiB \([\d,]+ lines\); "
                                  r"tlview stopped reading it")),
], ids=["zero", "urandom", "a log, then NUL bytes"])
def test_a_stream_that_is_not_a_log_ends_with_a_message(terminal, feed, message):
    command = f"{tlview_command()} --follow - {feed}" if feed.startswith("<") else \
        f"{feed} {tlview_command()} --follow -"
    term = terminal(command)
    screen, biggest = run_to_the_end(term)
    assert "EXITED:2" in screen and re.search(message, screen), screen
    assert "Traceback" not in screen and "tlview-stdin" not in screen
    if "start" in message:
        assert biggest == 0  # judged on its first read: nothing of it was copied
    else:
        assert biggest <= TRACE.stat().st_size + (1 << 20)  # the log, and at most a stretch more


GENERATOR = """
import sys
data = open(sys.argv[1], "rb").read()
try:
    while True:  # a job that never ends
        sys.stdout.buffer.write(data)
except BrokenPipeError:
    pass
"""


def test_an_endless_log_stops_at_the_cap(terminal, tmp_path):
    generator = write_file(tmp_path, "endless.py", GENERATOR.encode())
    cap = 4 << 20
    term = terminal(f"{sys.executable} {generator} {TRACE} 2>/dev/null | {tlview_command()} --follow -",
                    env={"TLVIEW_STDIN_MAX": "4M"})
    screen, biggest = run_to_the_end(term)
    assert "EXITED:2" in screen, screen
    assert ("tlview: stdin passed 4 MiB, the most tlview copies of a pipe: tlview stopped reading it "
            "(TLVIEW_STDIN_MAX=8M keeps more)") in screen
    assert 0 < biggest <= cap


def test_a_bad_cap_is_said_at_once():
    done = subprocess.run([*tlview_command().split(), "--follow", "-"], stdin=subprocess.DEVNULL,
                          capture_output=True, timeout=DEADLINE, env={**os.environ, "TLVIEW_STDIN_MAX": "lots"})
    assert done.returncode == 2
    assert done.stderr.decode().strip() == ("tlview: TLVIEW_STDIN_MAX='lots' is not a size: bytes, "
                                            "or with K, M or G (16G)")


def _fd_links(pid: int) -> list[str]:
    """What `pid`'s descriptors point to (one closed while they are listed is left out: CI saw
    one go between the listing and its readlink)."""
    links = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            links.append(os.readlink(fd))
        except FileNotFoundError:
            pass
    return links


def test_the_copy_of_stdin_is_never_left_behind(terminal, tmp_path):
    """Killed with SIGTERM or SIGHUP while following a pipe: tlview ends, and its copy of the pipe
    never had a name in the temp folder (open, but unlinked at once)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        temp = tmp_path / sig.name
        temp.mkdir()
        term = terminal(f"(cat {CORPUS / 'recompiles' / 'torch_logs.txt'}; sleep 30) | "
                        f"TMPDIR={temp} {tlview_command()} --follow -")
        term.wait_for("12 compile ids")
        pid = next(p for p in descendants(term.process.pid) if "--follow -" in command_line(p))
        copies = [link for link in _fd_links(pid) if link.startswith(str(temp))]
        assert copies and all(c.endswith(" (deleted)") for c in copies), copies  # held, no name
        assert list(temp.iterdir()) == []
        os.kill(pid, sig)
        wait_until(lambda: not alive(pid), 10, f"tlview to end on {sig.name}")
        assert list(temp.iterdir()) == []
