"""`tlview --follow -`: a log piped in (`python train.py 2>&1 | tlview --follow -`).

As toolong does: the pipe is copied into a temporary file that is followed like any log, and
the keyboard is read from the terminal (/dev/tty) instead of the pipe. The file is unlinked as
soon as it is open and read through /proc/self/fd (Linux): whatever ends tlview (a signal, a
crash), nothing is left behind in the temp folder. That path is tlview's business: the user
is told "stdin", never the path.

What the pipe carries is known from its first line, as a file's kind is known from its content:
a TORCH_TRACE envelope makes it a trace (`cat trace.log | tlview --follow -`), anything else
TORCH_LOGS text (a job's output: its prints may come before any log line). Nothing is written
to the copy before the kind is told (`on_kind`), so the follower never sees it without a kind.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable

from tlview.source.discover import (
    BOM,
    COMPRESSED,
    SNIFF_BYTES,
    TEXT,
    TRACE,
    NoLogsError,
    is_log_line,
    is_trace_line,
)

LINE_HEAD = 4096  # what tells a log line is at its start: longer lines are looked at up to here


class StdinCopy:
    def __init__(self) -> None:
        if os.isatty(0):
            raise NoLogsError("stdin is a terminal: pipe a job's output in (cmd 2>&1 | tlview --follow -)")
        self.pipe = os.dup(0)
        try:
            tty = os.open("/dev/tty", os.O_RDONLY)
        except OSError:
            os.close(self.pipe)
            raise NoLogsError("no terminal to read keys from (/dev/tty): run tlview in a terminal") from None
        os.dup2(tty, 0)
        os.close(tty)
        fd, path = tempfile.mkstemp(prefix="tlview-stdin-", suffix=".log")
        self._out = os.fdopen(fd, "wb")
        self._keep = os.open(path, os.O_RDONLY)  # holds the unlinked file for the readers
        self.path = f"/proc/self/fd/{self._keep}"
        if os.path.exists(self.path):
            os.unlink(path)
        else:  # no /proc: a plain path, removed when tlview ends
            self.path = path
        self.done = threading.Event()
        self.kind: str | None = None  # TRACE or TEXT once the first line came
        self.bytes_read = 0
        self.lines_read = 0
        self.saw_log_line = False
        self._head = b""  # what came before the kind was known (not yet in the copy)
        self._first = b""  # the pipe's first bytes: a compressed stream is told by them
        self._partial = b""  # the start of a line still to end, up to LINE_HEAD bytes
        self._on_kind: Callable[[str], None] = lambda kind: None

    def start(self, on_kind: Callable[[str], None] | None = None) -> StdinCopy:
        """Copy the pipe from now on; `on_kind(kind)` is called once, before the first byte is
        written to the copy."""
        if on_kind is not None:
            self._on_kind = on_kind
        threading.Thread(target=self._copy, name="tlview-stdin", daemon=True).start()
        return self

    def _copy(self) -> None:
        try:
            while chunk := os.read(self.pipe, 1 << 16):
                self.bytes_read += len(chunk)
                self._first += chunk[:8 - len(self._first)]
                self._look(chunk)
                if self.kind is None:
                    self._head += chunk
                    # a first line longer than a sniff is decided on what came of it
                    if not self._decide(eof=len(self._head) >= SNIFF_BYTES):
                        continue
                    chunk, self._head = self._head, b""
                self._out.write(chunk)
                self._out.flush()
            if self.kind is None and self._head.strip():
                self._decide(eof=True)
                self._out.write(self._head)
        finally:
            if self._partial and not self.saw_log_line:
                self._look(b"\n")  # the last line, with no newline after it
            self._out.close()
            os.close(self.pipe)
            self.done.set()

    def _decide(self, eof: bool) -> bool:
        """The kind, from the first line that is not blank (whole, or the pipe's end)."""
        lines = self._head.removeprefix(BOM).split(b"\n")
        whole = lines if eof else lines[:-1]
        first = next((line for line in whole if line.strip()), None)
        if first is None:
            return False
        self.kind = TRACE if is_trace_line(first) else TEXT
        self._on_kind(self.kind)
        return True

    def _look(self, chunk: bytes) -> None:
        """Count lines, and whether any is a log line (only line starts are looked at)."""
        if self.saw_log_line:
            self.lines_read += chunk.count(b"\n")
            return
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()[:LINE_HEAD]
        self.lines_read += len(lines)
        self.saw_log_line = any(is_log_line(line[:LINE_HEAD].removeprefix(BOM)) for line in lines)

    def why_nothing(self) -> str | None:
        """Once the pipe closed: why there is nothing to explore, or None if a log line came."""
        if not self.done.is_set() or self.saw_log_line:
            return None
        if not self.bytes_read:
            return "stdin closed before anything came through the pipe"
        for magic, fmt, tool in COMPRESSED:
            if self._first.startswith(magic):
                return (f"stdin is compressed ({fmt}): decompress it on the way in "
                        f"({tool} FILE | tlview --follow -)")
        lines = f"{self.lines_read:,} line{'s' if self.lines_read != 1 else ''}"
        return f"stdin closed with no TORCH_TRACE or TORCH_LOGS line in it ({lines} read)"

    def remove(self) -> None:
        if not self.path.startswith("/proc/"):
            try:
                os.unlink(self.path)
            except OSError:
                pass
        os.close(self._keep)
