"""How an index is filled: the policy, in one place.

A trace file of PARALLEL_BYTES or more is indexed over several processes (the work is Python, about
2 µs a record, and one core cannot do a GB within a few times grep's time; in the TUI an indexing
thread would also hold the GIL the UI needs): forked when no other thread runs (headless), by a
process pool otherwise (the TUI). Everything else is read here in chunks, with progress between.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TypeGuard

from tlview.index import early_part, gc_pauses, parallel
from tlview.index.index import Index, Source
from tlview.source.discover import TRACE, FoundLog, find_logs
from tlview.source.trace_file import TraceFile

PARALLEL_BYTES = 64 << 20  # below this, starting processes and merging costs more than it saves
CHUNK = 16 << 20  # bytes indexed between two progress reports (about 30 ms)
PROGRESS_SECONDS = 0.2  # at most this long between two, over many small files
DEFER_SLEEP = 0.01  # a deferring indexer's sleeps (Indexer.defer)


def prepare_for(log: FoundLog, alone: bool = True) -> None:
    """Before the explorer starts on a log (`alone`: the only one it reads), with no other
    thread running yet: a trace file's first range is indexed by a forked child
    (early_part.start), and a file worth several processes gets their forkserver started, and
    its parts asked for, now, while the explorer starts (in a thread: parallel.start_early)."""
    if log.kind != TRACE:
        return
    try:
        source = Index().add_log(log)  # as the explorer's index will read it
        if not isinstance(source, TraceFile):  # (a fresh index takes every log; a trace's is a TraceFile)
            return
        source.size = os.path.getsize(log.path)
    except OSError:
        return  # (gone meanwhile: the indexing says so)
    if alone or source.size >= PARALLEL_BYTES:  # (several files: see Indexer.run)
        early_part.start(source)
    if source.size >= PARALLEL_BYTES:
        parallel.start_early(source)


def open_index(path: str, latest: bool = False, verify_md5: bool = False,
               parallel_ok: bool = True, cluster: str | None = None) -> Index:
    """Index everything under `path` now (headless use); with `cluster` (a Dask scheduler's
    address) the trace files are indexed there. Raises NoLogsError, dask_index.ClusterError."""
    index = Index(verify_md5=verify_md5)
    found, notes = find_logs(path, latest=latest)
    index.notes.extend(notes)
    for log in found:
        index.add_log(log)
    if cluster is not None:
        from tlview.index.dask_index import index_on_cluster

        with gc_pauses.paused():
            index_on_cluster(index, cluster)
        parallel_ok = False  # Dask's threads run on: no fork (a TORCH_LOGS file is read here)
    Indexer(index, use_fork=parallel_ok, use_pool=False, parallel_ok=parallel_ok).run()
    return index


class Indexer:
    """Drives an index over its sources: big trace files over several processes, the rest here."""

    def __init__(self, index: Index, use_fork: bool, use_pool: bool, parallel_ok: bool = True,
                 progress: Callable[[], None] = lambda: None,
                 cancelled: Callable[[], bool] = lambda: False, freeze: bool = False,
                 defer: Callable[[], bool] = lambda: False) -> None:
        self.index = index
        self.defer = defer  # while true, sleep between files: another thread comes first (a UI)
        self.freeze = freeze  # see gc_pauses.paused
        self.use_fork = use_fork  # only where no other thread runs
        self.use_pool = use_pool
        self.parallel_ok = parallel_ok and (use_fork or use_pool)
        self.progress = progress
        self.cancelled = cancelled
        self._parallel_done: set[str] = set()

    def run(self, finish: bool = True) -> None:
        """Read every source to its end (or until cancelled), then close the last records."""
        with gc_pauses.paused(self.freeze):
            self.read_big_files()
            # (of several read in turn, one first would change their order; only a trace has an early part)
            if len(self.index.sources) == 1 and isinstance(only := self.index.sources[0], TraceFile):
                early_part.take(self.index, only, ..., self.cancelled, self.wait_while_deferred)
            early_part.drop_all()
            while not self.cancelled():
                read = self._read_round()
                self.progress()
                if read == 0:
                    break
            if finish and not self.cancelled():
                self.index.finish()

    def _read_round(self) -> int:
        """Every source up to CHUNK bytes more, telling progress at least every PROGRESS_SECONDS:
        20,000 small rank files are one round, and the explorer showed nothing for 10 s of it.
        Headless (no pool), each source to its end: the order of compile ids is then the same in
        one process as over several (each file whole) or a cluster; read a CHUNK at a time in
        turn, rank files over 16 MB gave --json another order on a machine that cannot fork."""
        read = 0
        told = time.monotonic()
        chunk = CHUNK if self.use_pool else None
        for source in list(self.index.sources):
            self.wait_while_deferred()
            if self.cancelled():
                break
            read += self.index.feed(source, chunk)
            if time.monotonic() - told >= PROGRESS_SECONDS:
                self.progress()
                told = time.monotonic()
        return read

    def wait_while_deferred(self) -> None:
        """Sleep while `defer()` holds (a key was pressed in the explorer a moment ago)."""
        while self.defer() and not self.cancelled():
            time.sleep(DEFER_SLEEP)

    def read_big_files(self) -> None:
        """Index the trace files not read yet that are worth several processes."""
        for source in list(self.index.sources):
            if not self._wants_parallel(source):
                continue
            self._parallel_done.add(source.path)
            try:
                if self.use_fork:
                    parallel.index_split(self.index, source)
                else:
                    parallel.index_with_pool(self.index, source, self.progress, self.cancelled,
                                             defer=self.wait_while_deferred,
                                             take_first=lambda end, source=source: early_part.take(
                                                 self.index, source, end, self.cancelled, self.wait_while_deferred))
            except Exception as exc:  # noqa: BLE001 - no processes allowed, a child failed: go on here
                self.index.notes.append(f"{source.path}: indexed in one process "
                                        f"({type(exc).__name__}: {exc})")
        self._read_many_files()

    def _read_many_files(self) -> None:
        """Headless, a folder of files (ranks) worth several processes together: half each."""
        if not (self.use_fork and self.parallel_ok and parallel.can_fork()):
            return
        unread = []
        for source in self.index.sources:
            if isinstance(source, TraceFile) and source.scanned_to == 0:
                try:
                    source.size = os.path.getsize(source.path)
                except OSError:
                    continue
                unread.append(source)
        if len(unread) < 2 or sum(s.size for s in unread) < PARALLEL_BYTES:
            return
        self._parallel_done.update(s.path for s in unread)
        try:
            parallel.index_files_split(self.index, unread)
        except Exception as exc:  # noqa: BLE001 - a child failed: the next refresh reads the rest here
            self.index.notes.append(f"{len(unread)} files: indexed in one process "
                                    f"({type(exc).__name__}: {exc})")

    def _wants_parallel(self, source: Source) -> TypeGuard[TraceFile]:
        if not (self.parallel_ok and isinstance(source, TraceFile) and source.scanned_to == 0
                and source.path not in self._parallel_done):
            return False
        try:
            source.size = os.path.getsize(source.path)
        except OSError:
            return False
        return source.size >= PARALLEL_BYTES and (not self.use_fork or parallel.can_fork())
