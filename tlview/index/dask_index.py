"""`--dask ADDRESS`: the trace files indexed on a Dask cluster. A file's index is a pure function
of its bytes (`parallel.index_range`), so the workers index files (a batch of files a task; a big
file cut into ranges at envelope lines) and send back parts; the parts merge here in file order
(`Index.merge_part`), which makes the index the one-process index. The workers read the paths
found here: a filesystem they share with us, and tlview installed.

Dask is imported only here, and only when `--dask` is given (the `dask` extra).
"""

from __future__ import annotations

import os
import threading
from typing import NamedTuple

from tlview.index import gc_pauses, parallel
from tlview.index.index import Index
from tlview.source.trace_file import TraceFile

CONNECT_SECONDS = 5.0  # to reach the scheduler; then a clear error, never a hang
WORKERS_SECONDS = 5.0  # for a scheduler with no worker yet to get one
BATCHES_PER_WORKER = 4  # tasks a worker at least: the last ones finish together
BATCH_BYTES = 32 << 20  # at most this many bytes a task; a bigger file is cut into pieces of this size
INSTALL = "pip install 'tlview[dask]'"  # (cli_args says it too: --help)


class ClusterError(Exception):
    """No cluster to index on (Dask not installed, the scheduler not reached); one line."""


class Piece(NamedTuple):
    """A byte range of a trace file, indexed in one go: a whole file (0, None), or a range of a
    file bigger than a batch, cut at envelope lines."""

    source: TraceFile
    start: int
    end: int | None  # None: to the end of the file

    @property
    def size(self) -> int:
        return (self.source.size if self.end is None else self.end) - self.start

    def task(self) -> tuple:
        """index_range's arguments. A later range needs the file's process (from its first
        envelope: peek_process); a whole file finds it itself."""
        source = self.source
        process = (None, "") if (self.start, self.end) == (0, None) else (source.pid, source.started)
        return source.path, self.start, self.end, source.verify_md5, source.rank_from_name, process

    def read_here(self, index: Index) -> None:
        """Index the piece in this process instead (the pieces before it are merged)."""
        index.feed(self.source, limit=None if self.end is None else self.end - self.start)
        if self.end is not None:
            self.source.close_open_at(self.end)  # as index_range does: the next piece's first envelope


def index_batch(tasks: list[tuple]) -> list[dict]:
    """On a worker: each piece (index_range's arguments) indexed, as a part."""
    with gc_pauses.paused():  # (indexing frees nothing; a worker lives on)
        return [parallel.index_range(*task) for task in tasks]


def pieces(source: TraceFile) -> list[Piece]:
    """A file as pieces of about BATCH_BYTES: the whole file unless it is bigger."""
    if source.size <= BATCH_BYTES:
        return [Piece(source, 0, None)]
    source.peek_process()
    starts = [0]
    while (following := parallel.next_envelope(source, starts[-1] + BATCH_BYTES)) is not None:
        starts.append(following)
    return [Piece(source, a, b) for a, b in zip(starts, [*starts[1:], None])]


def connect(address: str):
    """A Client of the scheduler at `address`, or ClusterError within CONNECT_SECONDS or so."""
    import socket  # (here: every headless run imports this module for ClusterError; 4.5 ms)

    try:
        from distributed import Client
        from distributed.comm import get_address_host_port, resolve_address
    except ImportError:
        raise ClusterError(f"--dask needs Dask's distributed scheduler: {INSTALL}") from None
    outcome: dict = {}

    def attempt() -> None:
        try:
            resolved = resolve_address(address)  # a bad address made a Client that hung our exit 10 s
            if resolved.startswith("tcp://"):  # nobody listening: said now, not after the timeout
                socket.create_connection(get_address_host_port(resolved), CONNECT_SECONDS).close()
            outcome["client"] = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except Exception as exc:  # noqa: BLE001 - any failure (a bad address, a refusal) is said
            outcome["error"] = exc

    # Client's own timeout covers the connection, not every step after it: a deadline of our own.
    thread = threading.Thread(target=attempt, name="dask-connect", daemon=True)
    thread.start()
    thread.join(CONNECT_SECONDS + 2)
    if "client" in outcome:
        return outcome["client"]
    error = outcome.get("error")
    why = f"{type(error).__name__}: {error}" if error is not None else f"no answer in {CONNECT_SECONDS:g} s"
    raise ClusterError(f"--dask {address}: cannot reach the Dask scheduler ({why})")


def batches(parts: list[Piece], workers: int) -> list[list[Piece]]:
    """The pieces in file order, cut into batches of about equal bytes: at least
    BATCHES_PER_WORKER a worker (small rank files are not a task each), BATCH_BYTES at most."""
    total = sum(piece.size for piece in parts)
    wanted = max(1, min(BATCH_BYTES, total // (workers * BATCHES_PER_WORKER)))
    cut: list[list[Piece]] = []
    taken = wanted
    for piece in parts:
        if taken >= wanted:
            cut.append([])
            taken = 0
        cut[-1].append(piece)
        taken += piece.size
    return cut


def index_on_cluster(index: Index, address: str) -> None:
    """Index `index`'s trace files not read yet on the cluster at `address`, merged in file order.
    A batch that fails there (a worker that cannot read the path) is read here, in its turn, and
    a note says so. Other sources (TORCH_LOGS text) are left to be read here."""
    sources = [s for s in index.sources if isinstance(s, TraceFile) and s.scanned_to == 0]
    for source in sources:
        source.size = os.path.getsize(source.path)
    client = connect(address)
    try:
        if not sources:
            return
        workers = _workers(client, address)
        cut = batches([piece for source in sources for piece in pieces(source)], workers)
        futures = client.map(index_batch, [[piece.task() for piece in batch] for batch in cut], pure=False)
        _merge_as_completed(index, cut, futures, client.loop)
    finally:
        client.close()


def _workers(client, address: str) -> int:
    try:
        client.wait_for_workers(1, timeout=WORKERS_SECONDS)
    except Exception as exc:  # noqa: BLE001 - a TimeoutError in most versions; a lost scheduler too
        raise ClusterError(f"--dask {address}: the scheduler has no worker "
                           f"({type(exc).__name__}: {exc})") from None
    return max(1, len(client.scheduler_info().get("workers", {})))


def _merge_as_completed(index: Index, cut: list[list[Piece]], futures: list, loop) -> None:
    """Merge each batch's parts once every batch before it is merged (file order), while the
    cluster indexes the batches after it."""
    from distributed import as_completed

    turn_of = {future.key: turn for turn, future in enumerate(futures)}
    arrived: dict[int, object] = {}
    turn = 0
    for future in as_completed(futures, loop=loop):  # (the loop: our client is not the default)
        arrived[turn_of[future.key]] = future
        while turn in arrived:
            _merge_batch(index, cut[turn], arrived.pop(turn))
            turn += 1


def _merge_batch(index: Index, batch: list[Piece], future) -> None:
    try:
        parts = future.result()
    except Exception as exc:  # noqa: BLE001 - the pieces are read here instead
        index.notes.append(f"{len(batch)} piece(s) from {batch[0].source.path}: read here, not on the "
                           f"cluster ({type(exc).__name__}: {exc})")
        for piece in batch:
            piece.read_here(index)
        return
    finally:
        future.release()  # the worker may forget the part
    for piece, part in zip(batch, parts):
        index.merge_part(piece.source, part)
