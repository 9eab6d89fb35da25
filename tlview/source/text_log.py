"""Incremental reading of TORCH_LOGS text (stderr of a job run with TORCH_LOGS=...).

Every line of a multi-line log record carries the same prefix:
`[rank0]:V1121 23:26:41.460000 17404 torch/_dynamo/x.py:5124] [0/0] [__graph_breaks] message`.
Lines with one prefix are grouped into one record. Ranks interleave in one stream, so a record
stays open per process (pid) until that process writes a line with another prefix; lines of
other processes, user prints and Python warnings in between do not end it. Lines with no prefix
become plain records.

Only offsets are kept: a record's text is read back from disk when shown. The sink says which
channels it reads lazily (graphs, code, guards: only their first line is handed over); the lines
of the others (reasons, failures) are handed over whole, up to a bound.

What a terminal adds is taken off before matching: ANSI colour codes (stderr of a tty) and
torchrun's `[default3]:` tee prefix.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from typing import Protocol

from tlview.source.payload import SHOWN_BYTES, LoadedPayload, size_text
from tlview.source.reader import IncrementalFile

LINE_RE = re.compile(
    rb"^(?:\[rank(?P<rank>\d+)\]:)?(?P<level>[VIWEC])(?P<date>\d{4}) (?P<time>\d\d:\d\d:\d\d\.\d{6})"
    rb" (?P<pid>\d+) (?P<path>[^:\]\n]+):(?P<lineno>\d+)\]"
    rb"(?: \[(?P<cid>(?:!\d+(?:/\d+/\d+)?|\d+/\d+)(?:_\d+)?)\])?(?: \[__(?P<artifact>\w+)\])? ?"
)
# The exceptions of torch.compile that end a job's traceback (the line starts with the class).
TORCH_EXCEPTIONS = ("torch._dynamo.exc.", "torch._inductor.exc.", "torch.fx.experimental.symbolic_shapes.")
_ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
# The start of a line that may carry torch's prefix (or a terminal's or torchrun's before it);
# any other line is a plain one.
_MAYBE_PREFIXED = re.compile(rb"^(?:[\[\x1b]|[VIWEC]\d{4} )", re.MULTILINE)
_TEE = re.compile(rb"^\[[A-Za-z_]*\d+\]:(?=\[rank|[VIWEC]\d{4} )")  # torchrun's `[default3]:`
PLAIN = "other"
KEPT_LINES = 4000  # lines of one record handed to the sink; the rest stay on disk
KEPT_LAZY_LINES = 12  # of a record the sink reads lazily: its head (a graph's first lines)
KEPT_LINE_CHARS = 16_000  # of one line handed over (a 200 MB print is read from disk if shown)


def clean_line(line: bytes) -> bytes:
    """A log line without what a terminal or torchrun added around torch's own prefix."""
    if b"\x1b" in line:
        line = _ANSI.sub(b"", line)
    if line[:1] == b"[" and not line.startswith(b"[rank"):
        line = _TEE.sub(b"", line, count=1)
    return line


@dataclass(slots=True)
class TextLines:
    """One record of a text log, as the reader hands it over."""

    rec: int
    rank: int | None
    pid: int | None
    cid: str | None  # the compile-id tag as written (`0/1_1`, `!0`), None when untagged
    channel: str  # the artifact (`graph_breaks`), else the logger's area (`dynamo`), or PLAIN
    level: str  # V I W E C, "" for plain lines
    path: str  # the logging call's file (`torch/_dynamo/convert_frame.py`), "" for plain lines
    lines: list[str]  # the message lines, prefixes removed (only the first for lazy channels)
    counted: int = 0  # of all its lines, those the sink asked to count (counted_text_lines)


class TextSink(Protocol):
    lazy_text_channels: frozenset
    counted_text_lines: dict  # channel -> a compiled pattern of the lines to count

    def on_text_record(self, log: TextLog, record: TextLines) -> None: ...

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


class TextLog(IncrementalFile):
    block_size = 4 << 20
    md5_bad = 0  # payloads whose md5 did not match: text has no md5s (a trace file counts them)

    def __init__(self, path: str, sink: TextSink) -> None:
        super().__init__(path)
        self.sink = sink
        self.offsets = array("q")  # first line of each record
        self.ends = array("q")  # end of its last line
        self.prefixes: list[bytes | None] = []  # the prefix of its lines; None for plain records
        self.lines = 0
        self.glog_lines = 0
        self.ranks: set[int] = set()
        self.pids: set[int] = set()
        self.channels: set[str] = set()  # the TORCH_LOGS artifacts and areas seen
        self.started: dict[int, str] = {}  # pid -> "MMDD HH:MM:SS.ffffff" of its first line
        self._open: dict = {}  # pid (or None for plain lines) -> TextLines
        self._keys: dict = {}  # pid -> the open record's prefix

    # ---- scanning ------------------------------------------------------------------------------

    def scan_block(self, data: bytes, cut: int, base: int) -> None:
        pos = 0
        match = LINE_RE.match
        while pos < cut:
            plain = self._open.get(None)
            if plain is not None and len(plain.lines) >= KEPT_LINES:
                pos = self._skip_plain_run(plain, data, pos, cut, base)
                if pos >= cut:
                    break
            nl = data.find(b"\n", pos, cut)
            if nl < 0:
                nl = cut
            line = data[pos:nl]
            if line.endswith(b"\r"):
                line = line[:-1]
            self.lines += 1
            if line[:1] in (b"\x1b", b"["):
                line = clean_line(line)
            m = match(line)
            if m is None:
                self._plain(line, base + pos, base + nl + 1)
            else:
                self.glog_lines += 1
                self._glog(m, line, base + pos, base + nl + 1)
            pos = nl + 1

    def _skip_plain_run(self, plain: TextLines, data: bytes, pos: int, cut: int, base: int) -> int:
        """A run of prints past the lines kept of it: what is left of the run only moves the
        record's end, so it is passed over in one search instead of a match per line (a 1 GB
        log of prints is read at the speed of the search). Returns where the next line that may
        be torch's starts."""
        found = _MAYBE_PREFIXED.search(data, pos, cut)
        stop = found.start() if found else cut
        if stop > pos:  # data[:cut] is whole lines, and `stop` starts one: the run is whole lines
            self.lines += data.count(b"\n", pos, stop)
            self.ends[plain.rec] = base + stop
        return stop

    def report_problem(self, offset: int, kind: str, message: str) -> None:
        self.sink.on_problem(self, offset, kind, message)

    def long_line(self, pos: int, data: bytes) -> int:
        # A line longer than a block (a huge print): a plain record of its first block only.
        self._plain(data[:200], pos, pos + len(data))
        return len(data)

    def end_of_input(self) -> None:
        self.close_records()

    def close_records(self) -> bool:
        """Hand over the records still open (a partial last line stays for later); True if any."""
        keys = list(self._open)
        for key in keys:
            self._close(key)
        return bool(keys)

    def _glog(self, m: re.Match, line: bytes, start: int, end: int) -> None:
        pid = m.group("pid")
        key = line[:m.end()]
        message = line[m.end():m.end() + KEPT_LINE_CHARS].decode("utf-8", "replace")
        current = self._open.get(pid)
        if current is not None and self._keys[pid] == key:
            self._extend(current, message, end)
            return
        if current is not None:
            self._close(pid)
        self._close(None)  # a prefixed line ends a run of plain lines
        rank = int(m.group("rank")) if m.group("rank") is not None else None
        if rank is not None:
            self.ranks.add(rank)
        if int(pid) not in self.pids:
            self.pids.add(int(pid))
            self.started[int(pid)] = f"{m.group('date').decode()} {m.group('time').decode()}"
        cid = m.group("cid")
        artifact = m.group("artifact")
        path = m.group("path").decode("utf-8", "replace")
        channel = channel_of(path, artifact.decode() if artifact else None)
        self.channels.add(channel)
        rec = self._new(start, end, key)
        self._keys[pid] = key
        record = TextLines(rec, rank, int(pid), cid.decode() if cid else None, channel,
                           m.group("level").decode(), path, [message])
        self._count(record, message)
        self._open[pid] = record

    def _plain(self, line: bytes, start: int, end: int) -> None:
        text = line[:KEPT_LINE_CHARS].decode("utf-8", "replace")
        current = self._open.get(None)
        if current is not None:
            self._extend(current, text, end)
            return
        if not text.strip():
            return
        rec = self._new(start, end, None)
        self._open[None] = TextLines(rec, None, None, None, PLAIN, "", "", [text])

    def _extend(self, record: TextLines, message: str, end: int) -> None:
        self.ends[record.rec] = end
        self._count(record, message)
        keep = KEPT_LAZY_LINES if record.channel in self.sink.lazy_text_channels else KEPT_LINES
        if len(record.lines) < keep:
            record.lines.append(message[:KEPT_LINE_CHARS])

    def _count(self, record: TextLines, message: str) -> None:
        if (pattern := self.sink.counted_text_lines.get(record.channel)) is not None and pattern.match(message):
            record.counted += 1

    def _new(self, start: int, end: int, key: bytes | None) -> int:
        self.offsets.append(start)
        self.ends.append(end)
        self.prefixes.append(key)
        return len(self.offsets) - 1

    def _close(self, pid) -> None:
        record = self._open.pop(pid, None)
        if record is None:
            return
        lines = record.lines
        while lines and not lines[-1].strip():
            lines.pop()
        self.sink.on_text_record(self, record)

    # ---- lazy access ---------------------------------------------------------------------------

    def verified_md5(self, rec: int) -> None:
        return None  # (text has no md5s)

    def load_payload(self, rec: int) -> LoadedPayload:
        text, more = self._read_record(rec, SHOWN_BYTES)
        problems = [(f"a record of {size_text(more + SHOWN_BYTES)}: only its first "
                     f"{size_text(SHOWN_BYTES)} are shown")] if more else []
        return LoadedPayload.of_text(text, None, problems)

    def payload_text(self, rec: int, limit: int = SHOWN_BYTES) -> str:
        """The message lines of record `rec`, prefixes removed, read from disk (its first `limit`
        bytes: a 200 MB run of prints is shown by its start)."""
        text, more = self._read_record(rec, limit)
        return text + (f"\n… {size_text(more)} more of this record not shown" if more else "")

    def _read_record(self, rec: int, limit: int) -> tuple[str, int]:
        """(the record's text, bytes of it left unread)."""
        start, end = self.offsets[rec], self.ends[rec]
        more = max(0, end - start - limit)
        raw = self.read_range(start, end - more)
        if more:
            raw = raw[:raw.rfind(b"\n") + 1] or raw  # whole lines only
            more = end - start - len(raw)
        key = self.prefixes[rec]
        out = []
        for line in raw.split(b"\n"):
            line = clean_line(line.removesuffix(b"\r"))
            if key is None:
                if LINE_RE.match(line) is None:
                    out.append(line)
            elif line.startswith(key):
                out.append(line[len(key):])
        while out and not out[-1].strip():
            out.pop()
        return b"\n".join(out).decode("utf-8", "replace"), more
