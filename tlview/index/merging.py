"""The parts of a trace file indexed in other processes (parallel.py), merged into the index in
file order, so that the merged index is the one-process index: the same records, compile ids and
problems, in the same order.

A part knows only its own byte range. What needs the whole file is told here: a compile id that
started again (its first dynamo_start was in an earlier part), a string id defined again, a
problem told once a file (an odd compile id) that an earlier part told already. Such a problem
takes its place among the part's own problems by its offset, where one process tells it.

These functions work on the index through `PartsOfIndex`, what they use of it declared once.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from tlview.domain.compile_id import CompileId
from tlview.domain.compile_node import Compile, CompileNode
from tlview.domain.group import Group
from tlview.domain.input_problems import InputProblem
from tlview.index.handlers import started_again

if TYPE_CHECKING:
    from tlview.source.trace_file import TraceFile

PAUSE_EVERY = 128  # nodes merged (about 2 ms) between two calls of a merge's pause()

# (offset, kind, message) of a problem only the whole file tells, told at its offset
LateProblem = tuple[int, str, str]


class PartsOfIndex(Protocol):
    """What exporting and merging a part use of the index (Index is one)."""

    lock: threading.RLock
    problems: list[InputProblem]
    nodes: dict[tuple[Group, CompileId], CompileNode]
    outside: dict[Group, CompileNode]
    contexts: list[tuple[Group, CompileId | None]]
    told: set[tuple[Any, str]]
    unknown_kinds: dict[str, int]
    cache_events: dict[str, int]
    pytorch_version: str | None

    def code_for(self, group: Group, cid: CompileId | None, source: Any = None) -> int: ...

    def node_of_record(self, source: TraceFile, rec: int) -> CompileNode | None: ...

    def compile_node(self, group: Group, cid: CompileId, in_trace: bool, source: Any = None) -> CompileNode: ...

    def outside_node(self, group: Group, source: Any = None) -> CompileNode: ...

    def add_problem(self, source: Any, offset: int, kind: str, message: str, node: Any = ...) -> None: ...

    def tell_once(self, source: Any, offset: int, kind: str, message: str, node: Any = ...) -> None: ...

    def note_recompile_reasons(self, node: CompileNode) -> None: ...

    def touch(self, compile_: Compile | None) -> None: ...


def export_part(index: PartsOfIndex, source: TraceFile) -> dict:
    """What `index` (of one byte range of `source`) holds, as plain data to send."""
    problems = [(p.offset, p.kind, p.message, _before_its_record(index, source, p)) for p in index.problems]
    for node in [*index.nodes.values(), *index.outside.values()]:
        node.compile = node.source = None
        node.problems = []  # sent as (offset, kind, message) below: an InputProblem holds its file
        # What TORCH_LOGS text says (nothing: a part is of a trace file), not merged: an empty
        # one a node was a third of a part's pickling, each way (at 10,000 compile ids).
        node.text = None  # type: ignore[assignment]  # dropped for the trip; merging never reads it
        if node.start is not None:
            node.start = (None, node.start[1])
        if node.last_start is not None:  # (set with `start`)
            node.last_start = (None, node.last_start[1])
        if node.described_at is not None:
            node.described_at = (None, node.described_at[1])
        for item in node.artifacts + node.graph_breaks + node.dynamic:
            item.source = None
        node.export_failures = [(failure, (None, rec)) for failure, (_, rec) in node.export_failures]
    return {
        "file": source.export_part(), "contexts": index.contexts,
        "nodes": list(index.nodes.values()), "outside": list(index.outside.values()),
        "problems": problems,
        "told": {message for _, message in index.told},
        "unknown_kinds": index.unknown_kinds,
        "cache_events": index.cache_events, "pytorch_version": index.pytorch_version,
    }


def merge_part(index: PartsOfIndex, source: TraceFile, part: dict, pause: Callable[[], None] = lambda: None) -> None:
    """Append a part of `source` indexed in another process, in file order. `pause()` is called
    between nodes now and then: it returns when this thread may go on (a key pressed in the
    explorer comes first)."""
    with index.lock:
        context_map = []  # (each new compile id's node made here: 15 ms for a part of 1,000)
        for i, (group, cid) in enumerate(part["contexts"]):
            if i % PAUSE_EVERY == PAUSE_EVERY - 1:
                pause()
            context_map.append(index.code_for(group, cid, source))
        late: list[LateProblem] = []  # what only the whole file tells
        # a file's rank mismatch is told once (one process tells it at its first such record;
        # each later range of a big file told it again)
        rank_told = source.rank_from_record and source.rank_from_name is not None
        base = source.absorb_part(part["file"], context_map, late)
        for i, later in enumerate(part["nodes"]):
            if i % PAUSE_EVERY == PAUSE_EVERY - 1:
                pause()
            _merge_node(index, index.compile_node(later.group, later.cid, True, source), later, source, base, late)
        for later in part["outside"]:
            _merge_node(index, index.outside_node(later.group, source), later, source, base, late)
        late.sort(key=lambda problem: problem[0])
        told = part["told"]
        for offset, kind, message, before_its_record in part["problems"]:
            if kind == "rank mismatch" and rank_told:
                continue
            while late and late[0][0] < offset:  # one process told it before this one
                index.add_problem(source, *late.pop(0))
            node = _node_before(index, source, offset) if before_its_record else ...
            if message in told:
                index.tell_once(source, offset, kind, message, node)
            else:
                index.add_problem(source, offset, kind, message, node)
        for problem in late:
            index.add_problem(source, *problem)
        for kind, count in part["unknown_kinds"].items():
            index.unknown_kinds[kind] = index.unknown_kinds.get(kind, 0) + count
        for name, count in part["cache_events"].items():
            index.cache_events[name] = index.cache_events.get(name, 0) + count
        index.pytorch_version = part["pytorch_version"] or index.pytorch_version  # the last told, as in one process


def _before_its_record(index: PartsOfIndex, source: TraceFile, problem: InputProblem) -> bool:
    """Whether `problem` was told before the record at its offset was kept (a rank mismatch,
    told as the file's first record is read): one process gave it the compile id of the record
    before, and the merge must too, not that of the record at its offset."""
    offsets = source.offsets
    at, before = bisect_right(offsets, problem.offset) - 1, bisect_left(offsets, problem.offset) - 1
    if at == before:  # no record at its very offset
        return False
    node_at = index.node_of_record(source, at)
    return problem.node is not node_at and problem.node is _node_before(index, source, problem.offset)


def _node_before(index: PartsOfIndex, source: TraceFile, offset: int) -> CompileNode | None:
    """The compile id of the last record before `offset` (None before the first)."""
    rec = bisect_left(source.offsets, offset) - 1
    return index.node_of_record(source, rec) if rec >= 0 else None


def _merge_node(index: PartsOfIndex, node: CompileNode, later: CompileNode, source: TraceFile, base: int,
                late: list[LateProblem]) -> None:
    """Fold in what a later part of the same file said of this compile id."""
    for item in later.artifacts + later.graph_breaks + later.dynamic:
        item.source, item.rec = source, item.rec + base
    if later.described_at is not None:
        node.described_at = (source, later.described_at[1] + base)
    if later.start is not None:
        start = (source, later.start[1] + base)
        if node.start is None or node.is_outside:  # the first dynamo_start names it (handlers.py)
            node.frame, node.start = later.frame, start
        elif message := started_again(node, *start):
            late.append((source.offsets[start[1]], "repeated compile id", message))
    if later.last_start is not None:  # (set with `start`)
        node.last_start = (source, later.last_start[1] + base)
    node.artifacts += later.artifacts
    if node.is_outside:
        node.metrics = later.metrics or node.metrics
    elif node.metrics is None:  # the first compilation_metrics is kept, as in one process
        node.metrics = later.metrics
    node.bwd_metrics = later.bwd_metrics or node.bwd_metrics
    node.graph_breaks += later.graph_breaks
    if later.recompile_reasons:
        node.recompile_reasons = later.recompile_reasons
        index.note_recompile_reasons(node)
    node.dynamic += later.dynamic
    if later.perf is not None:  # (a trace's part tells host syncs: its unbacked symbols)
        node.perf = later.perf if node.perf is None else node.perf.joined(later.perf)
    node.errors += later.errors
    node.export_failures += [(failure, (source, rec + base)) for failure, (_, rec) in later.export_failures]
    index.touch(node.compile)
