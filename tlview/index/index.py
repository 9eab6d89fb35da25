"""The index: every source's records folded into compile nodes, compiles and frames, per rank.

One index serves the headless outputs and the TUI. It is fed incrementally (`refresh()` reads what
each file gained since the last call), so following a running job is the same code as opening a
finished one. It keeps offsets and small summaries; payloads are read when shown.

Both readers feed it through one table of record kinds (registry.py). It keeps a journal of the
compiles that changed, so a view updates what changed instead of rebuilding.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Callable, Iterator

from tlview.domain.artifacts import Artifact, TextRecord
from tlview.domain.compile_id import OUTSIDE, CompileId, odd_fields
from tlview.domain.compile_node import Compile, CompileNode, Frame
from tlview.domain.group import Group, process_starts
from tlview.domain.input_problems import InputProblem
from tlview.index import handlers as H
from tlview.index import merging
from tlview.index.kinds import Reads, Record
from tlview.index.registry import COUNTED_TEXT_LINES, KINDS, LAZY_KINDS, LAZY_TEXT_CHANNELS, SILENT_KINDS
from tlview.source.discover import TRACE, FoundLog
from tlview.source.text_log import TextLines, TextLog
from tlview.source.trace_file import TraceFile

Source = TraceFile | TextLog


JUDGE_PAUSE_EVERY = 64  # compiles judged (about 2 ms) between two calls of judge_changed's pause()
UNTAGGED_KEPT = 10_000  # records of the run's own lines (prints) kept: the Log pane shows the first


class Index:
    """Records from trace files and text logs, folded into a frame tree of compile ids."""

    lazy_kinds = LAZY_KINDS
    silent_kinds = SILENT_KINDS
    lazy_text_channels = LAZY_TEXT_CHANNELS
    counted_text_lines = COUNTED_TEXT_LINES

    def __init__(self, verify_md5: bool = False, following: bool = False) -> None:
        self.verify_md5 = verify_md5
        # Following: a file that may not be read now (chmod 000) is read again when it may, and
        # is no problem of the input; `unreadable` says which (path: why) until then.
        self.following = following
        self.unreadable: dict[str, str] = {}
        self.sources: list[Source] = []
        self.nodes: dict[tuple[Group, CompileId], CompileNode] = {}
        self._groups: dict[Group, None] = {}  # the groups of `nodes`, in order of appearance
        self._ranks_of = -1  # _ranks is of this many groups
        self._ranks: tuple[tuple[int | None, ...], tuple[int, ...]] = ((), ())  # ranks(), numbered_ranks()
        self.compiles: dict[tuple[Group, CompileId], Compile] = {}
        self.frames: dict[tuple[Group, tuple], Frame] = {}
        self.problems: list[InputProblem] = []
        self.unknown_kinds: dict[str, int] = {}
        self.cache_events: dict[str, int] = {}
        self.notes: list[str] = []
        self.pytorch_version: str | None = None
        self.lock = threading.RLock()  # the UI reads while a worker feeds
        self.contexts: list[tuple[Group, CompileId | None]] = []  # by context code: (group, compile id)
        self._context_nodes: list[CompileNode | None] = []
        self._context_codes: dict[tuple, int] = {}
        self._recompiled_by: dict[tuple, dict[CompileNode, None]] = {}  # (ordered sets)
        self._frames_by_function: dict[tuple, Frame] = {}  # (group, function) -> its latest frame
        self.untagged: list[TextRecord] = []  # TORCH_LOGS records of no compile id, for the Log pane
        self.untagged_count = 0  # all of them (the first UNTAGGED_KEPT are kept)
        self.outside: dict[Group, CompileNode] = {}  # per group, its trace records of no compile id
        self._changed: set[Compile] = set()
        self._changes_lock = threading.Lock()
        self._unjudged: set[Compile] = set()  # changed since judge_changed() (the indexing thread's)
        self._paths: set[str] = set()
        self.has_traces = False  # a trace file is among the sources (its records win over text)
        self.told: set[tuple[Source, str]] = set()  # (source, message) of the problems told once a file

    # ---- sources -------------------------------------------------------------------------------

    def add_log(self, log: FoundLog) -> Source | None:
        if log.path in self._paths:
            return None
        self._paths.add(log.path)
        source: Source
        if log.kind == TRACE:
            self.has_traces = True
            source = TraceFile(log.path, self, verify_md5=self.verify_md5,
                               rank_from_name=log.rank_from_name)
        else:
            source = TextLog(log.path, self)
        source.name = log.shown_name
        self.sources.append(source)
        return source

    def refresh(self, limit: int | None = None) -> int:
        """Index what every source gained since the last call; return the bytes read."""
        return sum(self.feed(source, limit) for source in list(self.sources))

    def feed(self, source: Source, limit: int | None = None) -> int:
        """Index what one source gained (up to `limit` bytes); return the bytes read."""
        try:
            with self.lock:
                read = source.feed(limit)
        except PermissionError as exc:
            if not self.following:
                self.add_problem(source, source.scanned_to, "unreadable", str(exc))
            self.unreadable[source.path] = exc.strerror or str(exc)
            return 0
        except OSError as exc:
            self.add_problem(source, source.scanned_to, "unreadable", str(exc))
            return 0
        if self.unreadable:
            self.unreadable.pop(source.path, None)
        return read

    def finish(self) -> None:
        """No more data will come: close the last open records."""
        with self.lock:
            for source in self.sources:
                try:
                    source.finish()
                except OSError as exc:
                    self.add_problem(source, source.scanned_to, "unreadable", str(exc))
            self._check_string_ids()

    def close_text_records(self) -> bool:
        """Close the records still open in text logs (their writer paused); True if any was."""
        with self.lock:
            closed = [source.close_records() for source in self.sources if isinstance(source, TextLog)]
            return any(closed)  # (each log closes its records: any() of a generator stops at the first)

    def close(self) -> None:
        for source in self.sources:
            source.close()

    @property
    def bytes_total(self) -> int:
        return sum(s.size for s in self.sources)

    @property
    def bytes_read(self) -> int:
        return sum(s.scanned_to for s in self.sources)

    # ---- parts indexed in other processes (merging.py) ------------------------------------------

    def export_part(self, source: TraceFile) -> dict:
        """What this index (of one byte range of `source`) holds, as plain data to send."""
        return merging.export_part(self, source)

    def merge_part(self, source: TraceFile, part: dict, pause: Callable[[], None] = lambda: None) -> None:
        """Append a part of `source` indexed in another process, in file order; `pause()` now and
        then returns when this thread may go on (a key pressed in the explorer comes first)."""
        merging.merge_part(self, source, part, pause)

    # ---- the sink the readers call -------------------------------------------------------------

    def context_code(self, source, rank: int | None, fields: tuple, said_rank=..., offset=None) -> int:
        code = self.code_for(Group.of(rank, source.pid), CompileId.from_fields(*fields), source)
        for kind, message in odd_fields(said_rank, *fields):  # (a few calls a file: codes are cached)
            self.tell_once(source, source.scanned_to if offset is None else offset, kind, message,
                           self._context_nodes[code])
        return code

    def code_for(self, group: Group, cid: CompileId | None, source=None) -> int:
        key = (group, cid)
        code = self._context_codes.get(key)
        if code is None:
            code = len(self.contexts)
            self._context_codes[key] = code
            self.contexts.append(key)
            self._context_nodes.append(self.compile_node(group, cid, True, source) if cid else None)
        return code

    def context_of(self, code: int) -> tuple[Group, CompileId | None]:
        return self.contexts[code]

    def node_of_record(self, source: TraceFile, rec: int) -> CompileNode | None:
        """The compile id a trace record belongs to (None: it has none)."""
        return self._context_nodes[source.contexts[rec]]

    def on_record(self, source: TraceFile, rec: int, kind: str, ctx: int, meta: dict | None) -> bool:
        record = self._trace_record(source, rec, kind, ctx, meta)
        if record.kind.reads is Reads.PAYLOAD:
            return True  # handled when the payload is complete
        self._handle(record)
        return False

    def on_payload(self, source: TraceFile, rec: int, kind: str, ctx: int, meta: dict,
                   payload: bytes) -> None:
        record = self._trace_record(source, rec, kind, ctx, meta)
        record.payload = payload.decode("utf-8", "replace")
        self._handle(record)

    def _trace_record(self, source, rec: int, kind: str, ctx: int, meta: dict | None) -> Record:
        record_kind = KINDS.trace_kind(kind)
        name = kind
        if kind == "artifact" and meta is not None:
            info = meta.get("artifact")
            named = info.get("name") if isinstance(info, dict) else None
            name = named if isinstance(named, str) else "artifact"
            record_kind = KINDS.artifact(name)
        node = self._context_nodes[ctx] or self.outside_node(self.contexts[ctx][0], source)
        return Record(source, rec, record_kind, name, node, meta)

    def on_text_record(self, log: TextLog, text: TextLines) -> None:
        node = None
        if text.cid is not None and (cid := CompileId.parse(text.cid)) is not None:
            node = self.compile_node(Group.of(text.rank, text.pid), cid, False, log)
        kind = KINDS.text_kind(text.channel)
        record = Record(log, text.rec, kind, text.channel, node, None, "\n".join(text.lines), text)
        self._handle(record)  # a handler may find the node of an untagged record (WON'T CONVERT)
        entry = TextRecord(log, text.rec, text.channel)
        if record.node is None:
            self.untagged_count += 1
            if len(self.untagged) < UNTAGGED_KEPT:
                self.untagged.append(entry)
            return
        record.node.text_records.append(entry)
        if text.level == "E":
            self._handle(record, H.on_text_error)

    def _handle(self, record: Record, handler=None) -> None:
        """Run the kind's handler. One that raises makes its record a problem in the input (file,
        line, the exception), as tlparse counts a parser's failures, and indexing goes on."""
        try:
            (handler or record.kind.handler)(self, record)
        except Exception as exc:  # noqa: BLE001 - a record the handler did not expect
            offsets = record.source.offsets
            offset = offsets[record.rec] if 0 <= record.rec < len(offsets) else record.source.scanned_to
            self.add_problem(record.source, offset, "unreadable record",
                             f"{record.name}: {type(exc).__name__}: {exc}")
        if record.node is not None:
            self.touch(record.node.compile)

    def on_problem(self, source, offset: int, kind: str, message: str) -> None:
        self.add_problem(source, offset, kind, message)

    def process_string(self, source: TraceFile, idx: int) -> str | None:
        for other in self.sources:
            if (other is not source and isinstance(other, TraceFile) and other.pid == source.pid
                    and (name := other.strings.get(idx)) is not None):
                return name
        return None

    def tell_once(self, source, offset: int, kind: str, message: str, node=...) -> None:
        """A problem told once a file however many records have it (an odd compile id on each of
        10,000 chromium events is one problem, at the first)."""
        if (source, message) not in self.told:
            self.told.add((source, message))
            self.add_problem(source, offset, kind, message, node)

    def add_problem(self, source, offset: int, kind: str, message: str, node=...) -> None:
        """A problem in the input; it belongs to the compile id of the record at `offset` unless
        `node` says (a record's problem told before the record is kept)."""
        if node is ...:
            node = None
            if isinstance(source, TraceFile) and source.offsets:
                rec = bisect_right(source.offsets, offset) - 1
                if rec >= 0:
                    node = self._context_nodes[source.contexts[rec]]
        problem = InputProblem(source, offset, kind, message, node)
        self.problems.append(problem)
        if node is not None:
            node.problems.append(problem)
            self.touch(node.compile)

    # ---- what handlers call --------------------------------------------------------------------

    def attach(self, node: CompileNode, artifact: Artifact) -> None:
        node.artifacts.append(artifact)

    def count_cache_event(self, name: str) -> None:
        self.cache_events[name] = self.cache_events.get(name, 0) + 1

    def count_unknown(self, kind: str) -> None:
        self.unknown_kinds[kind] = self.unknown_kinds.get(kind, 0) + 1

    def export_failed(self, node: CompileNode, failure, record: tuple) -> None:
        """A failure of torch.export told under a compile id (or none): its group's Export entry's."""
        outside = self.outside_node(node.group, record[0])
        outside.export_failures.append((failure, record))
        self.touch(outside.compile)

    def note_recompile_reasons(self, node: CompileNode) -> None:
        """Remember which compiles each reason names, for `recompiled_by`."""
        for reason in node.reasons:
            if reason.failed_id is not None:
                later = self._recompiled_by.setdefault((node.group, reason.failed_id), {})
                if node not in later:  # (a set: a list was scanned, 67 µs a call at 10,000 ids)
                    later[node] = None
                    target = self.nodes.get((node.group, reason.failed_id))
                    if target is not None:
                        if target.compile is not None:
                            target.compile.guards_failed_later = True
                        self.touch(target.compile)

    # ---- nodes ---------------------------------------------------------------------------------

    def compile_node(self, group: Group, cid: CompileId, in_trace: bool, source=None) -> CompileNode:
        """The node of a compile id of a group, made the first time (with its compile and frame)."""
        key = (group, cid)
        node = self.nodes.get(key)
        if node is None:
            # Built whole before it is published: the UI thread reads these dicts meanwhile.
            node = CompileNode(group, cid, len(self.nodes), in_trace=in_trace, source=source)
            ckey = (group, cid.compile_key)
            compile_ = self.compiles.get(ckey)
            if compile_ is None:
                frame = self.frames.get((group, cid.frame_key)) or Frame(group, cid.frame_key)
                compile_ = Compile(group, cid.compile_key, frame=frame, exports=self.outside)
            else:
                frame = self.frames[(group, cid.frame_key)]  # its compile's (kept below when that was made)
            node.compile = compile_
            compile_.attempts = sorted([*compile_.attempts, node], key=lambda n: n.cid.attempt)
            if ckey not in self.compiles:
                self.compiles[ckey] = compile_
                frame.compiles.append(compile_)
                frame.by_key[cid.compile_key] = compile_
                self.frames.setdefault((group, cid.frame_key), frame)
            frame.newest = node  # (seq grows: the frame's newest attempt)
            self.nodes[key] = node
            self._groups[group] = None  # kept as nodes come: a live refresh asks for them
            self.touch(compile_)
        elif in_trace and not node.in_trace:
            node.in_trace, node.source = True, source or node.source  # the trace's file names it
            self.touch(node.compile)
        return node

    def name_frame(self, node: CompileNode, function: str, location: str | None, certainty: int) -> None:
        """What a text line says a compile's function is names its frame (and so all its compiles)."""
        frame = node.compile.frame if node.compile is not None else None
        if frame is None:  # (a node of no compile id's: text never names one)
            raise ValueError(f"{node.id} is no compile's: it names no frame")
        if frame.name(function, location, certainty):
            self._frames_by_function[(node.group, function)] = frame
            for compile_ in list(frame.compiles):
                self.touch(compile_)

    def latest_compile_of(self, group: Group, function: str) -> CompileNode | None:
        """The newest compile id of a function (the frame a text line named last)."""
        frame = self._frames_by_function.get((group, function))
        return frame.latest() if frame is not None else None

    def infer_compile(self, group: Group, function: str, location: str | None, source=None) -> CompileNode:
        """A compile the text tells of but never tagged (it failed before logging anything): a
        new frame takes the next frame id, as torch numbers them."""
        frames = [key[1] for (g, key) in list(self.frames) if g == group and key[0] is None and key[1] is not None]
        node = self.compile_node(group, CompileId(None, max(frames, default=-1) + 1, 0, 0), False, source)
        node.text.inferred_id = True
        self.name_frame(node, function, location, 1)
        return node

    def latest_node(self) -> CompileNode | None:
        return max(list(self.nodes.values()), key=lambda n: n.seq, default=None)

    def outside_node(self, group: Group, source=None) -> CompileNode:
        """The node of a group's records of no compile id (not a compile: not in `nodes`)."""
        node = self.outside.get(group)
        if node is None:
            node = CompileNode(group, OUTSIDE, -1, in_trace=True, source=source)
            node.compile = Compile(group, OUTSIDE, [node], exports=self.outside)
            self.outside[group] = node
            self.touch(node.compile)
        return node

    def node(self, rank: int | None, cid: CompileId | str, pid: int | None = None) -> CompileNode | None:
        """The node of a compile id of a rank (or, with no rank, of a process: the first one when
        no pid is given)."""
        key = CompileId.parse(cid) if isinstance(cid, str) else cid
        if key is None:
            return None  # (no compile id: of no node)
        if rank is not None or pid is not None:
            return self.nodes.get((Group.of(rank, pid), key))
        return next((n for (g, c), n in list(self.nodes.items()) if c == key and g.rank is None), None)

    def ranks(self) -> list[int | None]:
        return list(self._rank_order()[0])

    def numbered_ranks(self) -> tuple[int, ...]:
        """The ranks that are numbers, in order: the same tuple until a rank comes (the explorer
        asks at each update of its views; sorting 20,000 ranks each time took 5-10 ms)."""
        return self._rank_order()[1]

    def _rank_order(self) -> tuple[tuple, tuple]:
        if self._ranks_of != len(self._groups):  # (groups are only ever added)
            groups = list(self._groups)
            ranks = sorted({g.rank for g in groups}, key=lambda r: -1 if r is None else r)
            self._ranks = (tuple(ranks), tuple(r for r in ranks if r is not None))
            self._ranks_of = len(groups)
        return self._ranks

    def groups(self) -> list[Group]:
        """Ranks in order, then processes with no rank, newest first."""
        starts = process_starts(self.sources)
        # (sorted() copies the dict first, at C level: the indexing thread may add groups meanwhile)
        return sorted(self._groups, key=lambda g: g.order(starts.get(g.pid, "") if g.pid is not None else ""))

    @property
    def grouped(self) -> bool:
        """More than one rank or process: they are named wherever a compile id is."""
        return len(self._groups) > 1

    def started(self, group: Group) -> str:
        """When a process's first record was written ("MMDD HH:MM:SS.ffffff"), as its files say."""
        if group.rank is not None or group.pid is None:
            return ""  # a rank is ordered and named by its number (20,000 ranks: no file scan each)
        return process_starts(self.sources).get(group.pid, "")

    def group_label(self, group: Group) -> str:
        if group.rank is not None:
            return group.label()
        files = tuple(s.path for s in self.sources if isinstance(s, TraceFile) and s.pid == group.pid)
        return group.label(self.started(group), files)

    def iter_nodes(self, rank=...) -> Iterator[CompileNode]:
        """Compile nodes in order of first appearance, optionally of one rank."""
        # A snapshot (one C-level copy under the GIL): the indexing thread may add nodes meanwhile.
        for (group, _), node in list(self.nodes.items()):
            if rank is ... or group.rank == rank:
                yield node

    def failed_guard_target(self, node: CompileNode, reason) -> CompileNode | None:
        """The compile node whose guard failed, named by a recompile reason."""
        if reason.failed_id is None:
            return None
        return self.nodes.get((node.group, reason.failed_id))

    def recompiled_by(self, node: CompileNode) -> list[CompileNode]:
        """The later compiles that recompiled because a guard of `node` failed."""
        return list(self._recompiled_by.get((node.group, node.cid), ()))

    def touch(self, compile_: Compile | None) -> None:
        """A record changed this compile: its verdict is judged again, views hear of it."""
        if compile_ is not None:
            compile_.revision += 1
            self._unjudged.add(compile_)
            with self._changes_lock:
                self._changed.add(compile_)

    def judge_changed(self, pause=lambda: None) -> None:
        """Judge the compiles changed since the last call (called by the thread that indexes);
        `pause()` now and then returns when it may go on (a key in the explorer comes first)."""
        changed, self._unjudged = self._unjudged, set()
        for i, compile_ in enumerate(changed):
            if i % JUDGE_PAUSE_EVERY == JUDGE_PAUSE_EVERY - 1:
                pause()
            compile_.verdict  # noqa: B018 - computed and cached on the compile

    def take_changes(self) -> set[Compile]:
        """The compiles that changed since the last call (new ones included). Not under `lock`:
        a worker feeding many small files takes it again at once, and the UI waited 100-700 ms."""
        with self._changes_lock:
            changed, self._changed = self._changed, set()
        return changed

    def records_of(self, node: CompileNode) -> Iterator[tuple[TraceFile, int, str]]:
        """(source, record, kind) of every trace record of a compile id, read from the arrays."""
        codes = {code for code, n in enumerate(self._context_nodes) if n is node}
        for source in self.sources:
            if isinstance(source, TraceFile):
                for rec, ctx in enumerate(source.contexts):
                    if ctx in codes:
                        yield source, rec, source.kind_of(rec)

    def _check_string_ids(self) -> None:
        """Report stack frames naming string-table ids that no `str` record defined."""
        seen: set = set()
        for node in self.nodes.values():
            if node.frame is None or node.start is None:
                continue
            source, rec = node.start
            idx = node.frame.get("filename")
            if (isinstance(idx, int) and idx not in source.strings and (id(source), idx) not in seen
                    and self.process_string(source, idx) is None):
                seen.add((id(source), idx))
                self.add_problem(source, source.offsets[rec], "unknown string",
                                 f"string-table id {idx} is never defined (shown as unknown)")
