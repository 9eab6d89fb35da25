"""Incremental, lazy reading of one TORCH_TRACE file.

The scanner finds envelope lines (`V1121 23:08:47.127000 7367 torch/_dynamo/x.py:42] {json}`) in
blocks of complete lines and hands each record to a sink (the model's index). It keeps only byte
offsets: payloads stay on disk until a pane reads them (trace_records.py).

Hand-written rather than a line iterator because of speed: 86% of the records of a big trace are
`chromium_event` and `describe_*`, whose metadata the index does not need; their context (rank
and compile id) is taken from a small cache keyed by the tail of the envelope, so most records
cost one `find` and one dict lookup (see research/tui-anchors.md section 5).

The source knows nothing of compile ids: a record's context is its raw fields (rank, compiled
autograd id, frame id, frame compile id, attempt), which the sink turns into a small code.
The last record stays open (its payload may still grow) until the next envelope arrives, its md5
matches, or the file is finished.

A TraceFile is built of objects it owns, one a concept, each given the file (its fields, declared
once in `TraceFile.__init__`, are what they read):
  - `context_codes` (record_context.py): a record's context code, from its envelope's tail;
  - `record_ends` (record_ends.py): the open record closed and its payload checked, and `cuts`;
  - `damaged_lines` (damaged_lines.py): bad lines, glued records, lines longer than a block;
  - `records` (trace_records.py): records read back from disk (TraceFile's methods hand on to it).
It extends IncrementalFile (reader.py), the reading shared with TextLog, which stays a base class:
it reads only its own fields and asks TraceFile through its hooks (`scan_block`, `long_line`,
`after_feed`, `end_of_input`, `report_problem`). The scan loop keeps the owned objects (and their
caches) in locals: a record of the fast path costs no more attribute look-ups than before.
"""

from __future__ import annotations

from array import array
from hashlib import md5
from typing import Protocol

from tlview.source.damaged_lines import ENVELOPE_START, HAS_PAYLOAD, DamagedLines, glued_envelope
from tlview.source.payload import LoadedPayload, decode_file_region
from tlview.source.reader import IncrementalFile
from tlview.source.record_context import CONTEXT_KEYS, RecordContexts, loads_object
from tlview.source.record_ends import OpenRecord, RecordEnds
from tlview.source.trace_records import TraceRecords, loads_metadata

_CLOSING = (ord("}"), ord("\r"))
_BOM = b"\xef\xbb\xbf"
KINDS_MAX = 10_000  # record kinds told apart in one file (torch has about a hundred)
OTHER_KINDS = "(other kinds)"


class RecordSink(Protocol):
    """What the scanner feeds: the model's index implements it."""

    lazy_kinds: frozenset  # kinds whose metadata is not parsed while scanning (meta is None)
    silent_kinds: frozenset  # lazy kinds the sink need not hear of at all (counted only)

    def context_code(self, source: TraceFile, rank: int | None, fields: tuple, said_rank=...,
                     offset: int | None = None) -> int:
        """A small number for (rank, raw compile-id fields); the same fields give the same code.
        `fields` and `said_rank` are as written (`...`: not there); `offset`: the record's."""

    def on_record(self, source: TraceFile, rec: int, kind: str, ctx: int, meta: dict | None) -> bool:
        """A record; return True to be called again (on_payload) when its payload is complete."""

    def on_payload(self, source: TraceFile, rec: int, kind: str, ctx: int, meta: dict,
                   payload: bytes) -> None: ...

    def on_problem(self, source, offset: int, kind: str, message: str) -> None: ...

    def process_string(self, source: TraceFile, index: int) -> str | None:
        """A string-table entry defined in another file of the same process."""


def _next_line_with_v(data: bytes, at: int, cut: int) -> int:
    """Where the first line at or after `at` (a line start) that starts with "V" starts, or -1.
    (find(b"\\nV") runs at 1 GB/s; hopping from "V" to "V" at memchr's speed, 4x faster.)"""
    find = data.find
    q = find(b"V", at, cut)
    while q > at and data[q - 1] != 10:
        q = find(b"V", q + 1, cut)
    return q


class TraceFile(IncrementalFile):
    """One trace file: its records' offsets and the scanning state (see the module's docstring)."""

    def __init__(self, path: str, sink: RecordSink, verify_md5: bool = False,
                 rank_from_name: int | None = None) -> None:
        super().__init__(path)
        self.sink = sink
        self.verify_md5 = verify_md5
        self.rank_from_name = rank_from_name
        self.rank = rank_from_name  # first rank seen in a record, else from the file name
        self.rank_from_record = False  # `rank` came from a record (told once: record_context.py)
        self.pid: int | None = None  # the writing process (one file, one process), from the envelopes
        self.started = ""  # "MMDD HH:MM:SS.ffffff" of the first envelope
        # per record: envelope offset, kind code, context code (rank + compile id, from the sink)
        self.offsets = array("q")
        self.kinds = array("H")
        self.contexts = array("i")
        self.kind_names: list[str] = []
        self.strings: dict[int, str] = {}  # the {"str": [s, idx]} table
        self.string_at: dict[int, tuple[int, bytes]] = {}  # idx -> (offset, pid) of its definition
        self.md5_ok = 0  # payloads whose md5 was checked and matched (record_ends.py counts them)
        self.md5_bad = 0
        # record -> the md5 its envelope line ends with, for the records the sink is told of with
        # their metadata (artifacts), when md5s are checked: `verified_md5` answers from it with
        # no read of the envelope (1,024 real ranks: 7,170 reads, about 0.2 s, in the parent).
        self.payload_md5s: dict[int, str] = {}
        self.context_codes = RecordContexts(self)
        self.record_ends = RecordEnds(self)
        self.damaged_lines = DamagedLines(self)
        self.records = TraceRecords(self)
        self._kind_codes: dict[bytes, int] = {}
        self._fast_cache: dict[bytes, tuple[int, int]] = {}
        self._event_cache: dict[bytes, dict] = {}
        self._glued_line = -1  # the end of the last line reported as holding glued records

    # ---- what the shared reader asks -------------------------------------------------------------

    def report_problem(self, offset: int, kind: str, message: str) -> None:
        self.sink.on_problem(self, offset, kind, message)

    def long_line(self, pos: int, data: bytes) -> int:
        return self.damaged_lines.long_line(pos, data)

    def after_feed(self) -> None:
        rec = self.record_ends.open
        # Following: the last record closes early once its payload matches its md5.
        if (rec is not None and rec.wants_payload and rec.md5
                and decode_file_region(self.read_range, rec.payload_start, self.scanned_to).md5 == rec.md5):
            self.record_ends.close_open(self.scanned_to)

    def end_of_input(self) -> None:
        if self.damaged_lines.long is not None:
            self.damaged_lines.end_long_line(self.scanned_to)
        self.record_ends.close_open(self.scanned_to)
        self.record_ends.check_last_record()

    # ---- the scan loop -------------------------------------------------------------------------

    def scan_block(self, data: bytes, cut: int, base: int) -> None:
        # The block stays at hand while it is scanned: a record that closes inside it is hashed
        # from memory (no second read). A rescue scans a piece of it: the outer block comes back.
        ends = self.record_ends
        outer = ends.block, ends.block_base
        ends.block, ends.block_base = data, base
        try:
            self._scan_lines(data, cut, base)
        finally:
            ends.block, ends.block_base = outer

    def _scan_lines(self, data: bytes, cut: int, base: int) -> None:
        pos = 0
        damaged = self.damaged_lines
        if damaged.long is not None:
            pos = data.find(b"\n", 0, cut) + 1
            damaged.end_long_line(base + pos - 1)
        elif base == 0 and data.startswith(_BOM):
            pos = 3  # a UTF-8 byte-order mark (an editor saved the file): not part of a record
        find = data.find
        startswith = data.startswith
        fast = self._fast_cache
        tail_cache = self.context_codes.by_tail
        ends = self.record_ends
        kind_codes = self._kind_codes
        offsets_append = self.offsets.append
        kinds_append = self.kinds.append
        contexts_append = self.contexts.append
        verify = self.verify_md5
        if pos < cut and data[pos] != 86:  # "V": lines before the first envelope
            pos = damaged.check_region_start(data, pos, cut, base)
        p = pos if (pos < cut and data[pos] == 86) else find(b"V", pos, cut)
        while p >= 0:
            if p != pos and data[p - 1] != 10:  # a "V" inside a line: payload, or a record glued
                eol = find(b"\n", p, cut)
                start = data.rfind(b"\n", 0, p) + 1
                # (a bad line with no record inside is the open record's to report)
                if data[start] != 9 and (glued := ENVELOPE_START.search(data, p, eol)):
                    damaged.rescue(data, start, eol, base, glued)
                p = find(b"V", eol + 1, cut)
                continue
            eol = find(b"\n", p, cut)
            # Fast path: chromium events repeat their envelope exactly but for the timestamp (21
            # bytes) and the md5 (last 50 bytes): that middle part keys a cache of (kind, context).
            hit = fast.get(data[p + 22:eol - 50]) if startswith(HAS_PAYLOAD, eol - 50) else None
            if hit is not None:
                if ends.open is not None:
                    ends.close_open(base + p)
                offsets_append(base + p)
                code, ctx = hit
                kinds_append(code)
                contexts_append(ctx)
                if verify:
                    # Its payload, when the next envelope follows it in this block, is checked
                    # here as whole_payload checks (every payload line starts with a TAB: the first "\nV"
                    # ends it; anything else changes the text, so the md5, and goes the usual
                    # way). As an open record closed by the next envelope, with each "V" inside
                    # its lines looked at, it took 6-7 µs of Python, 146 times in each of 1,024
                    # rank files.
                    # (_next_line_with_v and whole_payload written out here: two calls and their
                    # checks a record: 1,024 real ranks scanned in one process, 2.55 -> 2.43 s CPU)
                    q = find(b"V", eol + 1, cut)
                    while q > eol + 1 and data[q - 1] != 10:
                        q = find(b"V", q + 1, cut)
                    if q > eol + 1 and data[eol + 1] == 9:
                        text = data[eol + 1:q - 1].replace(b"\t", b"")
                        if (b"\r" not in text
                                and md5(text).hexdigest() == data[eol - 34:eol - 2].decode("ascii", "replace")):
                            self.md5_ok += 1
                            ends.verified_rec = len(self.offsets) - 1
                            p = q  # the next envelope
                            continue
                    ends.open = OpenRecord(len(self.offsets) - 1, base + p, base + eol + 1,
                                           self.kind_names[code], None, ctx,
                                           data[eol - 34:eol - 2].decode("ascii", "replace"), False)
            else:
                j = find(b"] {", p, eol)
                h = find(HAS_PAYLOAD, j, eol) if j > 0 else -1
                # describe_* records: their value varies, their context tail repeats.
                if (j > 0 and startswith(b'{"describe_', j + 2) and data[eol - 1] in _CLOSING
                        and (h < 0 or h >= eol - 51) and find(b"V", p + 1, j) < 0
                        and find(b"] {", j + 3, eol) < 0):
                    end = h if h > 0 else eol
                    k1 = find(b'"', j + 4, eol)
                    t = data.rfind(b'}, "', k1, end)
                    seen_ctx = tail_cache.get(data[t + 3:end]) if t > 0 else None
                    seen_code = kind_codes.get(data[j + 4:k1])
                    if seen_ctx is not None and seen_code is not None:
                        if ends.open is not None:
                            ends.close_open(base + p)
                        offsets_append(base + p)
                        kinds_append(seen_code)
                        contexts_append(seen_ctx)
                        if verify and h > 0:
                            ends.open = OpenRecord(len(self.offsets) - 1, base + p, base + eol + 1,
                                                   self.kind_names[seen_code], None, seen_ctx,
                                                   data[h + 16:h + 48].decode("ascii", "replace"), False)
                            if (ahead := self._verified_ahead(data, eol, cut, base)) is not None:
                                p = ahead
                                continue
                        nxt = eol + 1
                        if nxt < cut and data[nxt] != 86 and data[nxt] != 9:
                            nxt = damaged.check_region_start(data, nxt, cut, base)
                        p = find(b"V", nxt, cut)
                        continue
                self.scan_envelope(data, p, eol, j, h, base)
                if verify and (ahead := self._verified_ahead(data, eol, cut, base)) is not None:
                    p = ahead
                    continue
            nxt = eol + 1
            if nxt < cut and data[nxt] != 86 and data[nxt] != 9:
                nxt = damaged.check_region_start(data, nxt, cut, base)
            p = find(b"V", nxt, cut)

    def _verified_ahead(self, data: bytes, eol: int, cut: int, base: int) -> int | None:
        """With md5s checked: the record just opened by the envelope line ending at `eol`, when its
        payload ends in this block (at the next line that starts with "V") and matches its md5, is
        closed now; returns where the next envelope starts. Its lines are then not looked at one by
        one for a "V" (a record glued inside a line): a payload that matches its md5 holds no line
        of another record. (A 100 MB trace, md5s checked, in one process: 0.33 -> 0.30 s.)"""
        rec = self.record_ends.open
        if rec is None or not rec.md5 or rec.payload_start != base + eol + 1:
            return None
        end = _next_line_with_v(data, eol + 1, cut) - 1
        if end <= eol or not self.record_ends.payload_in_block(rec, base + end + 1):
            return None
        self.record_ends.open = None
        return end + 1

    def scan_envelope(self, data: bytes, p: int, eol: int, j: int, h: int, base: int) -> None:
        """The general path for the envelope line at data[p:eol]. Records glued on one line (a
        writer that lost its newlines, a CR-only file) are read one after another in a loop, any
        number of them: never by recursion, which a line of 1,000 records would exhaust."""
        nxt = self._scan_one(data, p, eol, j, h, base)
        while nxt is not None:
            j = data.find(b"] {", nxt, eol)
            following = ENVELOPE_START.search(data, j + 3, eol) if j >= 0 else None
            h = data.find(HAS_PAYLOAD, j, following.start() if following else eol)  # its own only
            nxt = self._scan_one(data, nxt, eol, j, h, base)

    def _scan_one(self, data: bytes, p: int, eol: int, j: int, h: int, base: int) -> int | None:
        """Read the record at data[p:...]; where the next record glued on the same line starts,
        or None."""
        if j < 0 or data[p + 5] != 32 or not data[p + 1:p + 5].isdigit():
            return self.damaged_lines.report_bad_line(data, p, eol, base)
        glued = ENVELOPE_START.search(data, p + 1, j + 3) if data.find(b"V", p + 1, j) > 0 else None
        if glued:  # a torn envelope header, then a whole record
            return self.damaged_lines.report_bad_line(data, p, eol, base, glued)
        if self.pid is None:
            self._take_process(data[p:j])
        if self.record_ends.open is not None:
            self.record_ends.close_open(base + p)
        k0 = j + 4
        k1 = data.find(b'"', k0, eol)
        kind_b = data[k0:k1]
        code = self._kind_codes.get(kind_b)
        if code is None:
            code = self._new_kind(kind_b, base + p)
        kind = self.kind_names[code]
        rec = len(self.offsets)
        meta = None
        md5 = None
        error = ""
        # The context sits after the event's value: `}, "frame_id": 0, ..., "has_payload": "…"}`;
        # a tail that repeats gives the context with no JSON parsing.
        end = h if h >= 0 else eol
        t = data.rfind(b'}, "', k1, end + 1)  # `+ 1`: an empty tail, `{}, "has_payload"`
        ctx = None
        # A whole envelope ends with "}"; a torn one (the writer died) goes to the JSON parser,
        # which says what is wrong with it.
        # (torch writes has_payload last: anything after it, or a second envelope, is another
        # record glued on, which the JSON parser finds)
        glued = glued_envelope(data, j + 2, eol)
        glued_after_kind = glued if glued is None or glued.start() >= k1 else glued_envelope(data, k1, eol)
        if t >= 0 and data[eol - 1] in _CLOSING and (h < 0 or h >= eol - 51) and glued_after_kind is None:
            tail = data[t + 3:end]
            ctx = self.context_codes.by_tail.get(tail)
            if ctx is None:
                ctx = self.context_codes.from_tail(tail, base + p)
        if ctx is not None and kind in self.sink.lazy_kinds:
            if h == eol - 50 and kind in self.sink.silent_kinds and data[k1:k1 + 5] == b'": {}':
                self._fast_cache[data[p + 22:h]] = (code, ctx)  # the fast path never calls the sink
            if h >= 0 and self.verify_md5:
                md5 = data[h + 16:h + 48].decode("ascii", "replace")
            self._append(base + p, code, ctx)
            if kind not in self.sink.silent_kinds:
                self.sink.on_record(self, rec, kind, ctx, None)
            if md5:
                self.record_ends.open = OpenRecord(rec, base + p, base + eol + 1, kind, None, ctx, md5, False)
            return None
        if ctx is not None and kind == "artifact":
            # artifact names repeat: `{"artifact": {"name": "x", "encoding": "string"}` is parsed once
            event = data[j + 2:t + 1]
            meta = self._event_cache.get(event)
            if meta is None:
                meta = loads_object(event + b"}")
                if meta is not None and len(self._event_cache) < 4096:
                    self._event_cache[event] = meta
        if meta is None:
            cut_configs = kind_b.endswith(b"compilation_metrics")
            # A record glued after this one: parse up to it, not the whole line (a line of n
            # records would otherwise be parsed n times: quadratic). If that part is not JSON
            # alone (an envelope's text inside a string), the whole line is parsed, as before.
            meta = None
            if glued is None or loads_metadata(data[j + 2:glued.start()], cut_configs)[0] is None:
                meta, error = loads_metadata(data[j + 2:eol], cut_configs, j + 2 - p)
            if meta is None:
                glued = glued or ENVELOPE_START.search(data, j + 2, eol)
                if glued is None:
                    self.record_ends.close_open(base + p)
                    self.record_ends.cut(base + p)  # not a record, nor part of the one before
                    self.sink.on_problem(self, base + p, "bad json", error)
                    return None
                # Two records on one line (the writer lost a newline), or a torn one and a whole
                # one: each is read as a line of its own.
                q = glued.start()
                self.scan_envelope(data, p, q, j, data.find(HAS_PAYLOAD, j, q), base)
                if self._kept_last(base + p) and self._glued_line != base + eol:
                    self._glued_line = base + eol  # one problem a line, however many records it holds
                    self.sink.on_problem(self, base + p, "glued records",
                                         "records on one line (newlines were lost): each is read")
                self.record_ends.close_open(base + q)
                return q  # the next record on this line: the caller's loop reads it
            kind = next((k for k in meta if k not in CONTEXT_KEYS), kind)
            if kind.encode() != kind_b:
                code = self._kind_codes.get(kind.encode())
                if code is None:
                    code = self._new_kind(kind.encode(), base + p)
        if ctx is None:  # (its metadata was parsed above)
            ctx = self.context_codes.of_fields(meta, base + p)
        if h >= 0:
            md5 = data[h + 16:h + 48].decode("ascii", "replace")
            # (kept only where it is the line's last field, as a read of the line would find it)
            if self.verify_md5 and h == eol - 50 and data[eol - 2:eol + 1] == b'"}\n':
                self.payload_md5s[rec] = md5
        self._append(base + p, code, ctx)
        if error:  # read, with U+FFFD for the bytes that are not UTF-8
            self.sink.on_problem(self, base + p, "not UTF-8", error)
        if kind == "str":
            self._intern(meta.get("str"), base + p, data[p:j])
        wants = self.sink.on_record(self, rec, kind, ctx, meta)
        if not (wants or self.verify_md5):
            md5 = None  # checked when a pane loads it
        if wants or md5:
            self.record_ends.open = OpenRecord(rec, base + p, base + eol + 1, kind, meta if wants else None,
                                               ctx, md5, wants)
        return None

    def peek_process(self) -> None:
        """Learn the pid from the first envelope before indexing (the parts of a file indexed in
        other processes all belong to the file's one process)."""
        if self.pid is None:
            head = self.read_range(0, min(self.size or (64 << 10), 64 << 10)).removeprefix(_BOM)
            at = head.find(b"] {")
            if head[:1] == b"V" and at > 0:
                self._take_process(head[:at])

    def _take_process(self, header: bytes) -> None:
        """`V1121 23:08:47.127000 7367 torch/x.py:42`: the pid and the time of the first record."""
        fields = header.split(b" ", 4)
        if len(fields) >= 4 and fields[2].isdigit():
            self.pid = int(fields[2])
            self.started = f"{fields[0][1:].decode('ascii', 'replace')} {fields[1].decode('ascii', 'replace')}"

    def _append(self, offset: int, code: int, ctx: int) -> None:
        self.offsets.append(offset)
        self.kinds.append(code)
        self.contexts.append(ctx)

    def _kept_last(self, offset: int) -> bool:
        return bool(self.offsets) and self.offsets[-1] == offset

    def _new_kind(self, kind_b: bytes, offset: int | None = None) -> int:
        code = len(self.kind_names)
        if code >= KINDS_MAX:  # garbage that parses as JSON, or a writer gone wrong
            if code == KINDS_MAX:
                self.sink.on_problem(self, self.scanned_to if offset is None else offset, "too many kinds",
                                     f"over {KINDS_MAX:,} record kinds in one file: the rest are "
                                     f"counted as {OTHER_KINDS!r}")
                self.kind_names.append(OTHER_KINDS)
            return KINDS_MAX
        self.kind_names.append(kind_b.decode("utf-8", "replace"))
        self._kind_codes[kind_b] = code
        return code

    def kind_code(self, name: str) -> int:
        code = self._kind_codes.get(name.encode())
        return self._new_kind(name.encode()) if code is None else code

    def _intern(self, entry: object, offset: int, header: bytes) -> None:
        """A `{"str": [text, idx]}` record (its envelope's `header`, which names the process)."""
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], int)):
            self.sink.on_problem(self, offset, "bad string", "a string-table record of the wrong shape")
            return
        text, idx = entry
        pid = b"".join(header.split(b" ", 3)[2:3])
        said = self.strings.get(idx)
        if said is None:
            self.strings[idx] = text
            self.string_at[idx] = (offset, pid)
        elif said != text:
            self._string_again(idx, text, offset, pid)

    def _string_again(self, idx: int, text: str, offset: int, pid: bytes, told: list | None = None) -> None:
        """A string-table id defined again with other text. Torch gives each string an id once a
        process: the first definition is kept (the frames logged before this one named it). Told
        (`told`, else the sink) when the same process wrote both; records of another process in
        this file (files joined with cat) are another matter."""
        first = self.string_at.get(idx)
        if first is not None and first[1] == pid:
            message = (f"string-table id {idx} defined again as {text[:80]!r}; it was "
                       f"{self.strings[idx][:80]!r}: the first is kept")
            if told is None:
                self.sink.on_problem(self, offset, "string id redefined", message)
            else:
                told.append((offset, "string id redefined", message))

    # ---- the records read back from disk (trace_records.py) --------------------------------------

    def kind_of(self, rec: int) -> str:
        return self.kind_names[self.kinds[rec]]

    def record_span(self, rec: int) -> tuple[int, int]:
        return self.records.record_span(rec)

    def _envelope(self, rec: int) -> tuple[bytes, int, int]:
        return self.records.envelope(rec)  # (report/bundle.py reads it)

    def envelope_line(self, rec: int) -> bytes:
        return self.records.envelope_line(rec)

    def load_metadata(self, rec: int) -> dict | None:
        return self.records.load_metadata(rec)

    def event_strings(self, rec: int, names: tuple[str, ...]) -> dict[str, str] | None:
        return self.records.event_strings(rec, names)

    def load_event(self, rec: int) -> dict:
        return self.records.load_event(rec)

    def load_payload(self, rec: int) -> LoadedPayload:
        return self.records.load_payload(rec)

    def verified_md5(self, rec: int) -> str | None:
        return self.records.verified_md5(rec)

    def payload_md5_ok(self, rec: int) -> bool | None:
        return self.records.payload_md5_ok(rec)

    def frame_filename(self, index: int | str) -> str:
        return self.records.frame_filename(index)

    # ---- handing a half-indexed file between processes -------------------------------------------

    def close_open_at(self, offset: int) -> None:
        """The open record ends at `offset` (where the next range, indexed elsewhere, begins)."""
        self.record_ends.close_open(offset)

    def export_part(self) -> dict:
        """What this file's scan found, as plain data (the scan of one byte range, in a child)."""
        open_record = self.record_ends.open
        self.record_ends.open = None
        return {
            "kind_names": self.kind_names, "offsets": self.offsets.tobytes(),
            "kinds": self.kinds.tobytes(), "contexts": self.contexts.tobytes(),
            "strings": self.strings, "string_at": self.string_at, "cuts": self.record_ends.cuts.tobytes(),
            "md5_ok": self.md5_ok, "md5_bad": self.md5_bad, "payload_md5s": self.payload_md5s,
            "scanned_to": self.scanned_to, "rank": self.rank if self.rank_from_record else None,
            "open": open_record, "pid": self.pid, "started": self.started,
            "long": self.damaged_lines.long,  # a line longer than a block, still open at the end of the range
        }

    def absorb_part(self, part: dict, context_map: list[int], told: list | None = None) -> int:
        """Append a part exported by another process (its context codes mapped to ours); return
        the record number its first record gets here. What only the whole file tells (a string id
        the part defines again) goes to `told` as (offset, kind, message), else to the sink."""
        base_rec = len(self.offsets)
        kind_map = [self.kind_code(name) for name in part["kind_names"]]
        for name, typecode, target, mapping in (("kinds", "H", self.kinds, kind_map),
                                                ("contexts", "i", self.contexts, context_map)):
            values = array(typecode)
            values.frombytes(part[name])
            target.extend(array(typecode, [mapping[v] for v in values]))
        offsets = array("q")
        offsets.frombytes(part["offsets"])
        self.offsets.extend(offsets)
        cuts = array("q")
        cuts.frombytes(part["cuts"])
        self.record_ends.cuts.extend(cuts)  # (parts come in file order: still ascending)
        for idx, text in part["strings"].items():
            if idx not in self.strings:
                self.strings[idx], self.string_at[idx] = text, part["string_at"][idx]
            elif self.strings[idx] != text:
                offset, pid = part["string_at"][idx]
                self._string_again(idx, text, offset, pid, told=told)
        self.payload_md5s.update((rec + base_rec, md5) for rec, md5 in part["payload_md5s"].items())
        self.md5_ok += part["md5_ok"]
        self.md5_bad += part["md5_bad"]
        if part["rank"] is not None and not self.rank_from_record:
            self.rank = part["rank"]
            self.rank_from_record = True
        self.scanned_to = part["scanned_to"]
        if self.pid is None:
            self.pid, self.started = part["pid"], part["started"]
        record = part["open"]
        if record is not None:
            record.rec += base_rec
            record.ctx = context_map[record.ctx]
        self.record_ends.open = record
        self.damaged_lines.long = part["long"]
        return base_rec
