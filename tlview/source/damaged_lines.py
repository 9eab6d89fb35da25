"""How a damaged trace file is read: garbage between records, a record glued after a torn write or
a run of NULs, two records on one line, holes, and lines longer than a block.

An object each TraceFile owns (`damaged_lines`), which hands the records it finds inside bad lines
back to its file's scanner (`scan_block`, `scan_envelope`). Whatever is wrong is reported with its
place and size, and only the bytes that are wrong: a good record inside a bad line is found and read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tlview.source.payload import size_text

if TYPE_CHECKING:
    from tlview.source.trace_file import TraceFile

HAS_PAYLOAD = b'"has_payload": "'
# An envelope's start, found inside a bad line: a record glued after a torn write or NUL bytes.
ENVELOPE_START = re.compile(rb"V\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\n\]]*\] \{")
ENVELOPE_LINE_MAX = 64 << 20  # a metadata line read whole (a 30,000-frame stack is a few MiB)
_MEMCHR_TRIES = 8  # "V"s tried one by one before the regular expression takes over


def glued_envelope(data: bytes, start: int, end: int) -> re.Match | None:
    """`ENVELOPE_START.search(data, start, end)`: an envelope's start inside a line (a record glued
    on). Every envelope starts with "V", which JSON rarely holds: memchr to each "V" and a match
    there beat the search across a long line (a 39 KB compilation_metrics line: 1 µs against
    11 µs, and 25 µs for the `] {` it looked for before). A line of many "V"s goes to the search
    after a few."""
    at = data.find(b"V", start, end)
    for _ in range(_MEMCHR_TRIES):
        if at < 0:
            return None
        if found := ENVELOPE_START.match(data, at, end):
            return found
        at = data.find(b"V", at + 1, end)
    return None if at < 0 else ENVELOPE_START.search(data, at, end)


@dataclass(slots=True)
class LongLine:
    """A line longer than a block being skipped: reported, with its size, when it ends."""

    start: int
    what: str  # "payload", "nul", "cr", "envelope" or "other"


class DamagedLines:
    """The scanner's handling of lines that are not what a trace file holds."""

    def __init__(self, file: TraceFile) -> None:
        self.file = file
        self.long: LongLine | None = None  # a line longer than a block, being skipped

    def long_line(self, pos: int, data: bytes) -> int:
        """`data` (a whole block at `pos`) is part of one line longer than a block: the bytes
        consumed (0: wait for more of the file)."""
        if self.long is not None:
            return len(data)  # still inside it
        file = self.file
        if data[:1] == b"V":  # an envelope with a huge metadata line (a deep stack): read it whole
            line = self._whole_line(pos)
            if line is None:
                return 0  # its newline is not written yet
            if line:
                file.scan_block(line, len(line), pos)
                return len(line)
        what = ("payload" if data[:1] == b"\t" else "envelope" if data[:1] == b"V"
                else "nul" if not data.strip(b"\0") else "cr" if data.count(b"\r") > 1 else "other")
        if what != "payload":
            file.record_ends.close_open(pos)
            file.record_ends.cut(pos)  # not part of the record before
        self.long = LongLine(pos, what)
        return len(data)

    def _whole_line(self, pos: int) -> bytes | None:
        """The line at `pos` with its newline, if shorter than ENVELOPE_LINE_MAX; None if it is not
        written to its end yet; b"" if it is too long."""
        file = self.file
        end = min(file.size, pos + ENVELOPE_LINE_MAX)
        at = pos
        while at < end:
            chunk = file.read_range(at, min(end, at + (8 << 20)))
            nl = chunk.find(b"\n")
            if nl >= 0:
                return file.read_range(pos, at + nl + 1)
            at += len(chunk)
        if end == pos + ENVELOPE_LINE_MAX:
            return b""
        if file.at_end:
            return file.read_range(pos, end) + b"\n"
        return None

    def end_long_line(self, end: int) -> None:
        """The long line ends at `end` (its newline, or the end of the file): say what it was; a
        record glued at its end (after a run of NULs, a torn write) is read."""
        long, self.long = self.long, None
        if long is None or long.what == "payload":
            return
        file = self.file
        window_start = max(long.start, end - (1 << 20))
        window = file.read_range(window_start, end)
        glued = ENVELOPE_START.search(window, 1 if window_start == long.start else 0)
        bad_end = window_start + glued.start() if glued else end
        size = size_text(bad_end - long.start)
        message = {
            "nul": f"{size} of NUL bytes where records belong (a hole: the file was cut short or "
                   "written out of order)",
            "cr": f"{size} of lines that end in CR only: tlview reads lines that end in LF "
                  "(convert with: tr '\\r' '\\n')",
            "envelope": f"a record whose metadata line is {size}, over the "
                        f"{size_text(ENVELOPE_LINE_MAX)} tlview reads (skipped)",
        }.get(long.what, f"a line of {size} that is not a trace record (skipped)")
        file.sink.on_problem(file, long.start, "long line", message)
        if glued:
            line = window[glued.start():] + b"\n"
            file.scan_block(line, len(line), bad_end)

    def check_region_start(self, buf: bytes, pos: int, cut: int, base: int) -> int:
        """Report the non-payload lines at `pos` (garbage between records, NUL bytes, blank lines),
        reading any record glued inside them; return where the next envelope or payload line is."""
        while pos < cut and buf[pos] != 86 and buf[pos] != 9:
            eol = buf.find(b"\n", pos, cut)
            if buf[pos:eol].strip(b"\r "):
                self.rescue(buf, pos, eol, base)
            pos = eol + 1
        return pos

    def rescue(self, buf: bytes, pos: int, eol: int, base: int, glued: re.Match | None = None) -> None:
        """buf[pos:eol] is a line that is not a record: report it, but read a record glued inside it
        (after a torn write or a run of NULs), reporting only the bytes before that record."""
        q = self.report_bad_line(buf, pos, eol, base, glued)
        if q is not None:
            j = buf.find(b"] {", q, eol)
            self.file.scan_envelope(buf, q, eol, j, buf.find(HAS_PAYLOAD, j, eol), base)

    def report_bad_line(self, buf: bytes, pos: int, eol: int, base: int,
                         glued: re.Match | None = None) -> int | None:
        """Report the bad bytes at buf[pos:...]; where a record glued after them starts, or None."""
        glued = glued or ENVELOPE_START.search(buf, pos + 1, eol)
        bad_end = glued.start() if glued else eol
        file = self.file
        file.record_ends.close_open(base + pos)
        file.record_ends.cut(base + pos)  # not part of the record before
        file.sink.on_problem(file, base + pos, "bad line", bad_line_message(buf, pos, bad_end, glued is not None))
        return glued.start() if glued else None


def bad_line_message(buf: bytes, start: int, end: int, before_record: bool = False) -> str:
    line = bytes(buf[start:min(end, start + 60)])
    then = "; the record glued after them is read" if before_record else ""
    if line.strip(b" \r") == b"\xef\xbb\xbf":  # an editor's, or a file joined on with cat
        return f"a UTF-8 byte-order mark in mid-file{then.replace('them', 'it')}"
    if not line.strip(b"\0"):
        return f"{end - start:,} NUL bytes (a torn or corrupted write){then}"
    if b"\x00" in line:
        return f"a line with NUL bytes (a torn or corrupted write){then}"
    if before_record:
        return f"{size_text(end - start)} of a torn record: {line.decode('utf-8', 'replace')!r}{then}"
    return f"not a trace record: {line.decode('utf-8', 'replace')!r}"
