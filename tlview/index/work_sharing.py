"""Pieces of work (the files of a folder, byte ranges of a file) shared out between this process
and forked children as they go: this process takes pieces from the front and does each where it
is (into its index, in order), the children take them from the back and send each piece's part
through a pipe as soon as it is made. They meet where the work ends; the caller merges the
children's parts in order. Only where no other thread runs (a fork copies one thread)."""

from __future__ import annotations

import gc
import os
import pickle
import select
import signal

from tlview.index.pool import set_up_indexing_child


def shared_out(children: int, share, here, part) -> tuple[dict, bool]:
    """Pieces of work (files, or byte ranges of one file), each a (start, end) pair, shared out
    as the processes go: this process takes them from the front
    (`share.take_first()`) and does each (`here(piece)`); `children` forked children take them
    from the back (`share.take_last()`) and send each one's part (`part(piece)`) as soon as it
    is made. They meet where the work ends. Returns (their parts by piece, whether one failed).

    Equal shares cut up front left this process idle while a child finished (0.05-0.29 s at
    1,024 rank files): one core of a host runs slower for a while, and a child pickled its share
    only at its end.

    Kept over the standard library's ProcessPoolExecutor (shared_out_pool, the same pieces shared
    the same way) because it pays: bench/parallel.py on a 16-core box, best of 3, 2026-11-27,
    1,024 real rank files 1.369 s here vs 2.085 s pooled at 2 cores (taskset; 1.52x), 0.816 vs
    1.017 s at 16 (1.25x); one 100 MB file 0.467 vs 0.418 s at 2 cores (0.90x), 0.215 vs 0.265 s
    at 16 (1.23x). The pool's result thread unpickles each part under the GIL while this process
    scans, and its workers cannot take pieces from the back as this process takes the front."""
    gc.freeze()  # the children then touch no page of ours to collect garbage (fewer copy-on-write)
    started: list[PartsChild] = []
    try:
        for _ in range(children):
            started.append(PartsChild.start(part, started))
    finally:
        gc.unfreeze()
    parts: dict[tuple[int, int], dict] = {}
    try:
        for child in started:
            child.give(share)
        while (mine := share.take_first()) is not None:
            here(mine)
            for child in started:
                child.receive(parts)
                child.give(share)
        for child in started:
            child.stop()
        for child in started:
            child.receive_to_end(parts)
        waited = [child.wait() for child in started]  # (every child: any() of a generator stops at the first)
        failed = any(waited)
    except BaseException:
        for child in started:  # Ctrl-C, or a failure here: no child may outlive us
            child.kill()
        raise
    return parts, failed


class Share:
    """Pieces of work, (start, end) pairs in order: this process takes them from the front, the
    children from the back, `queued` at a time each."""

    def __init__(self, pieces: list[tuple[int, int]], queued: int) -> None:
        self.pieces = pieces
        self.queued = queued
        self.first = 0  # pieces [0, first) are this process's
        self.last = len(pieces)  # pieces [last, len) are the children's

    def take_first(self) -> tuple[int, int] | None:
        if self.first >= self.last:
            return None
        self.first += 1
        return self.pieces[self.first - 1]

    def take_last(self) -> tuple[int, int] | None:
        if self.first >= self.last:
            return None
        self.last -= 1
        return self.pieces[self.last]


class PartsChild:
    """A forked child that makes the parts of the pieces it is given (start and end, 8 bytes
    each, through a pipe), and sends each part back (its length, 8 bytes, then the pickled
    piece and part)."""

    def __init__(self, pid: int, tasks: int, results: int) -> None:
        self.pid = pid
        self.tasks: int | None = tasks  # where its next pieces are written (closed: no more)
        self.results: int | None = results  # where its parts come from (not blocking)
        self.given: set[tuple[int, int]] = set()  # given, not sent back yet
        self.buffer = bytearray()
        self.ended = False  # its results pipe is closed
        self.reaped = False  # waited for (its pid may be another process's now)

    @classmethod
    def start(cls, part, others: list[PartsChild]) -> PartsChild:
        """`others`: the children started before, whose pipes this one must not hold open (their
        tasks pipe would never end)."""
        tasks_read, tasks_write = os.pipe()
        results_read, results_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                set_up_indexing_child()
                for fd in [tasks_write, results_read, *(fd for o in others for fd in (o.tasks, o.results))]:
                    if fd is not None:  # (closed there: not held here either)
                        os.close(fd)
                _make_given_parts(part, tasks_read, results_write)
                status = 0
            except BaseException:  # noqa: BLE001, S110 - the parent reads the pieces it gave here
                pass
            finally:
                os._exit(status)
        os.close(tasks_read)
        os.close(results_write)
        os.set_blocking(results_read, False)
        return cls(pid, tasks_write, results_read)

    def give(self, share) -> None:
        while self.tasks is not None and len(self.given) < share.queued:
            piece = share.take_last()
            if piece is None:
                return
            self.given.add(piece)  # (sent back or not, it is accounted for)
            try:
                os.write(self.tasks, piece[0].to_bytes(8, "little") + piece[1].to_bytes(8, "little"))
            except OSError:  # it ended: the piece is read here
                self.stop()
                return

    def stop(self) -> None:
        """No more pieces: it ends once it has sent the ones it has."""
        if self.tasks is not None:
            os.close(self.tasks)
            self.tasks = None

    def receive(self, parts: dict) -> None:
        """The parts it has sent, waiting only for the rest of one it is sending (a part of
        megabytes would otherwise come 64 KiB, one pipe's worth, per piece done here)."""
        results = self.results
        while not self.ended and results is not None:
            try:
                data = os.read(results, 1 << 16)
            except BlockingIOError:
                if not self.buffer:
                    break
                select.select([results], [], [])
                continue
            if not data:
                self.ended = True
            self.buffer += data
            while len(self.buffer) >= 8:
                size = int.from_bytes(self.buffer[:8], "little")
                if len(self.buffer) < 8 + size:
                    break
                piece, part = pickle.loads(self.buffer[8:8 + size])
                del self.buffer[:8 + size]
                if piece in self.given:
                    self.given.discard(piece)
                    parts[piece] = part

    def receive_to_end(self, parts: dict) -> None:
        while not self.ended and self.results is not None:
            select.select([self.results], [], [])
            self.receive(parts)

    def wait(self) -> bool:
        """Whether it failed."""
        self._close()
        _, status = os.waitpid(self.pid, 0)
        self.reaped = True
        return status != 0 or bool(self.given)

    def kill(self) -> None:
        self._close()
        if not self.reaped:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except OSError:
                pass
            self.reaped = True

    def _close(self) -> None:
        self.stop()
        if self.results is not None:
            os.close(self.results)
            self.results = None


def _make_given_parts(part, tasks: int, results: int) -> None:
    """A child's work: for each piece read from `tasks`, its part written to `results`."""
    with os.fdopen(results, "wb") as out:
        while len(given := os.read(tasks, 16)) == 16:
            piece = int.from_bytes(given[:8], "little"), int.from_bytes(given[8:], "little")
            data = pickle.dumps((piece, part(piece)), protocol=pickle.HIGHEST_PROTOCOL)
            out.write(len(data).to_bytes(8, "little"))
            out.write(data)
            out.flush()


# ---- the standard library's pool, for the benchmark that keeps shared_out (bench/parallel.py) -------

_POOL_PART = None  # the part function of the pool being run (its forked workers inherit it)


def _pool_part(piece: tuple[int, int]) -> tuple[tuple[int, int], dict]:
    assert _POOL_PART is not None
    return piece, _POOL_PART(piece)


def shared_out_pool(children: int, share, here, part) -> tuple[dict, bool]:
    """shared_out's work shared the same way (this process from the front, the others from the
    back, `share.queued` pieces each outstanding) through concurrent.futures' ProcessPoolExecutor
    with forked workers: the standard library's mechanism, measured against shared_out by
    bench/parallel.py (TLVIEW_SHARING=pool selects it)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    global _POOL_PART
    _POOL_PART = part
    parts: dict[tuple[int, int], dict] = {}
    failed = False
    gc.freeze()
    pool = ProcessPoolExecutor(children, mp_context=multiprocessing.get_context("fork"),
                               initializer=set_up_indexing_child)
    pending: dict = {}
    try:
        def give() -> None:
            while len(pending) < children * share.queued and (piece := share.take_last()) is not None:
                pending[pool.submit(_pool_part, piece)] = piece

        def collect(block: bool) -> None:
            nonlocal failed
            done, _ = wait(list(pending), timeout=None if block else 0, return_when=FIRST_COMPLETED)
            for future in done:
                pending.pop(future)
                try:
                    piece, got = future.result()
                    parts[piece] = got
                except Exception:  # noqa: BLE001 - its piece is read here, as shared_out's are
                    failed = True

        give()
        gc.unfreeze()
        while (mine := share.take_first()) is not None:
            here(mine)
            collect(block=False)
            give()
        while pending:
            collect(block=True)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _POOL_PART = None
    return parts, failed
