"""`tlview --follow -`: TORCH_LOGS text piped in (`python train.py 2>&1 | tlview --follow -`).

As toolong does: the pipe is copied into a temporary file that is followed like any log, and
the keyboard is read from the terminal (/dev/tty) instead of the pipe. The file is unlinked as
soon as it is open and read through /proc/self/fd (Linux): whatever ends tlview (a signal, a
crash), nothing is left behind in the temp folder.
"""

from __future__ import annotations

import os
import tempfile
import threading

from tlview.source.discover import NoLogsError


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
        threading.Thread(target=self._copy, name="tlview-stdin", daemon=True).start()

    def _copy(self) -> None:
        try:
            while chunk := os.read(self.pipe, 1 << 16):
                self._out.write(chunk)
                self._out.flush()
        finally:
            self._out.close()
            os.close(self.pipe)
            self.done.set()

    def remove(self) -> None:
        if not self.path.startswith("/proc/"):
            try:
                os.unlink(self.path)
            except OSError:
                pass
        os.close(self._keep)
