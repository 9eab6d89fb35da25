"""The index: every source's records folded into compile nodes, compiles and frames, per rank.

One index serves the headless outputs and the TUI. It is fed incrementally (`refresh()` reads what
each file gained since the last call), so following a running job is the same code as opening a
finished one. It keeps offsets and small summaries; payloads are read when shown.
"""

from __future__ import annotations

import gc
import os
import threading
from contextlib import contextmanager
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Iterator

from tlview.model import handlers as H
from tlview.model.compile_id import CompileId
from tlview.model.compile_node import Artifact, Compile, CompileNode, TextRecord
from tlview.source.discover import TRACE, FoundLog, find_logs
from tlview.source.text_log import TextLog
from tlview.source.trace_file import TraceFile


@contextmanager
def paused_gc():
    """Indexing allocates many small containers and frees none: the cyclic GC would scan the
    growing index over and over (measured: 20% of the time of a 1 GB index)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(eq=False)
class Problem:
    """Something in a file that could not be read as it should: shown with file and line."""

    source: object
    offset: int
    kind: str  # bad line, bad json, md5 mismatch, unknown string, long line, ...
    message: str
    node: CompileNode | None = None
    _line: int | None = None

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def line(self) -> int:
        if self._line is None:
            try:
                self._line = self.source.line_number(self.offset)
            except OSError:
                self._line = 0
        return self._line

    def describe(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.message}"


@dataclass
class Totals:
    compile_ids: int = 0
    frames: int = 0
    compiles: int = 0
    recompiles: int = 0
    graph_breaks: int = 0
    compiles_with_graph_break: int = 0
    errors: int = 0
    restarts: int = 0
    records: int = 0
    problems: int = 0
    md5_bad: int = 0
    cache_events: dict = field(default_factory=dict)


class Index:
    """Records from trace files and text logs, folded into a frame tree of compile ids."""

    def __init__(self, verify_md5: bool = False) -> None:
        self.verify_md5 = verify_md5
        self.sources: list[TraceFile | TextLog] = []
        self.nodes: dict[tuple[int | None, CompileId], CompileNode] = {}
        self.compiles: dict[tuple[int | None, CompileId], Compile] = {}
        self.frames: dict[tuple[int | None, tuple], list[Compile]] = {}
        self.problems: list[Problem] = []
        self.unattached: list[Artifact] = []  # records with no compile id (torch_version, ...)
        self.unknown_kinds: dict[str, int] = {}
        self.cache_events: dict[str, int] = {}
        self.notes: list[str] = []
        self.pytorch_version: str | None = None
        self.generation = 0  # bumped whenever something new was indexed
        self.lock = threading.RLock()  # the UI reads while a worker feeds
        self._contexts: list[tuple[int | None, CompileId | None]] = []
        self._context_nodes: list[CompileNode | None] = []
        self._context_codes: dict[tuple, int] = {}
        self._paths: set[str] = set()

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str, latest: bool = False, verify_md5: bool = False,
             parallel: bool = True) -> "Index":
        """Index everything under `path` now (headless use). Raises NoLogsError.

        With `parallel`, a big trace file is split between this process and a forked child
        (model/parallel.py); only safe where no other thread runs.
        """
        index = cls(verify_md5=verify_md5)
        found, notes = find_logs(path, latest=latest)
        index.notes.extend(notes)
        with paused_gc():
            for log in found:
                source = index.add_log(log)
                if parallel and isinstance(source, TraceFile):
                    index._index_split(source)
            index.refresh()
            index.finish()
        return index

    def _index_split(self, source: TraceFile) -> None:
        from tlview.model import parallel

        try:
            source.size = os.path.getsize(source.path)
            if parallel.can_split(source):
                with self.lock:
                    parallel.index_split(self, source)
        except OSError as exc:
            self.notes.append(f"{source.path}: indexed in one process ({exc})")

    def add_log(self, log: FoundLog) -> TraceFile | TextLog | None:
        if log.path in self._paths:
            return None
        self._paths.add(log.path)
        if log.kind == TRACE:
            source = TraceFile(log.path, self, verify_md5=self.verify_md5,
                               rank_from_name=log.rank_from_name)
        else:
            source = TextLog(log.path, self)
        self.sources.append(source)
        return source

    def refresh(self, limit: int | None = None) -> int:
        """Index what every source gained since the last call; return the bytes read."""
        return sum(self.feed(source, limit) for source in list(self.sources))

    def feed(self, source: TraceFile | TextLog, limit: int | None = None) -> int:
        """Index what one source gained (up to `limit` bytes); return the bytes read."""
        try:
            with self.lock, paused_gc():
                read = source.feed(limit)
        except OSError as exc:
            self.add_problem(source, source.scanned_to, "unreadable", str(exc))
            return 0
        if read:
            self.generation += 1
        return read

    def finish(self) -> None:
        """No more data will come (not following): close the last open records."""
        with self.lock:
            for source in self.sources:
                try:
                    source.finish()
                except OSError as exc:
                    self.add_problem(source, source.scanned_to, "unreadable", str(exc))
            self._check_string_ids()
            self.generation += 1

    def close(self) -> None:
        for source in self.sources:
            source.close()

    @property
    def bytes_total(self) -> int:
        return sum(s.size for s in self.sources)

    @property
    def bytes_read(self) -> int:
        return sum(s.scanned_to for s in self.sources)

    # ---- the sink the scanners call --------------------------------------------------------

    def context_code(self, source, rank: int | None, cid: CompileId | None) -> int:
        key = (rank, cid)
        code = self._context_codes.get(key)
        if code is None:
            code = len(self._contexts)
            self._context_codes[key] = code
            self._contexts.append(key)
            self._context_nodes.append(self._node(rank, cid, in_trace=True) if cid else None)
        return code

    lazy_kinds = H.LAZY_KINDS
    silent_kinds = H.SILENT_KINDS

    def on_lazy_record(self, source: TraceFile, rec: int, kind: str, ctx: int) -> None:
        handler = H.LAZY_HANDLERS.get(kind)
        if handler is not None:
            handler(self, self._context_nodes[ctx], source, rec, kind)

    def on_record(self, source: TraceFile, rec: int, kind: str, meta: dict, ctx: int) -> bool:
        node = self._context_nodes[ctx]
        handler = H.HANDLERS.get(kind)
        if handler is None:
            lazy = H.LAZY_HANDLERS.get(kind)
            if lazy is not None:  # its context could not be read from the tail: parsed after all
                lazy(self, node, source, rec, kind)
                return False
            if kind in H.SILENT_KINDS:
                return False
            handler = H.on_generic
        return handler(self, node, source, rec, kind, meta) is H.WANTS_PAYLOAD

    def on_payload(self, source: TraceFile, rec: int, kind: str, meta: dict, ctx: int,
                   payload: bytes | None) -> None:
        handler = H.PAYLOAD_HANDLERS.get(H.payload_handler_key(kind, meta))
        if handler is not None and payload is not None:
            handler(self, self._context_nodes[ctx], source, rec, kind, meta,
                    payload.decode("utf-8", "replace"))

    def on_text_record(self, log: TextLog, rec: int, rank, cid, channel, level, lines) -> None:
        node = self._node(rank, cid, in_trace=False) if cid is not None else None
        record = TextRecord(log, rec, channel, level, lines[0] if lines else "")
        if node is not None:
            node.text_records.append(record)
            if level == "E":
                node.errors.append("\n".join(lines))
        handler = H.TEXT_HANDLERS.get(channel)
        if handler is not None:
            handler(self, node, record, lines)

    def on_problem(self, source, offset: int, kind: str, message: str) -> None:
        self.add_problem(source, offset, kind, message)

    def add_problem(self, source, offset: int, kind: str, message: str) -> None:
        node = None
        if isinstance(source, TraceFile) and source.offsets:
            rec = bisect_right(source.offsets, offset) - 1
            if rec >= 0:
                node = self._context_nodes[source.contexts[rec]]
        problem = Problem(source, offset, kind, message, node)
        self.problems.append(problem)
        if node is not None:
            node.problems.append(problem)

    def count_cache_event(self, name: str) -> None:
        self.cache_events[name] = self.cache_events.get(name, 0) + 1

    def add_unattached(self, name: str, source, rec: int, artifact: Artifact | None = None) -> None:
        self.unattached.append(artifact or Artifact(name, name, source, rec))

    # ---- the frame tree ------------------------------------------------------------------

    def _node(self, rank: int | None, cid: CompileId, in_trace: bool) -> CompileNode:
        key = (rank, cid)
        node = self.nodes.get(key)
        if node is None:
            # Built whole before it is published: the UI thread reads these dicts meanwhile.
            node = CompileNode(rank, cid, len(self.nodes), in_trace=in_trace)
            ckey = (rank, cid.compile_key)
            compile_ = self.compiles.get(ckey) or Compile(rank, cid.compile_key)
            node.compile = compile_
            compile_.attempts = sorted([*compile_.attempts, node], key=lambda n: n.cid.attempt)
            if ckey not in self.compiles:
                self.compiles[ckey] = compile_
                self.frames.setdefault((rank, cid.frame_key), []).append(compile_)
            self.nodes[key] = node
        elif in_trace:
            node.in_trace = True
        return node

    def node_for(self, rank: int | None, cid: CompileId) -> CompileNode:
        """The node of (rank, cid) from a trace, made if new."""
        return self._node(rank, cid, in_trace=True)

    def node(self, rank: int | None, cid: CompileId | str) -> CompileNode | None:
        if isinstance(cid, str):
            cid = CompileId.parse(cid)
        return self.nodes.get((rank, cid))

    def ranks(self) -> list[int | None]:
        return sorted({rank for rank, _ in list(self.nodes)}, key=lambda r: -1 if r is None else r)

    def iter_nodes(self, rank=..., kinds: set[str] | None = None) -> Iterator[CompileNode]:
        """Compile nodes in order of first appearance, optionally of one rank."""
        # A snapshot (one C-level copy under the GIL): the indexing thread may add nodes meanwhile.
        for (node_rank, _), node in list(self.nodes.items()):
            if rank is not ... and node_rank != rank:
                continue
            yield node

    def failed_guard_target(self, node: CompileNode, reason) -> CompileNode | None:
        """The compile node whose guard failed, named by a recompile reason."""
        if reason.failed_id is None:
            return None
        return self.nodes.get((node.rank, reason.failed_id))

    # ---- totals --------------------------------------------------------------------------

    def totals(self, rank=...) -> Totals:
        """The counts of corpus/README.md, summed over ranks (or for one rank)."""
        t = Totals()
        nodes = [n for n in self.iter_nodes(rank) if n.cid.frame is not None or n.cid.autograd is not None]
        t.compile_ids = len(nodes)
        t.frames = len({(n.rank, n.cid.frame) for n in nodes if n.cid.frame is not None})
        compiles = {(n.rank, n.cid.compile_key): n.compile for n in nodes}
        t.compiles = len(compiles)
        t.recompiles = sum(1 for _, key in compiles if key.is_recompile)
        for node in nodes:
            t.graph_breaks += len(node.effective_graph_breaks())
            if node.metrics:
                if node.metrics.get("fail_type"):
                    t.errors += 1
                reasons = node.metrics.get("restart_reasons")
                if isinstance(reasons, list):
                    t.restarts += len(reasons)
            elif not node.in_trace:
                t.errors += bool(node.errors)
                t.restarts += len(node.text_restarts)
        t.compiles_with_graph_break = sum(1 for c in compiles.values() if c.has_graph_break)
        sources = self.sources if rank is ... else [s for s in self.sources if getattr(s, "rank", None) == rank]
        t.records = sum(len(s.offsets) for s in sources)
        t.md5_bad = sum(getattr(s, "md5_bad", 0) for s in sources)
        t.problems = len(self.problems)
        t.cache_events = dict(list(self.cache_events.items()))
        return t

    def _check_string_ids(self) -> None:
        """Report stack frames naming string-table ids that no `str` record defined."""
        seen: set = set()
        for node in self.nodes.values():
            source = node.stack_source
            for frame in node.stack or []:
                idx = frame.get("filename")
                if isinstance(idx, int) and source is not None and idx not in source.strings:
                    if (id(source), idx) not in seen:
                        seen.add((id(source), idx))
                        self.add_problem(source, source.offsets[node.start_rec], "unknown string",
                                         f"string-table id {idx} is never defined (shown as unknown)")

    # ---- records of a node (read lazily from the arrays) -----------------------------------

    def records_of(self, node: CompileNode) -> Iterator[tuple[TraceFile, int, str]]:
        for source in self.sources:
            if not isinstance(source, TraceFile):
                continue
            codes = {code for code, n in enumerate(self._context_nodes) if n is node}
            for rec, ctx in enumerate(source.contexts):
                if ctx in codes:
                    yield source, rec, source.kind_names[source.kinds[rec]]

