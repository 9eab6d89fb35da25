"""Many small records of one kind read back from a trace file in a few large reads.

The index keeps every record's offset but not the `chromium_event` payloads (they are most of a
big trace's records). A timeline or a Chrome trace needs them all, in file order: records close
together are read with one `pread` of up to BATCH_BYTES, so a 1 GB trace costs a few hundred
reads, not one per record, and memory holds one batch at a time.

A chromium event's payload is the JSON event torch wrote with `indent=0`, every line after a TAB:
TABs and newlines are JSON whitespace, so the payload's bytes parse as they are. A few events are
big (an `inductor_compile` end with its cache details: 100 KB, a third of a trace's bytes); who
needs only their time (a timeline) reads their two ends: the name and time open an event, the
phase and thread close it (`event_from_ends`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import orjson

BATCH_BYTES = 4 << 20  # one read covers records within this span
GAP_BYTES = 256 << 10  # a gap larger than this (a big payload of another kind) is skipped, not read
RECORD_MAX = 16 << 20  # a record bigger than this is not an event: skipped, counted
CHUNK_RECORDS = 65536  # record numbers listed at a time (10 million records: no list of all)
ENDS_BYTES = 2048  # of a big event read for its time: this much of its start and of its end


def records_of_kind(source, kind: str, start: int = 0, stop: int | None = None) -> list[int]:
    """The numbers of `source`'s records of one kind, from `start` up to `stop`."""
    try:
        code = source.kind_names.index(kind)
    except ValueError:
        return []
    kinds = source.kinds
    stop = len(kinds) if stop is None else min(stop, len(kinds))
    return [rec for rec in range(start, stop) if kinds[rec] == code]


def read_kind(source, kind: str, start: int = 0, stop: int | None = None,
              whole_max: int = RECORD_MAX) -> Iterator[tuple[int, bytes | None, tuple | None]]:
    """(record, payload, ends) of every record of one kind from `start` up to `stop`, in file
    order (memory: one chunk of record numbers and one batch of bytes). A record bigger than
    `whole_max` comes as (record, None, (its payload's first bytes, its last bytes)), or, past
    RECORD_MAX, as (record, None, None)."""
    stop = len(source.kinds) if stop is None else min(stop, len(source.kinds))
    for first in range(start, stop, CHUNK_RECORDS):
        recs = records_of_kind(source, kind, first, min(stop, first + CHUNK_RECORDS))
        yield from read_records(source, recs, whole_max)


def read_records(source, recs: list[int],
                 whole_max: int = RECORD_MAX) -> Iterator[tuple[int, bytes | None, tuple | None]]:
    """read_kind's reading, for the given records (ascending)."""
    i = 0
    span = source.record_span
    while i < len(recs):
        start, end = span(recs[i])
        if end - start > whole_max:
            yield recs[i], None, _ends(source, start, end) if end - start <= RECORD_MAX else None
            i += 1
            continue
        batch_start, batch_end, j = start, end, i + 1
        while j < len(recs):
            start, end = span(recs[j])
            if end - start > whole_max or end - batch_start > BATCH_BYTES or start - batch_end > GAP_BYTES:
                break
            batch_end = end
            j += 1
        data = source.read_range(batch_start, batch_end)
        for rec in recs[i:j]:
            start, end = span(rec)
            eol = data.find(b"\n", start - batch_start, end - batch_start)
            yield rec, (data[eol + 1:end - batch_start] if eol >= 0 else b""), None
        i = j


def _ends(source, start: int, end: int) -> tuple[bytes, bytes]:
    head = source.read_range(start, min(end, start + ENDS_BYTES))
    eol = head.find(b"\n")
    return head[eol + 1:] if eol >= 0 else b"", source.read_range(max(start, end - ENDS_BYTES), end)


# A line that is neither payload (TAB) nor blank: the payload ended above it.
_NOT_PAYLOAD = re.compile(rb"\n[^\t\r\n]")


def parse_event(payload: bytes | None) -> dict | None:
    """A chromium event from its payload bytes, or None (torn, not JSON, not an object).

    Bytes after the payload's own lines (garbage the scan did not look at: it checks no md5 of
    a chromium event unless asked) are not the event's: when the whole does not parse, the
    payload's own lines are tried (only then: the common case pays nothing)."""
    if not payload:
        return None
    event = _loads_event(payload)
    if event is None and (other := _NOT_PAYLOAD.search(payload)):
        event = _loads_event(payload[:other.start() + 1])
    return event if isinstance(event, dict) else None


def _loads_event(payload: bytes):
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        if b"NaN" not in payload and b"Infinity" not in payload:
            return None
        try:  # Python's json.dumps writes NaN and Infinity, which orjson rejects
            return json.loads(payload)
        except ValueError:
            return None


# torch writes an event's keys in this order: name, ts, args, ph, cat, tid, pid (json.dumps of a
# dict built in that order); `dur` of a complete event follows ts, `s` of an instant follows pid.
_HEAD = re.compile(rb'\A\s*\{\s*"name":\s*("(?:[^"\\]|\\.)*"),\s*"ts":\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)'
                   rb'(?:,\s*"dur":\s*(\d+(?:\.\d+)?))?\s*,\s*"args"')
_TAIL = re.compile(rb'\},\s*"ph":\s*"(\w)",\s*"cat":\s*"(?:[^"\\]|\\.)*",\s*"tid":\s*(-?\d+)'
                   rb'(?:,\s*"\w+":\s*(?:-?\d+|"(?:[^"\\]|\\.)*"))*\s*\}\s*\Z')  # then pid (an instant's "s")


def event_from_ends(head: bytes, tail: bytes) -> dict | None:
    """A big event's name, time, phase and thread (not its args) from its two ends; None when
    they are not laid out as torch lays them out (then read it whole)."""
    opening, closing = _HEAD.match(head), _TAIL.search(tail)
    if opening is None or closing is None:
        return None
    try:
        name = orjson.loads(opening.group(1))
    except orjson.JSONDecodeError:
        return None
    event = {"name": name, "ts": float(opening.group(2)), "ph": closing.group(1).decode(),
             "tid": int(closing.group(2))}
    if opening.group(3) is not None:
        event["dur"] = float(opening.group(3))
    return event
