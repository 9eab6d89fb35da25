"""When each compile ran, per rank: where the wall-clock time of a run went while it compiled,
in the order it happened (costs.py ranks the same compiles by how long they took).

Each rank or process is timed by the best clock its logs have:
- `chromium`: the outermost chromium-event spans of each compile id (µs): the forward compile
  (`dynamo`), the backward compile, and a compile still under way (it has begun, not ended);
- `metrics`: compilation metrics' `start_time` and compile time (a trace with no chromium events);
- `text`: the glog time of a compile id's first and last TORCH_LOGS line (ms, and no year).
The first two are seconds since the epoch and share one axis. Text times are the job's local
clock: they are drawn only when no rank has a better clock (a text-only rank beside traced ones is
named, not drawn on an axis it does not share).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from math import isfinite
from typing import TypeGuard

from tlview.diagnose.chromium_spans import Span, all_spans
from tlview.diagnose.stepping import stepping
from tlview.domain.compile_node import Compile
from tlview.domain.group import Group

WHAT = {"dynamo": "compile", "entire_backward_compile": "backward"}
CLOCKS = {
    "chromium": "chromium events (µs)",
    "metrics": "compilation metrics (start time and compile time)",
    "text": "TORCH_LOGS line times (ms): a compile id's first to last line",
}
_GLOG_TIME = re.compile(rb"[VIWEC](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6}) ")
_YEAR = datetime(2000, 1, 1)  # glog writes no year; 2000 has a 29 February


def compile_timeline(index, rank=..., between=None) -> dict:
    """Rows (one per compile span, by start time), lanes (one per rank or process) and the clock.
    (`between`: stepping.py)"""
    spans, events, bad = all_spans(index)
    by_group: dict[Group, list[Span]] = defaultdict(list)
    for span in spans:
        by_group[span.group].append(span)
    compiles: dict[Group, list[Compile]] = defaultdict(list)
    for (group, key), compile_ in list(index.compiles.items()):
        if key.frame is not None or key.autograd is not None:
            compiles[group].append(compile_)
    rows_of: dict[Group, list[dict]] = {}
    clock_of: dict[Group, str | None] = {}
    for group in index.groups():
        if rank is not ... and group.rank != rank:
            continue
        clock_of[group], rows_of[group] = _best_rows(index, by_group[group], compiles[group], between)
    shared = "text" if set(clock_of.values()) <= {"text", None} else "wall"
    apart = [g for g, c in clock_of.items() if c == "text" and shared == "wall"]
    left_out = [g.label() for g in apart]
    drawn = [(g, rows) for g, rows in rows_of.items() if clock_of[g] is not None and g not in apart]
    starts = [row["start"] for _, rows in drawn for row in rows]
    origin = min(starts, default=None)
    rows, lanes = [], []
    for order, (group, group_rows) in enumerate(drawn):
        for row in group_rows:
            row.update(rank=group.rank, process=group.pid, order=order,
                       start_s=round(row["start"] - origin, 6),
                       end_s=round(row.pop("draw_end") - origin, 6))
            rows.append(row)
        lanes.append(_lane(group, clock_of[group], group_rows))
    rows.sort(key=lambda r: (r["start_s"], r["order"]))
    for row in rows:
        del row["start"], row["order"]
    return {
        "clock": shared if origin is not None else None,
        "clocks": {g.label(): c for g, c in clock_of.items()},
        "origin": origin,
        "origin_text": _clock_text(origin, shared),
        "span_s": round(max((r["end_s"] for r in rows), default=0.0), 6),
        "rows": rows,
        "lanes": lanes,
        "left_out": left_out,
        "chromium_events": events,
        "chromium_events_skipped": bad,
    }


def _best_rows(index, spans: list[Span], compiles: list[Compile], between=None) -> tuple[str | None, list[dict]]:
    """The rows of one rank or process by the best clock it has, and that clock."""
    if rows := _chromium_rows(index, stepping(spans, between)):
        return "chromium", rows
    if rows := _metrics_rows(stepping(compiles, between)):
        return "metrics", rows
    if rows := _text_rows(stepping(compiles, between)):
        return "text", rows
    return None, []


def _row(compile_: Compile | None, compile_id: str, what: str, start: float, end: float | None,
         until: float | None = None) -> dict:
    return {"id": compile_id, "what": what, "start": start,
            "seconds": round(end - start, 6) if end is not None else None,
            "ended": end is not None, "draw_end": end if end is not None else (until or start),
            "status": compile_.status.word if compile_ is not None else None,
            "function": compile_.head.function() if compile_ is not None else None}


def _chromium_rows(index, spans: Iterable[Span]) -> list[dict]:
    rows = []
    for span in spans:
        compile_ = index.compiles.get((span.group, span.cid.compile_key)) if span.cid else None
        compile_id = str(span.cid.compile_key) if span.cid else (span.named_id or "-")
        rows.append(_row(compile_, compile_id, WHAT.get(span.name, span.name), span.start, span.end,
                         span.until))
    return rows


def _metrics_rows(compiles: Iterable[Compile]) -> list[dict]:
    rows = []
    for compile_ in compiles:
        metrics = compile_.final_metrics or {}
        start = metrics.get("start_time")
        if _number(start) and start > 0:
            seconds = metrics.get("entire_frame_compile_time_s")
            rows.append(_row(compile_, str(compile_.key), "compile", start,
                             start + (seconds if _number(seconds) else 0.0)))
        for node in compile_.attempts:
            bwd = node.bwd_metrics or {}
            start = bwd.get("start_time")
            seconds = bwd.get("inductor_compile_time_s") or bwd.get("elapsed_time")
            if _number(start) and start > 0:
                rows.append(_row(compile_, str(compile_.key), "backward", start,
                                 start + (seconds if _number(seconds) else 0.0)))
    return rows


def _text_rows(compiles: Iterable[Compile]) -> list[dict]:
    """A compile id's span by the times of its first and last TORCH_LOGS lines."""
    rows = []
    for compile_ in compiles:
        if (span := line_span(compile_)) is not None:
            rows.append(_row(compile_, str(compile_.key), "compile", *span))
    return rows


def line_span(compile_: Compile) -> tuple[float, float] | None:
    """(start, end): the times of a compile id's first and last TORCH_LOGS lines, or None."""
    times = [t for node in compile_.attempts for record in node.text_records[:1] + node.text_records[-1:]
             if (t := text_time(record.source, record.rec)) is not None]
    return (min(times), max(times)) if times else None


def text_time(log, rec: int) -> float | None:
    """Seconds since 1 January (of no year) of a TORCH_LOGS record's glog time, or None."""
    prefixes = getattr(log, "prefixes", None)
    prefix = prefixes[rec] if prefixes is not None and 0 <= rec < len(prefixes) else None
    match = _GLOG_TIME.search(prefix) if prefix else None
    if match is None:
        return None
    month, day, hour, minute, second, micro = map(int, match.groups())
    try:
        moment = datetime(2000, month, day, hour, minute, second, micro)
    except ValueError:
        return None
    return (moment - _YEAR).total_seconds()


def _lane(group: Group, clock: str | None, rows: list[dict]) -> dict:
    """One rank's or process's line: its compiles and the time it spent compiling (overlapping
    spans, a backward compile inside a forward one, counted once)."""
    intervals = sorted((r["start_s"], r["end_s"]) for r in rows)
    busy = 0.0
    reach = None
    for start, end in intervals:
        if reach is None or start > reach:
            busy += end - start
            reach = end
        elif end > reach:
            busy += end - reach
            reach = end
    return {"rank": group.rank, "process": group.pid, "label": group.label(),
            "clock": clock, "compiles": len({r["id"] for r in rows if r["status"] is not None}),
            "spans": len(rows), "busy_s": round(busy, 6),
            "first_s": intervals[0][0] if intervals else None,
            "last_s": max((e for _, e in intervals), default=None)}


def _clock_text(origin: float | None, clock: str) -> str | None:
    """When 0 s is: `11-22 04:24:12 UTC` (epoch seconds), or the log's own `11-22 04:24:15`."""
    if origin is None:
        return None
    if clock == "text":
        return (_YEAR + timedelta(seconds=origin)).strftime("%m-%d %H:%M:%S")
    try:
        return datetime.fromtimestamp(origin, timezone.utc).strftime("%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return None


def _number(value: object) -> TypeGuard[float | int]:
    """An int, or a finite float (not NaN, not infinite); a bool is none."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not isinstance(value, float) or isfinite(value)
