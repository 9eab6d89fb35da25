"""Following a running job: new files in the folder, appends, and files truncated or replaced.

watchfiles only wakes the follower up; a stat poll (1 s by default) backs it, because inotify
misses writes made by other hosts on NFS. The follower never opens anything for writing and takes
no lock: it only lists, stats and reads.

A folder or file that cannot be looked at for a while (chmod 000 and back) is not gone: only a
path that is not there (no such file) ends what was followed. Until it can be read again nothing
is dropped, and then following goes on where it was.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from dataclasses import dataclass, field

from tlview.source.discover import (
    TEXT,
    TRACE,
    FoundLog,
    NoLogsError,
    compressed_hint,
    folder_files,
    rank_from_name,
    sniff,
)

FIRST_BYTES = 512  # what identifies a file's content: a re-run rewrites its first line


@dataclass
class FollowChanges:
    new_logs: list[FoundLog] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # paths truncated, rewritten or rotated
    removed: list[str] = field(default_factory=list)  # paths deleted or renamed away
    retired: list[str] = field(default_factory=list)  # new names of followed files renamed away
    waiting: str = ""  # why nothing can be read yet


def first_bytes_digest(path: str, size: int = FIRST_BYTES) -> str | None:
    """The md5 of the file's first `size` bytes; None when it cannot be read now."""
    try:
        with open(path, "rb") as f:
            return hashlib.md5(f.read(size)).hexdigest()
    except OSError:
        return None


def _gone(exc: OSError) -> bool:
    """A look at a path failed because it is not there, not because it may not be looked at now
    (a folder chmod 000: its files are still there, and will be readable again)."""
    return not isinstance(exc, PermissionError)


@dataclass
class _Known:
    log: FoundLog
    inode: tuple
    head: str  # digest of the first bytes once there were FIRST_BYTES of them
    head_len: int
    seen: tuple = ()  # (size, mtime) when the head was last checked: unchanged, not read again


class Follower:
    """Finds the logs under `path` as they appear and tells when one was replaced."""

    def __init__(self, path: str, force_polling: bool = False, poll_interval: float = 1.0,
                 kind: str | None = None, name: str | None = None) -> None:
        self.path = path
        self.name = name  # what to call the followed path when not by it (stdin's temp copy)
        self.force_polling = force_polling
        self.poll_interval = poll_interval
        self.kind = kind  # the kind, when known before the content (stdin's, from its first line)
        self.known: dict[str, _Known] = {}
        # Files that were followed and then replaced or renamed away (`mv x.log x.log.1`): a run
        # that is over, not a new log, when they show up under another name.
        # (Their first bytes too: a deleted file's inode is soon another file's.)
        self.retired: dict[tuple, _Known] = {}
        self.retired_paths: set[str] = set()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None

    # ---- discovery -------------------------------------------------------------------------

    def sync(self, sizes: dict[str, int]) -> FollowChanges:
        """New logs, and logs replaced since the last call (`sizes`: bytes indexed per path)."""
        changes = FollowChanges()
        try:
            top = os.stat(self.path)
        except OSError as exc:
            if not _gone(exc):
                changes.waiting = self._unreadable(exc)
                return changes
            for path, gone in list(self.known.items()):  # the folder was deleted: its runs too
                self._retire(gone)
                changes.removed.append(path)
            self.known.clear()
            changes.waiting = f"waiting for {self.name or self.path} to appear"
            return changes
        if stat.S_ISDIR(top.st_mode):
            try:
                candidates = folder_files(self.path)
            except NoLogsError as exc:  # it cannot be listed now: its files are not gone for that
                changes.waiting = f"{exc}: following again once it can be"
                return changes
        else:
            candidates = [self.path]
        present = set(candidates)
        for path in [p for p, entry in self.known.items() if self._is_gone(p, entry, present)]:
            self._retire(self.known.pop(path))
            changes.removed.append(path)
        for path in candidates:
            known = self.known.get(path)
            if known is None:
                if path in self.retired_paths:
                    continue
                if self._is_retired(path):
                    self.retired_paths.add(path)
                    changes.retired.append(path)
                    continue
                log = self._recognize(path)
                if log is not None:
                    self.known[path] = self._identify(log)
                    changes.new_logs.append(log)
                continue
            if self._was_replaced(known, sizes.get(path, 0)):
                self._retire(known)
                changes.replaced.append(path)
                self.known[path] = self._identify(known.log)
        if not self.known:
            changes.waiting = (f"waiting for trace files in {self.path}" if os.path.isdir(self.path)
                               else f"waiting for {self.name or self.path} to hold a log line")
            if hint := self._compressed_hint(candidates):
                changes.waiting += f" ({hint})"
        return changes

    def _unreadable(self, exc: OSError) -> str:
        return f"{self.name or self.path}: cannot be read ({exc.strerror}): following again once it can be"

    def _is_gone(self, path: str, known: _Known, present: set[str]) -> bool:
        """Deleted or renamed away. A file the listing did not show but that is still there (its
        subfolder cannot be listed now), or that cannot be looked at now, is not."""
        try:
            st = os.stat(path)
        except OSError as exc:
            return _gone(exc)
        return path not in present and (not known.inode or (st.st_dev, st.st_ino) != known.inode)

    def _compressed_hint(self, candidates: list[str]) -> str:
        """What to do with the compressed logs of a folder that holds nothing else (told once)."""
        for path in candidates[:50]:
            try:
                with open(path, "rb") as f:
                    head = f.read(8)
            except OSError:
                continue
            if hint := compressed_hint(path, head):
                return hint
        return ""

    def _retire(self, known: _Known) -> None:
        if known.inode:
            self.retired[known.inode] = known

    def _is_retired(self, path: str) -> bool:
        """`path` is a followed file under a new name: its inode and first bytes."""
        known = self.retired.get(_inode(path)) if self.retired else None
        return known is not None and first_bytes_digest(path, known.head_len) == known.head

    def _recognize(self, path: str) -> FoundLog | None:
        try:
            if os.path.getsize(path) == 0:
                return None  # a file just created: its first record is still to come
        except OSError:
            return None
        kind = self.kind or sniff(path)
        if kind not in (TRACE, TEXT):
            return None
        return FoundLog(path, kind, rank_from_name(path), self.name if path == self.path else None)

    def _identify(self, log: FoundLog) -> _Known:
        inode: tuple[int, ...]
        try:
            st = os.stat(log.path)
            inode = (st.st_dev, st.st_ino)
            size = st.st_size
        except OSError:
            inode, size = (), 0
        head_len = min(size, FIRST_BYTES)
        head = first_bytes_digest(log.path, head_len)
        if head is None:  # not readable now: its first bytes are taken when they can be
            head_len, head = 0, ""
        return _Known(log, inode, head, head_len)

    def _was_replaced(self, known: _Known, indexed: int) -> bool:
        """lnav's checks: a new inode, a file smaller than what was read, other first bytes."""
        try:
            st = os.stat(known.log.path)
        except OSError:
            return False  # gone: sync() drops it
        if known.inode and (st.st_dev, st.st_ino) != known.inode:
            return True
        if st.st_size < indexed:
            return True
        if (st.st_size, st.st_mtime_ns) == known.seen:
            return False  # untouched since the last look: its first bytes were not read again
        if known.head_len:
            head = first_bytes_digest(known.log.path, known.head_len)
            if head is None:
                return False  # not readable now (chmod 000): looked at again when it is
            if head != known.head:
                return True
        if known.head_len < FIRST_BYTES and st.st_size > known.head_len:
            head_len = min(st.st_size, FIRST_BYTES)  # the first line grew: remember more
            head = first_bytes_digest(known.log.path, head_len)
            if head is None:
                return False
            known.head_len, known.head = head_len, head
        known.seen = (st.st_size, st.st_mtime_ns)
        return False

    # ---- waking up ---------------------------------------------------------------------------

    def start(self) -> None:
        if self._watcher is None and not self.force_polling:
            self._watcher = threading.Thread(target=self._watch, name="tlview-watch", daemon=True)
            self._watcher.start()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def wait(self) -> None:
        """Until a file changed (watchfiles) or the poll interval passed. The poll looks at every
        file (about 20 µs each): a folder of thousands is polled less often, so that an idle follow
        stays idle (watchfiles still wakes it at once)."""
        self._wake.wait(max(self.poll_interval, len(self.known) / 1000))
        self._wake.clear()

    def _watch(self) -> None:
        try:
            from watchfiles import watch
        except ImportError:
            return
        while not self._stop.is_set():
            target = self._existing_ancestor()
            try:
                for _changes in watch(target, stop_event=self._stop, debounce=20, step=2,
                                      rust_timeout=500, yield_on_timeout=False,
                                      recursive=target == os.path.abspath(self.path)):
                    self._wake.set()
                    if target != self.path and os.path.exists(self.path):
                        break  # the followed path appeared: watch it instead
            except (OSError, RuntimeError):
                self._stop.wait(self.poll_interval)  # e.g. inotify limits: the poll carries on

    def _existing_ancestor(self) -> str:
        path = os.path.abspath(self.path)
        while not os.path.exists(path):
            parent = os.path.dirname(path)
            if parent == path:
                break
            path = parent
        return path


def _inode(path: str) -> tuple:
    try:
        st = os.stat(path)
    except OSError:
        return ()
    return (st.st_dev, st.st_ino)


def check_followable(path: str) -> None:
    """A path to follow may not exist yet; its parent must be a folder we can read."""
    if path == "-" or os.path.exists(path):
        if path != "-" and not os.access(path, os.R_OK):
            raise NoLogsError(f"{path}: not readable (permission denied)")
        return
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent) and not os.path.isdir(os.path.dirname(parent)):
        raise NoLogsError(f"{path}: neither it nor its parent folder exists")
