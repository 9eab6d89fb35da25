"""Incremental reading of TORCH_LOGS text (stderr of a job run with TORCH_LOGS=...).

Every line of a multi-line log record carries the same prefix:
`[rank0]:V1121 23:26:41.460000 17404 torch/_dynamo/x.py:5124] [0/0] [__graph_breaks] message`.
Lines with one prefix are grouped into one record. Ranks interleave in one stream, so a record
stays open per process (pid) until that process writes a line with another prefix; lines of
other processes in between do not end it. Lines with no prefix (user prints, Python warnings,
torchrun's messages) become plain records.

Only offsets are kept: a record's text is read back from disk when shown.
"""

from __future__ import annotations

import os
import re
from array import array
from dataclasses import dataclass, field
from typing import Protocol

from tlview.model.compile_id import CompileId
from tlview.source.payload import LoadedPayload, line_number_at, pread_exact

LINE_RE = re.compile(
    rb"^(?:\[rank(?P<rank>\d+)\]:)?(?P<level>[VIWEC])(?P<date>\d{4}) (?P<time>\d\d:\d\d:\d\d\.\d{6})"
    rb" (?P<pid>\d+) (?P<path>[^:\]\n]+):(?P<lineno>\d+)\]"
    rb"(?: \[(?P<cid>(?:!\d+(?:/\d+/\d+)?|\d+/\d+)(?:_\d+)?)\])?(?: \[__(?P<artifact>\w+)\])? ?"
)
PLAIN = "other"
BLOCK_SIZE = 4 << 20


class TextSink(Protocol):
    def on_text_record(self, log: "TextLog", rec: int, rank: int | None, cid: CompileId | None,
                       channel: str, level: str, lines: list[str]) -> None: ...

    def on_problem(self, source, offset: int, kind: str, message: str) -> None: ...


def channel_of(path: str, artifact: str | None) -> str:
    """The TORCH_LOGS name a line belongs to: its artifact, else its logger's area."""
    if artifact:
        return artifact
    if "fx/experimental/symbolic_shapes" in path or "fx/experimental/recording" in path:
        return "dynamic"
    for part, name in (("_dynamo", "dynamo"), ("_inductor", "inductor"), ("_functorch", "aot"),
                       ("distributed", "distributed"), ("_export", "export")):
        if part in path:
            return name
    return "torch"


@dataclass(slots=True)
class _Open:
    rec: int
    key: bytes  # the prefix
    rank: int | None
    cid: CompileId | None
    channel: str
    level: str
    lines: list[str]


@dataclass(eq=False)
class TextLog:
    path: str
    sink: TextSink
    offsets: array = field(default_factory=lambda: array("q"))  # first line of each record
    ends: array = field(default_factory=lambda: array("q"))  # end of its last line
    prefixes: list[bytes | None] = field(default_factory=list)  # None for plain records
    scanned_to: int = 0
    size: int = 0
    lines: int = 0
    glog_lines: int = 0
    ranks: set = field(default_factory=set)
    _open: dict = field(default_factory=dict)  # pid (or None for plain lines) -> _Open
    _fd: int | None = None

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
        fd = self._open_fd()
        self.size = os.fstat(fd).st_size
        start = self.scanned_to
        end = self.size if limit is None else min(self.size, start + limit)
        pos = start
        while pos < end:
            chunk = os.pread(fd, min(BLOCK_SIZE, end - pos), pos)
            if not chunk:
                break
            cut = chunk.rfind(b"\n") + 1
            if cut == 0:
                if len(chunk) < BLOCK_SIZE:
                    break  # partial line: wait for the rest
                cut = len(chunk)  # a huge line: taken as it is
            self._scan(chunk[:cut], pos)
            pos += cut
            self.scanned_to = pos
        return pos - start

    def finish(self) -> None:
        fd = self._open_fd()
        size = os.fstat(fd).st_size
        if size > self.scanned_to:
            tail = pread_exact(fd, self.scanned_to, size)
            self._scan(tail + b"\n", self.scanned_to)
            self.scanned_to = size
        for key in list(self._open):
            self._close(key)

    def _scan(self, data: bytes, base: int) -> None:
        pos = 0
        end = len(data)
        match = LINE_RE.match
        while pos < end:
            nl = data.find(b"\n", pos)
            if nl < 0:
                nl = end
            line = data[pos:nl]
            self.lines += 1
            m = match(line)
            if m is None:
                self._plain(line, base + pos, base + nl + 1)
            else:
                self.glog_lines += 1
                self._glog(m, line, base + pos, base + nl + 1)
            pos = nl + 1

    def _glog(self, m: re.Match, line: bytes, start: int, end: int) -> None:
        pid = m.group("pid")
        key = line[:m.end()]
        message = line[m.end():].decode("utf-8", "replace")
        current = self._open.get(pid)
        if current is not None and current.key == key:
            current.lines.append(message)
            self.ends[current.rec] = end
            return
        if current is not None:
            self._close(pid)
        self._close(None)  # a prefixed line ends a run of plain lines
        rank = int(m.group("rank")) if m.group("rank") is not None else None
        if rank is not None:
            self.ranks.add(rank)
        cid_text = m.group("cid")
        cid = CompileId.parse(cid_text.decode()) if cid_text else None
        path = m.group("path").decode("utf-8", "replace")
        artifact = m.group("artifact").decode() if m.group("artifact") else None
        rec = self._new(start, end, key)
        self._open[pid] = _Open(rec, key, rank, cid, channel_of(path, artifact),
                                m.group("level").decode(), [message])

    def _plain(self, line: bytes, start: int, end: int) -> None:
        text = line.decode("utf-8", "replace")
        current = self._open.get(None)
        if not text.strip():
            if current is not None:
                current.lines.append(text)
                self.ends[current.rec] = end
            return
        if current is not None:
            current.lines.append(text)
            self.ends[current.rec] = end
            return
        rec = self._new(start, end, None)
        self._open[None] = _Open(rec, b"", None, None, PLAIN, "", [text])

    def _new(self, start: int, end: int, key: bytes | None) -> int:
        self.offsets.append(start)
        self.ends.append(end)
        self.prefixes.append(key)
        return len(self.offsets) - 1

    def _close(self, pid) -> None:
        rec = self._open.pop(pid, None)
        if rec is None:
            return
        lines = rec.lines
        while lines and not lines[-1].strip():
            lines.pop()
        self.sink.on_text_record(self, rec.rec, rec.rank, rec.cid, rec.channel, rec.level, lines)

    # ---- lazy access ---------------------------------------------------------------------

    def load_payload(self, rec: int) -> LoadedPayload:
        return LoadedPayload(self.payload_text(rec), None, [])

    def payload_text(self, rec: int) -> str:
        """The message lines of record `rec`, prefixes removed, read from disk."""
        raw = self.read_range(self.offsets[rec], self.ends[rec])
        key = self.prefixes[rec]
        out = []
        for line in raw.split(b"\n"):
            if key is None:
                if LINE_RE.match(line) is None:
                    out.append(line)
            elif line.startswith(key):
                rest = line[len(key):]
                out.append(rest)
        while out and not out[-1].strip():
            out.pop()
        return b"\n".join(out).decode("utf-8", "replace")

    def line_number(self, offset: int) -> int:
        """1-based line number of a byte offset (counted on demand: the scan does not count lines)."""
        return line_number_at(self._open_fd(), offset)
