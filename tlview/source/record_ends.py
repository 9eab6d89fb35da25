"""Where each record of a trace file ends: the open record closed and its payload checked, and the
bytes after a record that belong to none: an object each TraceFile owns (`record_ends`).

A record is its envelope line and its payload's own lines (TAB-led). Garbage after them, a line
that is not JSON, a torn record before a whole one, a byte-order mark in mid-file: each is a
problem of its own and never part of the record before, so a record read back from its span
(`record_span`: a pane, a Chrome trace of its chromium events) is what was written, whatever
follows it. The scan notes where such bytes begin (`cuts`: a few offsets, only in a damaged file);
the span of a record ends at the first cut after its start. Payload lines the scan does not look
at (a chromium event's, unless md5s are checked) are cut by their reader (record_stream.py).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tlview.source.payload import MD5_MISMATCH, decode_file_region, size_text, whole_payload

if TYPE_CHECKING:
    from tlview.source.trace_file import TraceFile

PAYLOAD_KEPT = 16 << 20  # of a payload the index parses (reasons, guards): more is not read


@dataclass(slots=True)
class OpenRecord:
    """The last record, whose payload may still grow."""

    rec: int  # record number in the file
    offset: int  # envelope line start
    payload_start: int  # first byte after the envelope line
    kind: str
    meta: dict | None  # kept only when the sink wants the payload
    ctx: int
    md5: str | None
    wants_payload: bool


class RecordEnds:
    """Closing records, and the offsets where bytes of no record begin.

    Counts each payload it checks in its file's `md5_ok` / `md5_bad`, and hands each payload the
    sink asked for to the file's sink."""

    def __init__(self, file: TraceFile) -> None:
        self.file = file
        self.cuts = array("q")  # ascending file offsets where bytes that belong to no record begin
        self.open: OpenRecord | None = None  # the last record, whose payload may still grow
        self.verified_rec = -1  # the last record whose md5 was checked when it closed
        # The block being scanned, kept at hand: a record that closes inside it is hashed from
        # memory (no second read). None between blocks.
        self.block: bytes | None = None
        self.block_base = 0

    def cut(self, offset: int) -> None:
        """Bytes of no record begin at `offset`: the record before ends there."""
        cuts = self.cuts
        if not cuts or offset > cuts[-1]:
            cuts.append(offset)  # (the scan finds them in file order)
            return
        at = bisect_right(cuts, offset)
        if at == 0 or cuts[at - 1] != offset:
            cuts.insert(at, offset)

    def record_end(self, start: int, end: int) -> int:
        """The end of the record at `start` that the next record (or the file) would end at `end`:
        before the first bytes of no record in between."""
        cuts = self.cuts
        if cuts:
            i = bisect_right(cuts, start)
            if i < len(cuts) and cuts[i] < end:
                return cuts[i]
        return end

    def check_last_record(self) -> None:
        """A writer that died mid-record leaves a last payload shorter than its md5 says. With
        verify_md5 every payload was checked already; otherwise check this one now."""
        file = self.file
        if file.verify_md5 or not file.offsets:
            return
        rec = len(file.offsets) - 1
        if rec == self.verified_rec:
            return  # its md5 was checked when it closed
        if file.records.payload_md5_ok(rec) is False:
            file.md5_bad += 1
            file.sink.on_problem(file, file.offsets[rec], "torn record",
                                 "the last record's payload does not match its md5: cut short "
                                 "(the writer stopped mid-record) or edited")

    def close_open(self, end: int) -> None:
        """The open record ends at `end` (the next envelope or the end of the file)."""
        rec = self.open
        if rec is None:
            return
        self.open = None
        if rec.md5 and self.payload_in_block(rec, end):
            return
        file = self.file
        sink = file.sink
        # Read a few MiB at a time: memory does not follow a payload's size.
        decoded = decode_file_region(file.read_range, rec.payload_start, end,
                                     keep=PAYLOAD_KEPT if rec.wants_payload else 0)
        if decoded.blank_lines:
            sink.on_problem(file, rec.payload_start + decoded.blank_lines[0], "blank line",
                            f"{len(decoded.blank_lines)} blank line(s) inside a payload "
                            "(skipped, as tlparse does)")
        if decoded.bad_lines:
            self.cut(rec.payload_start + decoded.bad_lines[0])  # the payload ended above it
        for rel in decoded.bad_lines:
            sink.on_problem(file, rec.payload_start + rel, "bad line", "a line after a payload "
                            "that is neither payload (TAB) nor an envelope (the record ends above it)")
        if rec.md5:
            self.verified_rec = rec.rec
            if decoded.md5 == rec.md5:
                file.md5_ok += 1
            else:
                file.md5_bad += 1
                sink.on_problem(file, rec.offset, "md5 mismatch", f"{rec.kind}: {MD5_MISMATCH}")
        if rec.wants_payload:
            if decoded.truncated:
                sink.on_problem(file, rec.offset, "huge payload",
                                f"{rec.kind}: a payload of {size_text(decoded.size)}; only its "
                                f"first {size_text(PAYLOAD_KEPT)} are read")
            sink.on_payload(file, rec.rec, rec.kind, rec.ctx, rec.meta or {}, decoded.kept_text())

    def payload_in_block(self, rec: OpenRecord, end: int) -> bool:
        """A payload that lies in the block being scanned, checked from memory (the common case)."""
        if (self.block is None or rec.md5 is None
                or (rec.wants_payload and end - rec.payload_start > PAYLOAD_KEPT)):
            return False
        text = whole_payload(self.block, rec.payload_start - self.block_base, end - self.block_base, rec.md5)
        if text is None:
            return False
        self.verified_rec = rec.rec
        self.file.md5_ok += 1
        if rec.wants_payload:
            self.file.sink.on_payload(self.file, rec.rec, rec.kind, rec.ctx, rec.meta or {}, text)
        return True
