"""The user's own source lines at a problem's place, read from disk when the file is there.

A path comes from the trace, which anyone may have written: only a regular `.py` file, of at most
SOURCE_MAX bytes, outside the system's own folders, is ever opened, and never a device, a pipe or
a socket (it is opened without blocking and checked again once open). Traces copied from another
machine name paths of that machine: `--source-root OLD=NEW` (repeatable) reads OLD's files
under NEW.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

SOURCE_MAX = 4 << 20  # bytes: a bigger file is not read
BEFORE, AFTER = 3, 2  # lines shown around the problem's line
REFUSED = ("/proc/", "/sys/", "/dev/", "/etc/", "/run/", "/boot/", "/var/run/")
_CACHED_FILES = 32


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Lines of a user's file around one of them: (number, text) each, `line` the one marked."""

    path: str  # the file as named in the logs
    read_from: str  # the file read (under a --source-root)
    line: int
    lines: tuple[tuple[int, str], ...]

    def as_dict(self) -> dict:
        return {"path": self.path, "read_from": self.read_from, "line": self.line,
                "lines": [{"number": n, "text": text, "marked": n == self.line} for n, text in self.lines]}


def parse_roots(specs: list[str]) -> list[tuple[str, str]]:
    """`OLD=NEW` each (ValueError for another form)."""
    roots = []
    for spec in specs:
        old, sep, new = spec.partition("=")
        if not sep or not old or not new:
            raise ValueError(f"--source-root wants OLD=NEW (a path prefix of the logs, and where "
                             f"those files are here), not {spec!r}")
        roots.append((old.rstrip("/") or "/", os.path.abspath(new).rstrip("/") or "/"))  # NEW: from here
    return roots


class SourceFiles:
    """The user's files, read once each (the last _CACHED_FILES kept), and the ones not found."""

    def __init__(self, roots: list[tuple[str, str]] | None = None) -> None:
        self.roots = list(roots or [])
        self._files: dict[str, tuple[str, list[str]] | None] = {}
        self.missing: dict[str, str] = {}  # path as named -> why it was not read, in order of asking

    def excerpt(self, path: str, line: int, before: int = BEFORE, after: int = AFTER) -> Excerpt | None:
        """The lines around `line` of `path` (as the logs name it), or None (see `missing`)."""
        found = self._lines(path)
        if found is None or not 1 <= line <= len(found[1]):
            if found is not None:
                self.missing.setdefault(path, f"it has no line {line}")
            return None
        read_from, lines = found
        first, last = max(1, line - before), min(len(lines), line + after)
        return Excerpt(path, read_from, line, tuple((n, lines[n - 1]) for n in range(first, last + 1)))

    def text(self, path: str) -> str | None:
        """The whole of a user's file (as the logs name it), or None (see `missing`)."""
        found = self._lines(path)
        return "\n".join(found[1]) if found is not None else None

    def _lines(self, path: str) -> tuple[str, list[str]] | None:
        if path in self._files:
            found = self._files.pop(path)
            self._files[path] = found  # the newest
            return found
        found = None
        for candidate, within in self._candidates(path):
            text, why = read_user_file(candidate, within)
            if text is not None:
                found = (candidate, text.split("\n"))
                break
            self.missing.setdefault(path, why)
        if found is not None:
            self.missing.pop(path, None)
        self._files[path] = found
        if len(self._files) > _CACHED_FILES:
            del self._files[next(iter(self._files))]
        return found

    def _candidates(self, path: str) -> list[tuple[str, str | None]]:
        """Where to read `path`, and the folder it must stay in: under NEW when a root's OLD
        holds it (the user said the files are there), else where the logs say."""
        remapped: list[tuple[str, str | None]] = [(new + path[len(old):], new) for old, new in self.roots
                    if path == old or path.startswith(old.rstrip("/") + "/")]
        return remapped or [(path, None)]


def read_user_file(path: str, within: str | None = None) -> tuple[str | None, str]:
    """(the text, "") of a user's source file, or (None, why it is not read). `within`: a
    folder (a --source-root's NEW) the file, all links followed, must be inside."""
    if not path.endswith(".py"):
        return None, "not a .py file"
    if not os.path.isabs(path):
        return None, "not a full path"
    real = os.path.realpath(path)
    if real.startswith(REFUSED) or path.startswith(REFUSED):
        return None, "a system folder's file"
    # A link that leads out of the folder it stands in (`model.py` -> ~/.ssh/key) is not the
    # user's source: its target is read only where it stays below that folder.
    if not real.startswith(os.path.realpath(os.path.dirname(path)).rstrip("/") + "/"):
        return None, "a link out of its folder"
    # A link to a folder anywhere on the way (`NEW/job` -> `../outdir`) leads out of the tree
    # the user named just as well: the file read is one below NEW's own real place.
    if within is not None and not real.startswith(os.path.realpath(within).rstrip("/") + "/"):
        return None, "a link out of the --source-root folder"
    try:
        st = os.stat(real)
    except OSError as exc:
        return None, "not found" if isinstance(exc, FileNotFoundError) else os.strerror(exc.errno or 0)
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file"
    if st.st_size > SOURCE_MAX:
        return None, f"bigger than {SOURCE_MAX >> 20} MiB"
    try:
        # (the target checked above, opened without following a link put there since)
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return None, os.strerror(exc.errno or 0)
    try:
        st = os.fstat(fd)  # what was opened (it may have changed since the check)
        if not stat.S_ISREG(st.st_mode) or st.st_size > SOURCE_MAX:
            return None, "not a regular file"
        chunks, size = [], 0
        while size < st.st_size and (chunk := os.read(fd, st.st_size - size)):
            chunks.append(chunk)
            size += len(chunk)
        data = b"".join(chunks)
    except OSError as exc:
        return None, os.strerror(exc.errno or 0)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").replace("\r\n", "\n"), ""
