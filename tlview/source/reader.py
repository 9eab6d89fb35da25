"""The shared incremental reader of trace files and TORCH_LOGS text: a file read in blocks as it grows.

`feed()` reads what was appended since the last call, hands each block of complete lines to
`scan_block`, and holds a partial last line back until its newline arrives; `finish()` takes that
last line when the file is no longer written. Subclasses say what the lines mean.

A plain base class (TraceFile and TextLog extend it), not a mixin: it reads only its own attributes,
and asks its subclass only through the hooks at its end (`scan_block`, `long_line`, `after_feed`,
`end_of_input`, `report_problem`).

Files are read with `os.pread`, never mapped: a file truncated under a mapping kills the reader
with SIGBUS, and a job re-run into the same folder truncates its files.

A file whose lines end in a bare CR (old Mac line ends; some tools write them), told by its first
64 KiB (a CR, no LF), is read with every CR turned into an LF as it is read: the same length, so
every offset stays true, and the subclasses see lines. The sink is told once a file (a problem at
its first byte). CRLF files are not touched: their CR is dropped where lines are split.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import OrderedDict

from tlview.source.payload import pread_exact

LINE_ENDS_HEAD = 64 << 10  # a file's first bytes, which say whether its lines end in CR only
CR_TO_LF = bytes.maketrans(b"\r", b"\n")
CR_ONLY = "the file's lines end in CR only (old Mac line ends, no LF): each CR is read as a line end"


def cr_only(head: bytes, whole: bool = False) -> bool | None:
    """Whether lines end in a bare CR, from a file's (or a stream's) first bytes: a CR and no LF.
    None while it cannot be told: a CR that is the last byte may be half of a CRLF still being
    written (`whole`: no more bytes will come)."""
    if b"\n" in head:
        return False
    cr = head.find(b"\r")
    if cr >= 0 and (cr < len(head) - 1 or whole):
        return True
    return False if whole or len(head) >= LINE_ENDS_HEAD else None


class OpenFiles:
    """The descriptors of the files being read, at most `limit` open at once: a folder of 5,000
    rank files must not exhaust a process's usual 1,024. The least recently read is closed, and
    opened again when needed (and checked to be the same file: a rotated path is another file).
    One lock covers opening, evicting and reading, so a descriptor is never closed mid-read."""

    def __init__(self, limit: int = 256) -> None:
        try:
            import resource

            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            if soft != resource.RLIM_INFINITY:
                limit = max(8, min(limit, soft // 4))  # the rest for the UI, pipes, libraries
        except (ImportError, OSError, ValueError):
            pass
        self.limit = limit
        self.lock = threading.RLock()
        self._open: OrderedDict[IncrementalFile, None] = OrderedDict()

    def descriptor(self, file: IncrementalFile) -> int:
        """`file`'s descriptor (call with the lock held)."""
        if file._fd is not None:
            self._open.move_to_end(file)
            return file._fd
        while len(self._open) >= self.limit:
            self._open.popitem(last=False)[0]._close_fd()
        fd = os.open(file.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        st = os.fstat(fd)
        identity = (st.st_dev, st.st_ino)
        if file.identity is None:
            file.identity = identity
        elif identity != file.identity:
            os.close(fd)
            raise OSError(errno.ESTALE, "the file was replaced since it was read", file.path)
        file._fd = fd
        self._open[file] = None
        return fd

    def forget(self, file: IncrementalFile) -> None:
        with self.lock:
            self._open.pop(file, None)
            file._close_fd()


OPEN_FILES = OpenFiles()


class IncrementalFile:
    """A file read as it grows: its size, how far it was read, and a read-only descriptor."""

    block_size = 1 << 20  # measured: 1 MiB blocks scan 20% faster than 8 MiB (CPU cache)

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = path  # what messages call it (a path shown safely; "stdin" for a pipe's copy)
        self.size = 0
        self.scanned_to = 0  # bytes consumed: always just after a newline
        self.at_end = False  # finishing: no more bytes will come (a last line may lack its newline)
        self.identity: tuple | None = None  # (device, inode) of the file first opened
        self.cr_only: bool | None = None  # lines end in a bare CR (None: not known yet)
        self._cr_told = False
        self._fd: int | None = None

    # ---- the file ----------------------------------------------------------------------------

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def close(self) -> None:
        OPEN_FILES.forget(self)

    def read_range(self, start: int, end: int) -> bytes:
        with OPEN_FILES.lock:
            data = pread_exact(self._descriptor(), start, end)
        return data.translate(CR_TO_LF) if self.cr_only else data

    def _descriptor(self) -> int:
        """The open descriptor (call with the lock held); the line ends told on the first look."""
        fd = OPEN_FILES.descriptor(self)
        if self.cr_only is None:
            self.cr_only = cr_only(os.pread(fd, LINE_ENDS_HEAD, 0), whole=self.at_end)
        return fd

    def line_number(self, offset: int) -> int:
        """1-based line number of a byte offset (counted on demand: the scan does not count lines)."""
        count = 0
        pos = 0
        while pos < offset:
            chunk = self.read_range(pos, min(offset, pos + (4 << 20)))
            if not chunk:
                break
            count += chunk.count(b"\n")
            pos += len(chunk)
        return count + 1

    # ---- reading -----------------------------------------------------------------------------

    def feed(self, limit: int | None = None) -> int:
        """Index what was appended since the last call (up to `limit` bytes); return bytes read."""
        if self._fd is None and self.identity is not None:
            # Not open (many files): a stat says whether there is anything new to open it for.
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == self.identity and st.st_size == self.size:
                return 0
        with OPEN_FILES.lock:
            self.size = os.fstat(self._descriptor()).st_size
        if self.cr_only and not self._cr_told and self.scanned_to == 0:
            # Told by whoever reads the file from its start: a part read in another process
            # (parallel.py) starts further on, so the merged index says it once.
            self._cr_told = True
            self.report_problem(0, "CR line ends", CR_ONLY)
        start = pos = self.scanned_to
        end = self.size if limit is None else min(self.size, start + limit)
        while pos < end:
            with OPEN_FILES.lock:
                data = os.pread(OPEN_FILES.descriptor(self), min(self.block_size, end - pos), pos)
            if not data:
                break
            if self.cr_only:
                data = data.translate(CR_TO_LF)
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) < self.block_size:
                    break  # a partial line: wait for its newline
                used = self.long_line(pos, data)  # one line longer than a block
                if used == 0:
                    break  # a line the subclass reads whole, not written to its end yet
                pos += used
                self.scanned_to = pos
                continue
            self.scan_block(data, cut, pos)
            pos += cut
            self.scanned_to = pos
        self.after_feed()
        return pos - start

    def finish(self) -> None:
        """The file is complete (not followed, or its writer is gone): take a last line that has
        no newline as if it had one, and close the records still open."""
        self.at_end = True
        self.feed()
        if self.size > self.scanned_to:  # less than a block, with no newline (feed took the rest)
            tail = self.read_range(self.scanned_to, self.size)
            if b"\n" not in tail:
                tail += b"\n"
                self.scan_block(tail, len(tail), self.scanned_to)
                self.scanned_to = self.size
        self.end_of_input()

    # ---- what subclasses say -----------------------------------------------------------------

    def scan_block(self, data: bytes, cut: int, base: int) -> None:
        """Index the complete lines data[:cut], which start at file offset `base`."""
        raise NotImplementedError

    def long_line(self, pos: int, data: bytes) -> int:
        """`data` (a whole block at `pos`) is part of one line longer than a block: return the
        bytes consumed (0: wait for more of the file)."""
        return len(data)

    def report_problem(self, offset: int, kind: str, message: str) -> None:
        """A problem with the file at `offset`, for whoever the subclass reports to."""
        raise NotImplementedError

    def after_feed(self) -> None:
        """Called after every feed (a follower may close a record whose payload is whole)."""

    def end_of_input(self) -> None:
        """No more bytes will come: close what is open."""
