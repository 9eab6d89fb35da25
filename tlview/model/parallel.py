"""Index a big trace file in several processes: each indexes a byte range (cut at envelope lines)
into a compact state, merged into the index in file order.

Why: the work per record is Python (about 2 µs each, 250,000-400,000 records per GB), so one core
cannot index a GB within a few times `grep`'s time, and in the TUI an indexing thread would hold
the GIL the UI needs. A range's state is sent whole (one pickle), not record by record.

- Headless (`Index.open`, no other thread): this process reads the first half while a forked
  child reads the second (`index_split`); a fork starts at once.
- TUI (threads running, so no fork): a process pool started with forkserver/spawn indexes ranges
  while the UI thread stays free; the first range is indexed here for a fast first screen
  (`index_with_pool`).
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
from array import array
from contextlib import contextmanager

from tlview.model.compile_node import CompileNode
from tlview.source.trace_file import TraceFile

MIN_PARALLEL_BYTES = 96 << 20  # below this, fork and merge cost more than they save


def can_split(source: TraceFile) -> bool:
    return (hasattr(os, "fork") and sys.platform.startswith("linux") and source.scanned_to == 0
            and source.size >= MIN_PARALLEL_BYTES)


def find_split(source: TraceFile) -> int | None:
    """An envelope line start near the middle of the file."""
    middle = source.size * 9 // 20  # the child also pickles its part: give it a little less
    chunk = source.read_range(middle, min(source.size, middle + (4 << 20)))
    at = chunk.find(b"\nV")
    return None if at < 0 else middle + at + 1


def index_split(index, source: TraceFile) -> bool:
    """Index `source` (not read yet) with a child process for its second half. False: not done."""
    split = find_split(source)
    if split is None:
        return False
    read_fd, write_fd = os.pipe()
    gc.freeze()  # the child then touches no page of ours to collect garbage (fewer copy-on-write)
    pid = os.fork()
    if pid == 0:  # the child: index [split, end) and send the state back
        status = 1
        try:
            os.close(read_fd)
            state = _index_second_half(index, source, split)
            with os.fdopen(write_fd, "wb") as out:
                pickle.dump(state, out, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        except BaseException:  # noqa: BLE001 - reported, and the parent indexes the rest itself
            import traceback

            traceback.print_exc()
        finally:
            os._exit(status)
    gc.unfreeze()
    os.close(write_fd)
    try:
        source.feed(limit=split)
        source.close_open_at(split)
        with os.fdopen(read_fd, "rb") as inp:
            try:
                state = pickle.load(inp)
            except (EOFError, pickle.UnpicklingError):
                state = None
    finally:
        _, status = os.waitpid(pid, 0)
    if status != 0 or state is None:
        # The first half is indexed; the caller's next refresh() reads the rest in this process.
        raise OSError("the indexing child process failed")
    _merge(index, source, state)
    return True


def _index_second_half(parent_index, source: TraceFile, split: int) -> dict:
    return index_range(source.path, split, None, source.verify_md5, source.rank_from_name)


def index_range(path: str, start: int, end: int | None, verify_md5: bool,
                rank_from_name: int | None) -> dict:
    """Index [start, end) of a trace file (start at an envelope line) into a state to merge."""
    from tlview.model.index import Index, paused_gc

    index = Index(verify_md5=verify_md5)
    child = TraceFile(path, index, verify_md5=verify_md5, rank_from_name=rank_from_name)
    index.sources.append(child)
    child.scanned_to = start
    with paused_gc():
        child.feed(limit=None if end is None else end - start)
    child.close()
    open_record = child.detach_open()
    for node in index.nodes.values():
        node.compile = None
        node.stack_source = None
        for item in node.artifacts + node.graph_breaks + node.dynamic:
            item.source = None
    problems = [(p.offset, p.kind, p.message) for p in index.problems]
    for item in index.unattached:
        item.source = None
    return {
        "kind_names": child.kind_names,
        "offsets": child.offsets.tobytes(), "kinds": child.kinds.tobytes(),
        "contexts": child.contexts.tobytes(), "context_table": index._contexts,
        "strings": child.strings, "md5_ok": child.md5_ok, "md5_bad": child.md5_bad,
        "scanned_to": child.scanned_to, "rank": child.rank if child._rank_from_record else None,
        "open": open_record, "nodes": list(index.nodes.values()), "problems": problems,
        "unattached": index.unattached, "unknown_kinds": index.unknown_kinds,
        "cache_events": index.cache_events, "pytorch_version": index.pytorch_version,
    }


def next_envelope(source: TraceFile, at: int) -> int | None:
    """The first envelope line start at or after `at` (reading 64 KiB at a time)."""
    while at < source.size:
        chunk = source.read_range(max(at - 1, 0), min(source.size, at + (64 << 10)))
        found = chunk.find(b"\nV")
        if found >= 0:
            return max(at - 1, 0) + found + 1
        at += len(chunk) - 1
    return None


def index_with_pool(index, source: TraceFile, progress, cancelled, workers: int = 2,
                    first: int = 8 << 20, step: int = 48 << 20) -> None:
    """Index a file not read yet: the first range here (the first screen comes from it), the
    rest in a process pool."""
    start = next_envelope(source, first)
    index.feed(source, limit=start)
    progress()
    if start is None:
        return
    # Imported only now: the first screen needs the first range, not the pool.
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    starts = [start]
    while (following := next_envelope(source, starts[-1] + step)) is not None:
        starts.append(following)
    ends = starts[1:] + [None]
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    with _stdio_with_file_descriptors():
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))
        futures = [pool.submit(index_range, source.path, a, b, source.verify_md5,
                               source.rank_from_name) for a, b in zip(starts, ends)]
    with pool:
        for start, future in zip(starts, futures):
            if cancelled():
                for other in futures:
                    other.cancel()
                return
            state = future.result()
            with index.lock:
                source.close_open_at(start)
                _merge(index, source, state)
            index.generation += 1
            progress()


@contextmanager
def _stdio_with_file_descriptors():
    """multiprocessing starts its helper processes with sys.stderr's file descriptor; Textual
    replaces sys.stdout/sys.stderr with objects that have none while an app runs."""
    saved = sys.stdout, sys.stderr
    for name in ("stdout", "stderr"):
        try:
            usable = getattr(sys, name).fileno() >= 0  # Textual's capture answers -1
        except (AttributeError, OSError, ValueError):
            usable = False
        if not usable:
            setattr(sys, name, getattr(sys, f"__{name}__") or open(os.devnull, "w"))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def _merge(index, source: TraceFile, state: dict) -> None:
    base_rec = len(source.offsets)
    kind_map = [source.kind_code(name) for name in state["kind_names"]]
    context_map = [index.context_code(source, rank, cid) for rank, cid in state["context_table"]]
    kinds = array("H")
    kinds.frombytes(state["kinds"])
    contexts = array("i")
    contexts.frombytes(state["contexts"])
    offsets = array("q")
    offsets.frombytes(state["offsets"])
    source.offsets.extend(offsets)
    source.kinds.extend(array("H", [kind_map[k] for k in kinds]))
    source.contexts.extend(array("i", [context_map[c] for c in contexts]))
    source.strings.update(state["strings"])
    source.md5_ok += state["md5_ok"]
    source.md5_bad += state["md5_bad"]
    if state["rank"] is not None and not source._rank_from_record:
        source.rank = state["rank"]
        source._rank_from_record = True
    for child_node in state["nodes"]:
        node = index.node_for(child_node.rank, child_node.cid)
        _rebase(child_node, source, base_rec)
        node.merge_from(child_node)
    for item in state["unattached"]:
        item.source, item.rec = source, item.rec + base_rec
        index.unattached.append(item)
    for offset, kind, message in state["problems"]:
        index.add_problem(source, offset, kind, message)
    for kind, count in state["unknown_kinds"].items():
        index.unknown_kinds[kind] = index.unknown_kinds.get(kind, 0) + count
    for name, count in state["cache_events"].items():
        index.cache_events[name] = index.cache_events.get(name, 0) + count
    index.pytorch_version = index.pytorch_version or state["pytorch_version"]
    source.scanned_to = state["scanned_to"]
    source.attach_open(state["open"], base_rec, context_map)


def _rebase(node: CompileNode, source: TraceFile, base_rec: int) -> None:
    if node.stack is not None:
        node.stack_source = source
        node.start_rec += base_rec
    for item in node.artifacts + node.graph_breaks + node.dynamic:
        item.source = source
        item.rec += base_rec
