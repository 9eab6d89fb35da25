"""A trace file's first range, indexed by a child forked as the explorer starts.

Before the explorer imports Textual and starts (0.25-0.35 s of this process's time, on one core),
a forked child indexes the file's first EARLY_BYTES (the whole file below that) on another core,
and hands the part over a pipe. The explorer's indexing merges it (`take`) where it would have
read that range itself: on the corpus's 3 MB trace that was 25-30 ms in front of the first
screen, on a big file the first range the pool leaves to this process (50-55 ms of the 10,000-id
tree's). The part is the one a pool's process makes (parallel.index_range), merged the same way,
so the index is the one-process index.

Forked with no other thread running (`cli` calls `start` before anything starts one): a fork
then is safe, and costs 1-2 ms. One core alone, or no fork: nothing is done here. A child whose
part nobody takes is ended by the indexing (`drop_all`), or as tlview ends: its pipe breaks.
"""

from __future__ import annotations

import os
import select
import signal
import threading
from collections.abc import Callable
from contextlib import suppress
from typing import NamedTuple

from tlview.index.index import Index
from tlview.index.parallel import FIRST_RANGE, index_range_packed, next_envelope, unpacked
from tlview.index.pool import set_up_indexing_child
from tlview.source.trace_file import TraceFile

EARLY_BYTES = FIRST_RANGE  # the range a pool leaves to this process (parallel.index_with_pool)
EARLY_MIN = 1 << 20  # below this, indexing here takes less than the fork and merge save
WAIT_STEP = 0.05  # seconds between two looks at whether the indexing was cancelled


class EarlyPart(NamedTuple):
    key: tuple  # how the file was read: (verify_md5, rank_from_name)
    end: int | None  # where the part ends (None: the file's end, when it was read)
    pid: int
    pipe: int  # the read end


_EARLY: dict[str, EarlyPart] = {}


def start(source: TraceFile) -> None:
    """Fork the child that indexes `source`'s first range, if it is worth one (`source.size`:
    the file's size, as prepare_for found it)."""
    size = source.size or 0
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # (not Linux)
        return
    if (size < EARLY_MIN or cores < 2 or not hasattr(os, "fork") or source.path in _EARLY
            or threading.active_count() > 1):  # (a fork with threads may copy a lock held)
        return
    end = next_envelope(source, EARLY_BYTES) if size > EARLY_BYTES else None
    source.close()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: quiet, it ends however its work ends (1: it failed)
        failed = 1
        try:
            os.close(read)
            set_up_indexing_child()
            data = index_range_packed(source.path, 0, end, source.verify_md5, source.rank_from_name,
                                      (None, None))
            with os.fdopen(write, "wb") as out:
                out.write(data)
            failed = 0
        finally:
            os._exit(failed)
    os.close(write)
    _EARLY[source.path] = EarlyPart((source.verify_md5, source.rank_from_name), end, pid, read)


def take(index: Index, source: TraceFile, end=..., cancelled: Callable[[], bool] = lambda: False,
         defer: Callable[[], None] = lambda: None) -> bool:
    """Merge the early part of `source` into `index` if it is the range [0, end) (any range from
    0 when `end` is ...) read as `source` reads: True when it was. False (nothing merged: the
    caller reads the range) when there is no such part, the file was read otherwise, or the
    child failed."""
    early = _EARLY.pop(source.path, None)
    if early is None:
        return False
    if early.key != (source.verify_md5, source.rank_from_name) or end not in (..., early.end) or source.scanned_to:
        _drop(early)
        return False
    chunks = []
    try:
        while True:
            if cancelled():
                _drop(early)
                return False
            if select.select([early.pipe], [], [], WAIT_STEP)[0]:
                chunk = os.read(early.pipe, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    except OSError:
        _drop(early)
        return False
    os.close(early.pipe)
    _, status = os.waitpid(early.pid, 0)
    if status != 0 or not chunks:
        return False  # it died (a signal, no memory): the caller reads the range
    part = unpacked(b"".join(chunks), defer)
    with index.lock:
        index.merge_part(source, part, pause=defer)
    return True


def _drop(early: EarlyPart) -> None:
    """A part nobody takes: its child ended, its pipe closed."""
    with suppress(OSError):
        os.kill(early.pid, signal.SIGKILL)
    with suppress(OSError):
        os.close(early.pipe)
    with suppress(OSError):
        os.waitpid(early.pid, 0)


def drop_all() -> None:
    """End the children whose parts were not taken (tlview ends, or read the file otherwise)."""
    while _EARLY:
        _drop(_EARLY.popitem()[1])
