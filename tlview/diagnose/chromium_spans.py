"""What a trace's `chromium_event` records say of time: the outermost spans (a compile's `dynamo`
span, its `entire_backward_compile`), per compile id, with their wall-clock start and end.

The index counts chromium events but does not keep them (they are most of a big trace). They are
read here from disk once, in file order and in large reads (source/record_stream.py), and only
the spans at the top of each thread's stack are kept: a few per compile, not every event. What
was read is remembered per file, so a live run reads only what is new.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field
from math import isfinite
from typing import TypeGuard

from tlview.domain.compile_id import CompileId
from tlview.domain.group import Group
from tlview.source.record_stream import event_from_ends, parse_event, read_kind, read_records
from tlview.source.trace_file import TraceFile

CHROMIUM = "chromium_event"
WHOLE_MAX = 16 << 10  # a bigger event is read by its two ends: only its name, time and phase count here


@dataclass(slots=True)
class Span:
    """One outermost span of a thread: a compile, or a backward compile, in seconds since the epoch."""

    group: Group
    cid: CompileId | None  # the record's compile id (its context), None outside a compile
    named_id: str | None  # the compile id torch put in the event's args (`0/0`), if any
    name: str  # torch's event name: `dynamo`, `entire_backward_compile`, ...
    start: float
    end: float | None = None  # None: it never ended (still compiling, or the job died)
    until: float | None = None  # of a span that never ended: the file's latest event time


@dataclass
class FileSpans:
    """What one trace file's chromium events said so far (read incrementally)."""

    identity: tuple | None
    next_rec: int = 0
    spans: list[Span] = field(default_factory=list)
    events: int = 0  # well-formed events read
    bad: int = 0  # events skipped: torn, not JSON, no time
    last: float | None = None  # the latest time an event gave (where an unended span stops)
    depth: dict = field(default_factory=dict)  # thread -> open begin events
    open: dict = field(default_factory=dict)  # thread -> its outermost open span
    lock: threading.Lock = field(default_factory=threading.Lock)


_READ: weakref.WeakKeyDictionary[TraceFile, FileSpans] = weakref.WeakKeyDictionary()
_READ_LOCK = threading.Lock()


def file_spans(index, source: TraceFile) -> FileSpans:
    """The spans of one trace file, brought up to date with what the index has read of it."""
    with _READ_LOCK:
        state = _READ.get(source)
        if state is None or state.identity != source.identity or state.next_rec > len(source.offsets):
            state = _READ[source] = FileSpans(source.identity)  # new, or the file was replaced
    with state.lock:
        # the last record may still be growing while a job writes: read once whole (its md5)
        stop = len(source.offsets)
        if not source.at_end and stop > state.next_rec and not _whole(source, stop - 1):
            stop -= 1
        try:
            for rec, payload, ends in read_kind(source, CHROMIUM, state.next_rec, stop, WHOLE_MAX):
                _take(state, index, source, rec, _event(source, rec, payload, ends))
                state.next_rec = rec + 1
            state.next_rec = max(state.next_rec, stop)
        except OSError:
            pass  # the file went away or was replaced: what was read stands (the index says why)
    return state


def _whole(source: TraceFile, rec: int) -> bool:
    try:
        return source.kind_of(rec) != CHROMIUM or source.payload_md5_ok(rec) is True
    except OSError:
        return False


def all_spans(index) -> tuple[list[Span], int, int]:
    """(spans of every trace file, events read, events skipped)."""
    spans: list[Span] = []
    events = bad = 0
    for source in list(index.sources):
        if isinstance(source, TraceFile):
            state = file_spans(index, source)
            with state.lock:
                spans += state.spans
                spans += [_until(span, state.last) for span in state.open.values()]
                events += state.events
                bad += state.bad
    return spans, events, bad


def _until(span: Span, last: float | None) -> Span:
    """A copy of an open span as it stands: no end, and the latest time its file has reached."""
    return Span(span.group, span.cid, span.named_id, span.name, span.start, None,
                max(last, span.start) if last is not None else span.start)


def _event(source: TraceFile, rec: int, payload: bytes | None, ends: tuple | None) -> dict | None:
    """The event, or of a big one what a timeline needs (read whole if its ends do not say)."""
    if payload is not None:
        return parse_event(payload)
    event = event_from_ends(*ends) if ends is not None else None
    if event is None and ends is not None:
        for _, whole, _ in read_records(source, [rec]):
            event = parse_event(whole)
    return event


def _take(state: FileSpans, index, source: TraceFile, rec: int, event: dict | None) -> None:
    ts = event.get("ts") if event is not None else None
    phase = event.get("ph") if event is not None else None
    if event is None or not _number(ts) or type(phase) is not str:  # (bool is no time)
        state.bad += 1
        return
    state.events += 1
    if phase not in "BEX":
        return  # an instant or a counter: no span
    seconds = ts / 1e6
    state.last = seconds if state.last is None else max(state.last, seconds)
    tid = event.get("tid")
    tid = tid if isinstance(tid, (int, str)) and not isinstance(tid, bool) else None
    depth = state.depth.get(tid, 0)
    if phase == "B":
        if depth == 0:
            state.open[tid] = _span(index, source, rec, event, seconds)
        state.depth[tid] = depth + 1
    elif phase == "E":
        if depth <= 1:
            state.depth[tid] = 0
            span = state.open.pop(tid, None)
            if span is not None:
                span.end = max(seconds, span.start)
                state.spans.append(span)
        else:
            state.depth[tid] = depth - 1
    elif phase == "X" and depth == 0:
        span = _span(index, source, rec, event, seconds)
        duration = event.get("dur")
        span.end = seconds + (duration / 1e6 if _number(duration) and duration > 0 else 0.0)
        state.spans.append(span)


def _span(index, source: TraceFile, rec: int, event: dict, seconds: float) -> Span:
    group, cid = index.context_of(source.contexts[rec])
    args = event.get("args")
    named = args.get("compile_id") if isinstance(args, dict) else None
    name = event.get("name")
    return Span(group, cid, named if isinstance(named, str) else None,
                name if isinstance(name, str) else "?", seconds)


def _number(value: object) -> TypeGuard[float | int]:
    """A finite JSON number (a bool is none)."""
    return (type(value) is float or type(value) is int) and isfinite(value)
