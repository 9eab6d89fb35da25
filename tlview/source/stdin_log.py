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

Only a log is copied, and only so much of it. A stream that is not text lines (`TextCheck`:
/dev/zero, random bytes, a binary or UTF-16 file) is not read on, from its start or from wherever
it turns so: its first read is judged before anything is copied, then every 64 KiB looked at (the
first 4 KiB of each read, so a log streams at full speed); more than a quarter NUL, control bytes
or not UTF-8 is not a log, and neither is a line of over 64 MiB with no line end. A log that goes
on past TLVIEW_STDIN_MAX bytes (8 GiB unless set, read when the copy starts: `16G`, `500M`,
bytes) stops being copied at the last line end before that size; a full disk stops it too. Then
the pipe is closed and `why_nothing` says why: the explorer ends with that message, as it does
when a pipe brings no log line.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Callable

from tlview.source.damaged_lines import ENVELOPE_LINE_MAX
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
from tlview.source.payload import size_text
from tlview.source.reader import CR_TO_LF, LINE_ENDS_HEAD, cr_only

LINE_HEAD = 4096  # what tells a log line is at its start: longer lines are looked at up to here
MAX_VARIABLE = "TLVIEW_STDIN_MAX"
DEFAULT_MAX = 8 << 30  # far over what a job prints (the trace of a big job is a few GB)
SAMPLE = 4096  # of each read of the pipe, what is looked at
WINDOW = 64 << 10  # sampled bytes judged together: a stray binary print in a log passes
FIRST = 256  # the stream's start is judged alone, before any of it is copied (its first read)
LINE_MAX = ENVELOPE_LINE_MAX  # the longest line the trace reader reads whole
# Bytes no log holds (TAB, LF, CR and ESC, for colours, are a log's): NUL and other control bytes.
CONTROL = bytes(b for b in range(32) if b not in b"\t\n\r\x1b") + b"\x7f"


def copy_limit() -> int:
    """TLVIEW_STDIN_MAX as bytes (`8G`, `500M`, `1.5G`, `4096`): read when a copy starts."""
    value = os.environ.get(MAX_VARIABLE, "").strip()
    if not value:
        return DEFAULT_MAX
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", value, re.IGNORECASE)
    if m is None or float(m.group(1)) < 1:
        raise NoLogsError(f"{MAX_VARIABLE}={value!r} is not a size: bytes, or with K, M or G (16G)")
    number, unit = float(m.group(1)), m.group(2).upper()
    return int(number * (1 << (10 + 10 * "KMGT".find(unit))) if unit else number)


def gib(n: int) -> str:
    return f"{n / (1 << 30):,.1f} GiB".replace(".0 GiB", " GiB") if n >= 1 << 30 else size_text(n)


def copy_whole(path: str) -> str | None:
    """What the pipe on stdin holds, to its end, into `path` (`cmd | tlview --report -`), bounded
    as the explorer's copy (TLVIEW_STDIN_MAX); or why not."""
    if os.isatty(0):
        return "stdin is a terminal: pipe a log in (python train.py 2>&1 | tlview --report -)"
    try:
        limit, copied = copy_limit(), 0
    except NoLogsError as exc:
        return str(exc)
    with open(path, "wb") as out:
        while chunk := os.read(0, 1 << 20):
            copied += len(chunk)
            if copied > limit:
                return (f"stdin passed {MAX_VARIABLE} ({gib(limit)}): write it to a file and give "
                        "tlview the file, or raise the limit")
            out.write(chunk)
    return None if copied else "stdin was empty: nothing was piped in"


class TextCheck:
    """Whether a stream still looks like a log: text lines. `feed` each read of it (with the lines
    read before it, for messages: counting them again would double the cost); it returns why it
    is not, once it is not."""

    def __init__(self) -> None:
        self.bytes = 0  # of the stream
        self.line = 0  # bytes since the last line end (LF or CR)
        self._sampled = self._bad = self._nul = 0
        self._first = True  # the window is the stream's start
        self._bad_from: tuple[int, int] | None = None  # (offset, lines) of its first bad read
        self._last = b""  # the last sample: the shape of UTF-16 is told by it

    def feed(self, chunk: bytes, lines: int = 0) -> str | None:
        sample = self._last = chunk[:SAMPLE]
        self._sampled += len(sample)
        control = len(sample) - len(sample.translate(None, CONTROL))
        self._nul += sample.count(b"\0") if control else 0
        # (a byte that is not UTF-8 is one U+FFFD; a character cut at the sample's end, one more)
        bad = control + (0 if sample.isascii() else sample.decode("utf-8", "replace").count("\ufffd"))
        self._bad += bad
        if self._bad_from is None and 4 * bad > len(sample):
            self._bad_from = (self.bytes, lines)
        self.bytes += len(chunk)
        last = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        self.line = self.line + len(chunk) if last < 0 else len(chunk) - last - 1
        why = self._judge(full=False, lines=lines)
        if why is None and self.line > LINE_MAX:
            start = self.bytes - self.line
            why = f"a line of over {size_text(LINE_MAX)} with no line end {self._where(start, lines)}"
        return why and f"stdin is not a log: {why}; tlview stopped reading it"

    def end(self, lines: int = 0) -> str | None:
        """At the pipe's end: the stretch that did not fill a window, if it tells anything."""
        why = self._judge(full=self._sampled >= 64, lines=lines)  # (a few bytes tell nothing)
        return why and f"stdin is not a log: {why}"

    def _judge(self, full: bool, lines: int) -> str | None:
        """Binary: over a quarter of the window's bytes (told as soon as that many came)."""
        full = full or self._sampled >= (FIRST if self._first else WINDOW)
        bad, nul, sampled = self._bad, self._nul, self._sampled
        if not (4 * bad > (sampled if full else WINDOW)):
            if full:
                self._sampled, self._bad, self._nul, self._bad_from = 0, 0, 0, None
                self._first = False
            return None
        where = self._where(*(self._bad_from or (self.bytes, lines)))
        if _utf16(self._last):
            return (f"UTF-16 text {where}, not UTF-8 (convert it on the way in: "
                    "iconv -f UTF-16 -t UTF-8 FILE | tlview --follow -)")
        return f"{'NUL bytes' if 2 * nul > bad else 'binary data (control bytes, not UTF-8)'} {where}"

    @staticmethod
    def _where(offset: int, lines: int) -> str:
        if not offset:
            return "from its start"
        return f"after {size_text(offset)} ({lines:,} line{'s' if lines != 1 else ''})"


def _utf16(sample: bytes) -> bool:
    """Text written as UTF-16 (Windows tools): every other byte NUL, the others not."""
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    return max(even, odd) > 0.4 * len(sample) and min(even, odd) < 0.02 * len(sample)


class StdinCopy:
    def __init__(self) -> None:
        self.limit = copy_limit()  # (first: a bad TLVIEW_STDIN_MAX is said before the terminal is taken)
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
        self.bytes_copied = 0
        self.lines_read = 0
        self.saw_log_line = False
        self.stopped: str | None = None  # why the copy stopped before the pipe's end
        self.check = TextCheck()
        self.cr_only: bool | None = None  # lines end in a bare CR (reader.py), from the first bytes
        self._lead = b""  # the first bytes, while that is not known
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
                if (why := self.check.feed(chunk, self.lines_read)) is not None:
                    self.stopped = self._compressed() or why  # nothing of this read is copied
                    return
                if self.cr_only is None:
                    self._lead += chunk[:LINE_ENDS_HEAD - len(self._lead)]
                    self.cr_only = cr_only(self._lead)
                self._look(chunk)
                if self.kind is None:
                    self._head += chunk
                    # a first line longer than a sniff is decided on what came of it
                    if not self._decide(eof=len(self._head) >= SNIFF_BYTES):
                        continue
                    chunk, self._head = self._head, b""
                if not self._write(chunk):
                    return
            if not self.saw_log_line and (why := self.check.end(self.lines_read)) is not None:
                self.stopped = self._compressed() or why
            elif self.kind is None and self._head.strip():
                self._decide(eof=True)
                self._write(self._head)
        except OSError as exc:  # the pipe failed (EIO): said, as the other ends of a copy are
            self.stopped = f"stdin could not be read ({exc.strerror or exc}): tlview stopped reading it"
        finally:
            if self._partial and not self.saw_log_line:
                self._look(b"\n")  # the last line, with no newline after it
            try:
                self._out.close()
            except OSError:
                pass  # (the write that failed is told)
            os.close(self.pipe)
            self.done.set()

    def _write(self, data: bytes) -> bool:
        """Copy `data`, up to the limit; False once the copy stopped."""
        room = self.limit - self.bytes_copied
        if len(data) > room:
            cut = max(data.rfind(b"\n", 0, room), data.rfind(b"\r", 0, room)) + 1
            data = data[:cut]  # whole lines: the last record is not torn in two
            twice = 2 * self.limit
            more = f"{twice >> 30}G" if twice >= 1 << 30 else f"{twice >> 20}M" if twice >= 1 << 20 else str(twice)
            self.stopped = (f"stdin passed {gib(self.limit)}, the most tlview copies of a pipe: tlview "
                            f"stopped reading it ({MAX_VARIABLE}={more} keeps more)")
        try:
            self._out.write(data)
            self._out.flush()
        except OSError as exc:  # a full disk: the copy stops where it is
            self.stopped = (f"stdin's copy could not be written ({exc.strerror or exc} in "
                            f"{tempfile.gettempdir()}; TMPDIR sets where it goes): tlview stopped reading it")
            return False
        self.bytes_copied += len(data)
        return self.stopped is None

    def _decide(self, eof: bool) -> bool:
        """The kind, from the first line that is not blank (whole, or the pipe's end)."""
        head = self._head.translate(CR_TO_LF) if self.cr_only else self._head
        lines = head.removeprefix(BOM).split(b"\n")
        whole = lines if eof else lines[:-1]
        first = next((line for line in whole if line.strip()), None)
        if first is None:
            return False
        self.kind = TRACE if is_trace_line(first) else TEXT
        self._on_kind(self.kind)
        return True

    def _look(self, chunk: bytes) -> None:
        """Count lines, and whether any is a log line (only line starts are looked at)."""
        if self.cr_only:
            chunk = chunk.translate(CR_TO_LF)
        if self.saw_log_line:
            self.lines_read += chunk.count(b"\n")
            return
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()[:LINE_HEAD]
        self.lines_read += len(lines)
        self.saw_log_line = any(is_log_line(line[:LINE_HEAD].removeprefix(BOM)) for line in lines)

    def why_nothing(self) -> str | None:
        """Once the copy ended: why there is nothing (more) to explore: the copy stopped (not a
        log, too big, a full disk), or the pipe closed with no log line in it. None otherwise."""
        if not self.done.is_set():
            return None
        if self.stopped is not None:
            return self.stopped
        if self.saw_log_line:
            return None
        if not self.bytes_read:
            return "stdin closed before anything came through the pipe"
        if why := self._compressed():
            return why
        lines = f"{self.lines_read:,} line{'s' if self.lines_read != 1 else ''}"
        return f"stdin closed with no TORCH_TRACE or TORCH_LOGS line in it ({lines} read)"

    def _compressed(self) -> str | None:
        for magic, fmt, tool in COMPRESSED:
            if self._first.startswith(magic):
                return (f"stdin is compressed ({fmt}): decompress it on the way in "
                        f"({tool} FILE | tlview --follow -)")
        return None

    def remove(self) -> None:
        if not self.path.startswith("/proc/"):
            try:
                os.unlink(self.path)
            except OSError:
                pass
        os.close(self._keep)
