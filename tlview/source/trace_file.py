"""Incremental, lazy reading of one TORCH_TRACE file.

The scanner reads the file in blocks with `os.preadv` into one reused buffer, finds envelope lines
(`V1121 23:08:47.127000 7367 torch/_dynamo/x.py:42] {json}`), and hands each record's metadata to
a sink. It keeps only byte offsets: payloads stay on disk until `load_payload` reads them.

Hand-written rather than a line iterator because of speed: 86% of the records of a big trace are
`chromium_event` and `describe_*`, whose metadata is not needed to build the index; their context
(rank and compile id) is taken from a small cache keyed by the tail of the envelope, so most
records cost one `find` and one dict lookup (see research/tui-anchors.md section 5).

Incremental: `feed()` reads what was appended since the last call. A partial last line is held
back, and the last record stays open (its payload may still grow) until the next envelope arrives
or `finish()` is called at the end of a file that is no longer written.
"""

from __future__ import annotations

import hashlib
import os
import time
from array import array
from dataclasses import dataclass, field
from typing import Protocol

import orjson

from tlview.model.compile_id import CompileId
from tlview.source.payload import (
    DecodedPayload,
    LoadedPayload,
    decode_region,
    line_number_at,
    md5_hex,
    pread_exact,
)

BLOCK_SIZE = 1 << 20  # measured: 1 MiB blocks scan 20% faster than 8 MiB (CPU cache)

_CLOSING = (ord("}"), ord("\r"))
# Big JSON strings inside compilation metrics (40 KB of the 45 KB line): cut before parsing.
_CONFIG_FIELDS = (b'"inductor_config": "', b'"dynamo_config": "', b'"functorch_config": "')
CONTEXT_KEYS = frozenset(
    {"rank", "compiled_autograd_id", "frame_id", "frame_compile_id", "attempt", "has_payload",
     "subgraph_name", "severity", "timestamp", "pathname", "thread"}
)
_HAS_PAYLOAD = b'"has_payload": "'


class RecordSink(Protocol):
    """What the scanner feeds: the model's index implements it."""

    def context_code(self, trace: "TraceFile", rank: int | None, cid: CompileId | None) -> int: ...

    lazy_kinds: frozenset  # kinds whose metadata is not parsed while scanning (on_lazy_record)
    silent_kinds: frozenset  # lazy kinds the sink need not hear of at all (counted only)

    def on_record(self, trace: "TraceFile", rec: int, kind: str, meta: dict, ctx: int) -> bool:
        """A parsed record; return True to be called again with its payload when it is complete."""

    def on_lazy_record(self, trace: "TraceFile", rec: int, kind: str, ctx: int) -> None: ...

    def on_payload(self, trace: "TraceFile", rec: int, kind: str, meta: dict, ctx: int,
                   payload: bytes | None) -> None: ...

    def on_problem(self, trace: "TraceFile", offset: int, kind: str, message: str) -> None: ...


@dataclass(slots=True)
class _OpenRecord:
    rec: int  # record number in the file
    offset: int  # envelope line start
    payload_start: int  # first byte after the envelope line
    kind: str
    meta: dict | None  # kept only when the sink wants the payload
    ctx: int
    md5: str | None
    wants_payload: bool


@dataclass(eq=False)
class TraceFile:
    """One trace file: its records' offsets and the scanning state."""

    path: str
    sink: RecordSink
    verify_md5: bool = False
    rank_from_name: int | None = None
    # per record: envelope offset, kind code, context code (rank + compile id, from the sink)
    offsets: array = field(default_factory=lambda: array("q"))
    kinds: array = field(default_factory=lambda: array("H"))
    contexts: array = field(default_factory=lambda: array("i"))
    kind_names: list[str] = field(default_factory=list)
    strings: dict[int, str] = field(default_factory=dict)  # the {"str": [s, idx]} table
    rank: int | None = None  # first rank seen in a record, else from the file name
    scanned_to: int = 0  # bytes consumed: always just after a newline
    size: int = 0
    md5_ok: int = 0
    md5_bad: int = 0
    _kind_codes: dict[bytes, int] = field(default_factory=dict)
    _tail_cache: dict[bytes, int] = field(default_factory=dict)
    _fast_cache: dict[bytes, tuple[int, int]] = field(default_factory=dict)
    _context_cache: dict[tuple, int] = field(default_factory=dict)
    _event_cache: dict[bytes, dict] = field(default_factory=dict)
    _verified_rec: int = -1  # the last record whose md5 was checked when it closed
    _open: _OpenRecord | None = None
    _skipping_long_line: bool = False
    _rank_from_record: bool = False
    _fd: int | None = None

    def __post_init__(self) -> None:
        if self.rank is None:
            self.rank = self.rank_from_name

    # ---- reading -------------------------------------------------------------------------

    def _open_fd(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def read_range(self, start: int, end: int) -> bytes:
        return pread_exact(self._open_fd(), start, end)

    def feed(self, limit: int | None = None) -> int:
        """Index what was appended since the last call (up to `limit` bytes); return bytes read."""
        fd = self._open_fd()
        self.size = os.fstat(fd).st_size
        start = self.scanned_to
        end = self.size if limit is None else min(self.size, start + limit)
        pos = start
        while pos < end:
            data = os.pread(fd, min(BLOCK_SIZE, end - pos), pos)
            if not data:
                break
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) < BLOCK_SIZE:
                    break  # a partial line: wait for its newline
                # One line longer than the buffer: a payload line is skipped over, anything else is
                # reported; the index only needs line starts.
                self._skip_long_line(pos, data)
                pos += len(data)
                self.scanned_to = pos
                continue
            self._scan_block(data, cut, pos)
            pos += cut
            self.scanned_to = pos
        if self._open is not None and self._open.wants_payload and self._open.md5:
            self._close_if_complete()
        return pos - start

    def finish(self) -> None:
        """The file is complete (not followed): take a last line without newline, close the last record."""
        fd = self._open_fd()
        size = os.fstat(fd).st_size
        if size > self.scanned_to:
            tail = pread_exact(fd, self.scanned_to, size)
            if b"\n" not in tail:
                tail += b"\n"
                self._scan_block(tail, len(tail), self.scanned_to)
                self.scanned_to = size
                self.size = size
        self._close_open(self.scanned_to)
        self._check_last_record()

    def _check_last_record(self) -> None:
        """A writer that died mid-record leaves a last payload shorter than its md5 says. With
        verify_md5 every payload was checked already; otherwise check this one now."""
        if self.verify_md5 or not self.offsets:
            return
        rec = len(self.offsets) - 1
        if rec == self._verified_rec:
            return  # its md5 was checked when it closed
        if self.load_payload(rec).md5_ok is False:
            self.md5_bad += 1
            self.sink.on_problem(self, self.offsets[rec], "torn record",
                                 "the last record's payload does not match its md5: cut short "
                                 "(the writer stopped mid-record) or edited")

    # ---- handing a half-indexed file between processes (model/parallel.py) ------------------

    def close_open_at(self, offset: int) -> None:
        self._close_open(offset)

    def detach_open(self) -> "_OpenRecord | None":
        record, self._open = self._open, None
        return record

    def attach_open(self, record: "_OpenRecord | None", base_rec: int, context_map: list[int]) -> None:
        if record is not None:
            record.rec += base_rec
            record.ctx = context_map[record.ctx]
        self._open = record

    def kind_code(self, name: str) -> int:
        code = self._kind_codes.get(name.encode())
        return self._new_kind(name.encode()) if code is None else code

    # ---- the scan loop -------------------------------------------------------------------

    def _skip_long_line(self, pos: int, data: bytes) -> None:
        if not self._skipping_long_line and data[:1] != b"\t":
            self._close_open(pos)
            self.sink.on_problem(self, pos, "long line", "a line over 8 MiB that is not payload")
        self._skipping_long_line = True

    def _scan_block(self, data: bytes, cut: int, base: int) -> None:
        """Index the complete lines data[:cut], which start at file offset `base`."""
        pos = 0
        if self._skipping_long_line:
            pos = data.find(b"\n", 0, cut) + 1
            self._skipping_long_line = False
        find = data.find
        startswith = data.startswith
        has_payload = _HAS_PAYLOAD
        fast = self._fast_cache
        tail_cache = self._tail_cache
        kind_codes = self._kind_codes
        offsets_append = self.offsets.append
        kinds_append = self.kinds.append
        contexts_append = self.contexts.append
        verify = self.verify_md5
        if pos < cut and data[pos] != 86:  # "V": lines before the first envelope
            self._check_region_start(data, pos, cut, base)
        p = pos if (pos < cut and data[pos] == 86) else find(b"V", pos, cut)
        while p >= 0:
            if p != pos and data[p - 1] != 10:  # a "V" inside a line
                p = find(b"V", p + 1, cut)
                continue
            eol = find(b"\n", p, cut)
            # Fast path: chromium events repeat their envelope exactly but for the timestamp (21
            # bytes) and the md5 (last 50 bytes): that middle part keys a cache of (kind, context).
            hit = fast.get(data[p + 22:eol - 50]) if startswith(has_payload, eol - 50) else None
            if hit is not None:
                if self._open is not None:
                    self._close_open(base + p)
                offsets_append(base + p)
                code, ctx = hit
                kinds_append(code)
                contexts_append(ctx)
                if verify:
                    self._open = _OpenRecord(len(self.offsets) - 1, base + p, base + eol + 1,
                                             self.kind_names[hit[0]], None, hit[1],
                                             data[eol - 34:eol - 2].decode("ascii", "replace"), False)
            else:
                j = find(b"] {", p, eol)
                h = find(_HAS_PAYLOAD, j, eol) if j > 0 else -1
                # describe_* records: their value varies, their context tail repeats.
                if j > 0 and not verify and startswith(b'{"describe_', j + 2) and data[eol - 1] in _CLOSING:
                    end = h if h > 0 else eol
                    k1 = find(b'"', j + 4, eol)
                    t = data.rfind(b'}, "', k1, end)
                    ctx = tail_cache.get(data[t + 3:end]) if t > 0 else None
                    code = kind_codes.get(data[j + 4:k1])
                    if ctx is not None and code is not None:
                        if self._open is not None:
                            self._close_open(base + p)
                        offsets_append(base + p)
                        kinds_append(code)
                        contexts_append(ctx)
                        nxt = eol + 1
                        if nxt < cut and data[nxt] != 86 and data[nxt] != 9:
                            self._check_region_start(data, nxt, cut, base)
                        p = find(b"V", nxt, cut)
                        continue
                self._scan_envelope(data, p, eol, j, h, base)
            nxt = eol + 1
            if nxt < cut and data[nxt] != 86 and data[nxt] != 9:
                self._check_region_start(data, nxt, cut, base)
            p = find(b"V", nxt, cut)

    def _scan_envelope(self, data: bytes, p: int, eol: int, j: int, h: int, base: int) -> None:
        """The general path for one envelope line at data[p:eol]."""
        if j < 0 or data[p + 5] != 32 or not data[p + 1:p + 5].isdigit():
            self._close_open(base + p)
            self.sink.on_problem(self, base + p, "bad line", _bad_line_message(data, p, eol))
            return
        if self._open is not None:
            self._close_open(base + p)
        k0 = j + 4
        k1 = data.find(b'"', k0, eol)
        kind_b = data[k0:k1]
        code = self._kind_codes.get(kind_b)
        if code is None:
            code = self._new_kind(kind_b)
        kind = self.kind_names[code]
        rec = len(self.offsets)
        meta = None
        md5 = None
        # The context sits after the event's value: `}, "frame_id": 0, ..., "has_payload": "…"}`;
        # a tail that repeats gives the context with no JSON parsing.
        end = h if h >= 0 else eol
        t = data.rfind(b'}, "', k1, end + 1)  # `+ 1`: an empty tail, `{}, "has_payload"`
        ctx = None
        # A whole envelope ends with "}"; a torn one (the writer died) goes to the JSON parser,
        # which says what is wrong with it.
        if t >= 0 and data[eol - 1] in _CLOSING:
            tail = data[t + 3:end]
            ctx = self._tail_cache.get(tail)
            if ctx is None:
                ctx = self._context_from_tail(tail)
        if ctx is not None and kind in self.sink.lazy_kinds:
            if h == eol - 50 and kind in self.sink.silent_kinds and data[k1:k1 + 5] == b'": {}':
                self._fast_cache[data[p + 22:h]] = (code, ctx)  # the fast path never calls the sink
            if h >= 0 and self.verify_md5:
                md5 = data[h + 16:h + 48].decode("ascii", "replace")
            self.offsets.append(base + p)
            self.kinds.append(code)
            self.contexts.append(ctx)
            self.sink.on_lazy_record(self, rec, kind, ctx)
            if md5:
                self._open = _OpenRecord(rec, base + p, base + eol + 1, kind, None, ctx, md5, False)
            return
        else:
            if ctx is not None and kind == "artifact":
                # artifact names repeat: `{"artifact": {"name": "x", "encoding": "string"}` is parsed once
                event = data[j + 2:t + 1]
                meta = self._event_cache.get(event)
                if meta is None:
                    meta = _loads_object(event + b"}")
                    if meta is not None and len(self._event_cache) < 4096:
                        self._event_cache[event] = meta
            if meta is None:
                try:
                    meta = orjson.loads(_without_configs(data, j + 2, eol)
                                        if kind_b.endswith(b"compilation_metrics") else data[j + 2:eol])
                except orjson.JSONDecodeError as exc:
                    self.sink.on_problem(self, base + p, "bad json",
                                         f"metadata is not valid JSON ({exc.msg})")
                    return
                if not isinstance(meta, dict) or not meta:
                    self.sink.on_problem(self, base + p, "bad json", "metadata is not a JSON object")
                    return
                kind = next((k for k in meta if k not in CONTEXT_KEYS), kind)
                if kind.encode() != kind_b:
                    code = self._kind_codes.get(kind.encode())
                    if code is None:
                        code = self._new_kind(kind.encode())
                if ctx is None:
                    ctx = self._context(meta)
            if h >= 0:
                md5 = data[h + 16:h + 48].decode("ascii", "replace")
        self.offsets.append(base + p)
        self.kinds.append(code)
        self.contexts.append(ctx)
        wants = False
        if meta is not None:
            if kind == "str":
                self._intern(meta.get("str"), base + p)
            wants = self.sink.on_record(self, rec, kind, meta, ctx)
            if not (wants or self.verify_md5):
                md5 = None  # checked when a pane loads it
        if wants or md5:
            self._open = _OpenRecord(rec, base + p, base + eol + 1, kind,
                                     meta if wants else None, ctx, md5, wants)

    def _check_region_start(self, buf: bytes, pos: int, cut: int, base: int) -> None:
        """Report the non-payload lines at `pos` (garbage between records, NUL bytes, blank lines)."""
        while pos < cut and buf[pos] != 86 and buf[pos] != 9:
            eol = buf.find(b"\n", pos, cut)
            line = bytes(buf[pos:eol])
            if line.strip(b"\r "):
                self._close_open(base + pos)
                self.sink.on_problem(self, base + pos, "bad line", _bad_line_message(buf, pos, eol))
            pos = eol + 1

    def _new_kind(self, kind_b: bytes) -> int:
        code = len(self.kind_names)
        self.kind_names.append(kind_b.decode("utf-8", "replace"))
        self._kind_codes[kind_b] = code
        return code

    def _context_from_tail(self, key: bytes) -> int | None:
        text = key.rstrip(b" ,}\r")
        try:
            fields = orjson.loads(b"{" + text + b"}") if text else {}
        except orjson.JSONDecodeError:
            return None
        if not isinstance(fields, dict) or not fields.keys() <= CONTEXT_KEYS:
            return None  # not a context tail (e.g. a `stack` field): parse the whole record
        ctx = self._context(fields)
        self._tail_cache[key] = ctx
        return ctx

    def _context(self, fields: dict) -> int:
        get = fields.get
        key = (get("rank"), get("compiled_autograd_id"), get("frame_id"), get("frame_compile_id"),
               get("attempt"))
        try:
            ctx = self._context_cache.get(key)
        except TypeError:  # unhashable values (a list where a number belongs)
            ctx, key = None, None
        if ctx is None:
            ctx = self._new_context(fields)
            if key is not None:
                self._context_cache[key] = ctx
        return ctx

    def _new_context(self, fields: dict) -> int:
        rank = fields.get("rank")
        if not isinstance(rank, int) or isinstance(rank, bool):
            rank = None
        if self.rank_from_name is not None:
            # One file is one process: the name's rank holds for all its records. Records that say
            # otherwise were copied from another rank's file (tlparse also goes by the name).
            if rank is not None and rank != self.rank_from_name and not self._rank_from_record:
                self._rank_from_record = True
                self.sink.on_problem(self, self.scanned_to, "rank mismatch",
                                     f"records say rank {rank}, the file name says rank "
                                     f"{self.rank_from_name}: going by the file name")
            rank = self.rank_from_name
        elif rank is not None and not self._rank_from_record:
            self.rank = rank  # a process that logged before init_process_group: no rank in its name
            self._rank_from_record = True
        cid = CompileId.from_fields(fields.get("compiled_autograd_id"), fields.get("frame_id"),
                                    fields.get("frame_compile_id"), fields.get("attempt"))
        return self.sink.context_code(self, rank if rank is not None else self.rank, cid)

    def _intern(self, entry, offset: int) -> None:
        if (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], int)):
            self.strings[entry[1]] = entry[0]
        else:
            self.sink.on_problem(self, offset, "bad string", "a string-table record of the wrong shape")

    # ---- closing records -----------------------------------------------------------------

    def _close_open(self, end: int) -> None:
        """The open record ends at `end` (the next envelope or the end of the file)."""
        rec = self._open
        if rec is None:
            return
        self._open = None
        decoded = None
        if rec.md5 or rec.wants_payload:
            decoded = self._decode(rec.payload_start, end)
            if rec.md5:
                self._verified_rec = rec.rec
                if md5_hex(decoded.text) == rec.md5:
                    self.md5_ok += 1
                else:
                    self.md5_bad += 1
                    self.sink.on_problem(self, rec.offset, "md5 mismatch",
                                         f"the {rec.kind} payload does not match its md5")
        if rec.wants_payload:
            self.sink.on_payload(self, rec.rec, rec.kind, rec.meta, rec.ctx,
                                 decoded.text if decoded else None)

    def _close_if_complete(self) -> None:
        """In follow mode the last record closes early when its payload already matches its md5."""
        rec = self._open
        decoded = self._decode(rec.payload_start, self.scanned_to, report=False)
        if md5_hex(decoded.text) == rec.md5:
            self._close_open(self.scanned_to)

    def _decode(self, start: int, end: int, report: bool = True) -> DecodedPayload:
        decoded = decode_region(self.read_range(start, end))
        if report:
            if decoded.blank_lines:
                self.sink.on_problem(self, start + decoded.blank_lines[0], "blank line",
                                     f"{len(decoded.blank_lines)} blank line(s) inside a payload "
                                     "(skipped, as tlparse does)")
            for rel in decoded.bad_lines:
                self.sink.on_problem(self, start + rel, "bad line", "a line inside a payload that is "
                                     "neither payload (TAB) nor an envelope")
        return decoded

    # ---- lazy access ---------------------------------------------------------------------

    def record_span(self, rec: int) -> tuple[int, int]:
        """(envelope offset, end offset) of record `rec`."""
        end = self.offsets[rec + 1] if rec + 1 < len(self.offsets) else self.scanned_to
        return self.offsets[rec], end

    def load_record(self, rec: int) -> tuple[dict | None, bytes, DecodedPayload]:
        """Read one record from disk: (metadata, envelope line, payload)."""
        start, end = self.record_span(rec)
        raw = self.read_range(start, end)
        eol = raw.find(b"\n")
        line = raw if eol < 0 else raw[:eol]
        j = line.find(b"] {")
        try:
            meta = orjson.loads(line[j + 2:]) if j >= 0 else None
        except orjson.JSONDecodeError:
            meta = None
        decoded = decode_region(raw[eol + 1:] if eol >= 0 else b"")
        return meta, line, decoded

    def load_payload_lines(self, rec: int, chunk: int = 2 << 20) -> tuple[list[str], LoadedPayload]:
        """A payload as lines, read and decoded a chunk at a time (for a pane, from a worker).

        A 100 MB graph is decoded, hashed and split in steps of `chunk` bytes with a pause
        between them, so the UI thread gets the GIL in between instead of stalling for seconds.
        """
        start, end = self.record_span(rec)
        head = self.read_range(start, min(end, start + (1 << 20)))
        eol = head.find(b"\n")
        if eol < 0 or end - start <= chunk:
            payload = self.load_payload(rec)
            return payload.text.split("\n"), payload
        j = head.find(b"] {", 0, eol)
        try:
            meta = orjson.loads(head[j + 2:eol]) if j >= 0 else {}
        except orjson.JSONDecodeError:
            meta = {}
        digest = hashlib.md5()
        lines: list[str] = []
        problems: list[str] = []
        pos = start + eol + 1
        carry = b""
        first = True
        while pos < end or carry:
            block = carry + (self.read_range(pos, min(end, pos + chunk)) if pos < end else b"")
            pos = min(end, pos + chunk)
            cut = block.rfind(b"\n") + 1 if pos < end else len(block)
            if cut == 0:
                carry = block
                continue
            part, carry = block[:cut], block[cut:]
            decoded = decode_region(part)
            digest.update(decoded.text if first else b"\n" + decoded.text)
            first = False
            lines.extend(decoded.text.decode("utf-8", "replace").split("\n"))
            if decoded.bad_lines:
                problems.append("lines that are not payload follow it (not shown)")
                break
            time.sleep(0)  # let the UI thread have the GIL
        expected = meta.get("has_payload") if isinstance(meta, dict) else None
        md5_ok = None if not isinstance(expected, str) else digest.hexdigest() == expected
        if md5_ok is False:
            problems.insert(0, "md5 mismatch: the payload differs from what torch wrote")
        return lines, LoadedPayload("", md5_ok, problems)

    def load_payload(self, rec: int) -> LoadedPayload:
        """Read a record's payload from disk and verify its md5."""
        meta, _line, decoded = self.load_record(rec)
        problems = []
        md5_ok = None
        expected = meta.get("has_payload") if isinstance(meta, dict) else None
        if isinstance(expected, str):
            md5_ok = md5_hex(decoded.text) == expected
            if not md5_ok:
                problems.append("md5 mismatch: the payload differs from what torch wrote "
                                "(edited, truncated or still being written)")
        payload_start = self.offsets[rec] + len(_line) + 1
        for rel in decoded.bad_lines[:1]:
            problems.append(f"line {self.line_number(payload_start + rel)}: a line that is neither "
                            f"payload nor a record ({len(decoded.bad_lines)} such line(s))")
        if decoded.blank_lines:
            problems.append(f"{len(decoded.blank_lines)} blank line(s) inside the payload were skipped")
        return LoadedPayload(decoded.text.decode("utf-8", "replace"), md5_ok, problems)

    def line_number(self, offset: int) -> int:
        """1-based line number of a byte offset (counted on demand: the scan does not count lines)."""
        return line_number_at(self._open_fd(), offset)

    def frame_filename(self, index) -> str:
        if isinstance(index, str):
            return index
        name = self.strings.get(index)
        return name if name is not None else f"(unknown string {index})"


def _without_configs(data: bytes, start: int, end: int) -> bytes:
    """The metrics JSON without its config strings (kept on disk; the pane reads the record).

    Inside those escaped JSON strings every quote is `\\"`, so the first `", "` after the field's
    start is its end."""
    cuts = []
    for name in _CONFIG_FIELDS:
        at = data.find(name, start, end)
        stop = data.find(b'", "', at + len(name), end) if at >= 0 else -1
        if stop >= 0:
            cuts.append((at, stop + 3))
    if not cuts:
        return data[start:end]
    parts = []
    pos = start
    for at, stop in sorted(cuts):
        if at < pos:
            return data[start:end]  # overlapping: not the layout we know, parse it all
        parts.append(data[pos:at])
        pos = stop
    parts.append(data[pos:end])
    return b"".join(parts)


def _loads_object(data: bytes) -> dict | None:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and value else None


def _bad_line_message(buf: bytes, start: int, end: int) -> str:
    line = bytes(buf[start:min(end, start + 60)])
    if b"\x00" in line:
        return "a line with NUL bytes (a torn or corrupted write)"
    return f"not a trace record: {line.decode('utf-8', 'replace')!r}"
