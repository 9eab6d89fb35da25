"""Where each record of a trace file ends: the open record closed and its payload checked, and the
bytes after a record that belong to none (a mixin of TraceFile).

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

from tlview.source.payload import MD5_MISMATCH, decode_file_region, size_text, whole_payload

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
    """Closing records, and the offsets where bytes of no record begin."""

    cuts: array  # ascending file offsets where bytes that belong to no record begin

    def _cut(self, offset: int) -> None:
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

    def _check_last_record(self) -> None:
        """A writer that died mid-record leaves a last payload shorter than its md5 says. With
        verify_md5 every payload was checked already; otherwise check this one now."""
        if self.verify_md5 or not self.offsets:
            return
        rec = len(self.offsets) - 1
        if rec == self._verified_rec:
            return  # its md5 was checked when it closed
        if self.payload_md5_ok(rec) is False:
            self.md5_bad += 1
            self.sink.on_problem(self, self.offsets[rec], "torn record",
                                 "the last record's payload does not match its md5: cut short "
                                 "(the writer stopped mid-record) or edited")

    def close_open_at(self, offset: int) -> None:
        self._close_open(offset)

    def _close_open(self, end: int) -> None:
        """The open record ends at `end` (the next envelope or the end of the file)."""
        rec = self._open
        if rec is None:
            return
        self._open = None
        if rec.md5 and self._payload_in_block(rec, end):
            return
        # Read a few MiB at a time: memory does not follow a payload's size.
        decoded = decode_file_region(self.read_range, rec.payload_start, end,
                                     keep=PAYLOAD_KEPT if rec.wants_payload else 0)
        if decoded.blank_lines:
            self.sink.on_problem(self, rec.payload_start + decoded.blank_lines[0], "blank line",
                                 f"{len(decoded.blank_lines)} blank line(s) inside a payload "
                                 "(skipped, as tlparse does)")
        if decoded.bad_lines:
            self._cut(rec.payload_start + decoded.bad_lines[0])  # the payload ended above it
        for rel in decoded.bad_lines:
            self.sink.on_problem(self, rec.payload_start + rel, "bad line", "a line after a payload "
                                 "that is neither payload (TAB) nor an envelope (the record ends above it)")
        if rec.md5:
            self._verified_rec = rec.rec
            if decoded.md5 == rec.md5:
                self.md5_ok += 1
            else:
                self.md5_bad += 1
                self.sink.on_problem(self, rec.offset, "md5 mismatch", f"{rec.kind}: {MD5_MISMATCH}")
        if rec.wants_payload:
            if decoded.truncated:
                self.sink.on_problem(self, rec.offset, "huge payload",
                                     f"{rec.kind}: a payload of {size_text(decoded.size)}; only its "
                                     f"first {size_text(PAYLOAD_KEPT)} are read")
            self.sink.on_payload(self, rec.rec, rec.kind, rec.ctx, rec.meta, decoded.kept_text())

    def _payload_in_block(self, rec: OpenRecord, end: int) -> bool:
        """A payload that lies in the block being scanned, checked from memory (the common case)."""
        if self._block is None or (rec.wants_payload and end - rec.payload_start > PAYLOAD_KEPT):
            return False
        text = whole_payload(self._block, rec.payload_start - self._block_base,
                             end - self._block_base, rec.md5)
        if text is None:
            return False
        self._verified_rec = rec.rec
        self.md5_ok += 1
        if rec.wants_payload:
            self.sink.on_payload(self, rec.rec, rec.kind, rec.ctx, rec.meta, text)
        return True
