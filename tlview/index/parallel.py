"""The processes that index parts of a big trace file: each indexes a byte range (cut at envelope
lines) into its own Index, exports it as plain data, and the parent merges the parts in file order
(`Index.merge_part`). When to use them is indexing.py's decision.

- `index_split` (headless, no other thread): this process reads the first range while forked
  children (one per core, up to 8) read the others; a fork starts at once. `index_files_split`
  does it for a folder of files (ranks), shared out a file at a time as the processes go: this
  process from the first file on, the children from the last back (`sharing.shared_out`).
- `index_with_pool` (the TUI, threads running, so no fork): a forkserver/spawn pool indexes ranges
  while the UI thread stays free; the first range is indexed here for a fast first screen.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from typing import TYPE_CHECKING, NamedTuple

from tlview.index.index import Index
from tlview.index.pool import (
    POOLS,
    below_the_explorer,
    new_pool,
    start_forkserver,
    stdio_with_file_descriptors,
    stop_workers,
)
from tlview.index.work_sharing import Share, shared_out, shared_out_pool
from tlview.source.trace_file import TraceFile

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor  # (imported when a pool is made: pool.new_pool)


def can_fork() -> bool:
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def index_range(path: str, start: int, end: int | None, verify_md5: bool,
                rank_from_name: int | None, process: tuple[int | None, str]) -> dict:
    """Index [start, end) of a trace file (start at an envelope line) into a part to merge;
    `process` is the file's (pid, start time), from its first envelope."""
    index = Index(verify_md5=verify_md5)
    source = TraceFile(path, index, verify_md5=verify_md5, rank_from_name=rank_from_name)
    source.pid, source.started = process
    index.sources.append(source)
    source.scanned_to = start
    source.feed(limit=None if end is None else end - start)
    if end is not None:
        source.close_open_at(end)  # the next range's first envelope ends its last record
    source.close()
    return index.export_part(source)


def index_range_packed(*args) -> bytes:
    """index_range's part, pickled in the pool's process: the pool's result thread then gets
    bytes, and the explorer unpickles the part when keys let it (unpacked). Unpickled by that
    thread, a part of 10,000 compile ids held the GIL for 11-105 ms at moments of its own
    choosing, and a key pressed then waited. Its compile ids come in pieces of PACKED_NODES,
    each unpickled on its own: the whole part at once held it for 11-18 ms."""
    part = index_range(*args)
    nodes = part.pop("nodes")
    pieces = [pickle.dumps(nodes[at:at + PACKED_NODES], protocol=pickle.HIGHEST_PROTOCOL)
              for at in range(0, len(nodes), PACKED_NODES)]
    return pickle.dumps((part, pieces), protocol=pickle.HIGHEST_PROTOCOL)


PACKED_NODES = 128


def unpacked(packed: bytes, defer) -> dict:
    """index_range_packed's part, `defer()` called before each piece (it returns when this
    thread may go on: a key pressed comes first). The pieces share no object with the rest: a
    compile id's group and id are looked up by value when merged."""
    part, pieces = pickle.loads(packed)
    nodes: list = []
    for piece in pieces:
        defer()
        nodes += pickle.loads(piece)
    part["nodes"] = nodes
    return part


def _index_later_range(source: TraceFile, start: int, end: int | None) -> dict:
    return index_range(source.path, start, end, source.verify_md5, source.rank_from_name,
                       (source.pid, source.started))


FIRST_RANGE = 8 << 20  # bytes of a big file this process reads (early_part's child, or here) while the pool reads on
POOL_WORKERS = 2  # the explorer's pool: the explorer keeps a core (fewer with TLVIEW_PROCESSES)


def processes() -> int:
    """How many processes share a headless index: one per core, up to 8 (the parent merges the
    parts one after another; past 8 merging, not scanning, takes the time). TLVIEW_PROCESSES
    overrides it (tests, benchmarks)."""
    wanted = os.environ.get("TLVIEW_PROCESSES")
    if wanted and wanted.isdigit():
        return max(1, int(wanted))
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(2, min(cores, 8))


def sharing():
    """How work is shared out: shared_out (forked children and pipes of our own), or with
    TLVIEW_SHARING=pool the standard library's ProcessPoolExecutor (bench/parallel.py compares)."""
    return shared_out_pool if os.environ.get("TLVIEW_SHARING") == "pool" else shared_out


def next_envelope(source: TraceFile, at: int) -> int | None:
    """The first envelope line start at or after `at` (reading 64 KiB at a time)."""
    while at < source.size:
        chunk = source.read_range(max(at - 1, 0), min(source.size, at + (64 << 10)))
        found = chunk.find(b"\nV")
        if found >= 0:
            return max(at - 1, 0) + found + 1
        if len(chunk) <= 1:
            return None
        at += len(chunk) - 1
    return None


def index_split(index: Index, source: TraceFile) -> None:
    """Index `source` (not read yet) over several processes, in about equal byte ranges cut at
    envelope lines, one a process: this process reads the first, forked children the others;
    their parts are merged in file order. (Cut finer and shared out as taken, as a folder's files
    are, ranges cost more than they saved: each starts a child's caches cold, 4 MB ones cost it
    15% more, and 100 MB took 10 ms longer.)"""
    count = processes()
    source.peek_process()
    starts = [0]
    for i in range(1, count):
        at = next_envelope(source, source.size * i // count)
        if at is not None and at > starts[-1]:
            starts.append(at)
    if len(starts) < 2:
        return

    def here(piece: tuple[int, int]) -> None:
        end = piece[1]
        index.feed(source, limit=None if end >= source.size else end - source.scanned_to)

    def part(piece: tuple[int, int]) -> dict:
        start, end = piece
        return _index_later_range(source, start, None if end >= source.size else end)

    share = Share(list(zip(starts, [*starts[1:], source.size])), queued=1)
    parts, _ = sharing()(count - 1, share, here, part)
    if share.first == len(starts):
        return
    at = starts[share.first]  # where their ranges start
    source.close_open_at(at)  # their first range's first envelope ends our last record
    for start, end in sorted(parts):
        if start != at:
            break
        index.merge_part(source, parts.pop((start, end)))
        at = end
    if at < source.size:  # a child failed: the rest is read here, now (before other files: their order)
        index.feed(source)
        raise OSError("an indexing child process failed")


def index_files_split(index: Index, sources: list[TraceFile]) -> int:
    """Index several trace files not read yet (a folder of ranks) over several processes, shared
    out a file at a time (`sharing.shared_out`), merged in file order as one process would. The files a failed
    child took are read here. Returns how many files were read here."""
    count = min(processes(), len(sources))
    if count < 2:
        return 0

    def here(piece: tuple[int, int]) -> None:
        index.feed(sources[piece[0]])

    def part(piece: tuple[int, int]) -> dict:
        source = sources[piece[0]]
        return index_range(source.path, 0, None, source.verify_md5, source.rank_from_name, (None, ""))

    share = Share([(number, number + 1) for number in range(len(sources))], queued=2)
    parts, failed = sharing()(count - 1, share, here, part)
    read_here = 0
    for number in range(share.first, len(sources)):  # the children's files, in file order
        got = parts.pop((number, number + 1), None)
        if got is not None:
            index.merge_part(sources[number], got)
        else:
            index.feed(sources[number])
            read_here += 1
    if failed or read_here:
        files = f"{read_here:,} file{'' if read_here == 1 else 's'}"
        index.notes.append(f"{files}: indexed in one process (an indexing child process failed)")
    return share.first + read_here


def index_with_pool(index: Index, source: TraceFile, progress, cancelled, workers: int | None = None,
                    first: int = FIRST_RANGE, step: int = 24 << 20, defer=lambda: None,
                    take_first=lambda end: False) -> None:
    """Index a file not read yet: the first range here (the first screen comes from it), the
    rest in a process pool, started first so that its processes start while this one reads.
    `defer()` returns when this thread may go on merging a part. Parts of `step` bytes: at 48 MB
    one worker sat idle while the other read the last part, and that part's merge came last.
    `take_first(end)` merges the range [0, end) if it was indexed already (early_part.take).
    """
    source.peek_process()
    asked_early(source.path)  # (what start_early asked for, once it has)
    asked = _ASKED.pop(source.path, None)
    if asked is None or asked.key != _asked_key(source, first, step):
        if asked is not None and asked.pool is not None:  # asked for otherwise: not these parts
            POOLS.discard(asked.pool)
            stop_workers(asked.pool)
            asked.pool.shutdown(wait=False, cancel_futures=True)
        asked = _ask_pool(source, workers, first, step)
    pool, starts, futures = asked.pool, asked.starts, asked.futures
    from concurrent.futures import TimeoutError as FuturesTimeout

    if pool is None or not starts:  # (one part: no pool was made)
        take_first(None) or index.feed(source, limit=None)
        progress()
        return
    take_first(starts[0]) or index.feed(source, limit=starts[0])
    progress()
    finished = False
    try:
        for start, future in zip(starts, futures):
            while True:  # waiting in short steps: quitting must not wait for a part to be done
                if cancelled():
                    return
                try:
                    part = future.result(timeout=0.05)  # a failed part raises: the caller
                    break                              # reads the rest here
                except FuturesTimeout:
                    continue
            defer()
            part = unpacked(part, defer)
            defer()
            with index.lock:
                source.close_open_at(start)
                index.merge_part(source, part, pause=defer)
            progress()
        finished = True
    finally:
        POOLS.discard(pool)
        if not finished:
            stop_workers(pool)
        pool.shutdown(wait=False, cancel_futures=True)


class AskedParts(NamedTuple):
    """A file's parts asked of a pool: how they were cut and read (`key`), and their futures."""

    key: tuple
    pool: ProcessPoolExecutor | None  # None when the file is one part (read where it is asked)
    starts: list  # the byte offset of each part after the first range
    futures: list


_ASKED: dict[str, AskedParts] = {}  # parts asked for before the index wants them, by path


def _asked_key(source: TraceFile, first: int, step: int) -> tuple:
    return (source.verify_md5, source.rank_from_name, source.pid, source.started, first, step)


def _ask_pool(source: TraceFile, workers: int | None, first: int, step: int) -> AskedParts:
    """The pool, and its parts asked for: the ranges after the first (indexed where it is asked)."""
    source.peek_process()
    start = next_envelope(source, first)
    key = _asked_key(source, first, step)
    if start is None:
        return AskedParts(key, None, [], [])
    starts = [start]
    while (following := next_envelope(source, starts[-1] + step)) is not None:
        starts.append(following)
    ends = starts[1:] + [None]
    pool = new_pool(workers or min(POOL_WORKERS, processes()))
    with stdio_with_file_descriptors():  # (its processes start at the first submits)
        futures = [pool.submit(index_range_packed, source.path, a, b, source.verify_md5,
                               source.rank_from_name, (source.pid, source.started))
                   for a, b in zip(starts, ends)]
    below_the_explorer(pool)
    return AskedParts(key, pool, starts, futures)


_ASKING: dict[str, threading.Thread] = {}  # start_early's threads, by path


def start_early(source: TraceFile, workers: int | None = None, first: int = FIRST_RANGE, step: int = 24 << 20) -> None:
    """Ask the pool for a big file's parts now, while the explorer starts (imports Textual,
    draws its first screen: 0.5 s): the parts of 10,000 compile ids were asked for only once
    it had, and the tree was whole 2.0-2.3 s after the start. `index_with_pool` takes them,
    if the file is indexed the same way; a pool nobody takes is stopped at exit (stop_pools).

    Asked in a thread of its own: the forkserver's start and the pool's first submit wait for the
    forkserver's imports (76-83 ms), and the explorer went on to import only after them."""
    def ask() -> None:
        try:
            start_forkserver()
            _ASKED[source.path] = _ask_pool(source, workers, first, step)
        except Exception:  # noqa: BLE001, S110 - no processes here, or tlview ended meanwhile (a signal):
            pass  # the indexing asks again, and says what fails; nothing is printed over the screen

    asking = _ASKING[source.path] = threading.Thread(target=ask, name="tlview-pool-start", daemon=True)
    asking.start()


def asked_early(path: str) -> AskedParts | None:
    """The parts start_early asked for `path`, once it has asked (None: none were)."""
    if (asking := _ASKING.pop(path, None)) is not None:
        asking.join()
    return _ASKED.get(path)
