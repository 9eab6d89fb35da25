"""`--perfetto FILE`: the chromium events of every rank merged into one Chrome trace JSON, to open
in Perfetto (ui.perfetto.dev) or chrome://tracing; then inductor's runtime estimates, a process per
rank and a track per graph (perfetto_runtime).

As tlparse's --all-ranks-html merges them, `pid` is the rank (torch writes 0 for all); a process
with no rank gets a number after the ranks. Each process is named by a `process_name` metadata
event (`rank 3`, `process 11055`), and each event's `args.compile_id` is the compile id of its
record (`0/0_1`, with the attempt torch leaves out of the event).

Streamed: events are read from disk in batches and written one by one, so a 1 GB trace is never
held in memory. An event that is not JSON, or has no phase or time, is skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson

from tlview.domain.compile_id import CompileId
from tlview.domain.group import Group
from tlview.report.perfetto_runtime import runtime_events
from tlview.source.record_stream import parse_event, read_kind
from tlview.source.trace_file import TraceFile

CHROMIUM = "chromium_event"


@dataclass
class PerfettoWritten:
    events: dict[str, int] = field(default_factory=dict)  # process label -> events written
    skipped: int = 0  # events that were not JSON, or had no phase or time
    runtime: int = 0  # inductor runtime estimates written (one event per op)
    runtime_graphs: int = 0

    def said(self, target: str, has_traces: bool) -> str:
        """What was written, in one line."""
        runtime = (f"{self.runtime:,} runtime estimates ({self.runtime_graphs:,} graphs, a track each)"
                   if self.runtime else "")
        if not self.total:
            why = "" if has_traces else " (TORCH_LOGS text has none; a TORCH_TRACE has them)"
            return f"tlview: no chromium events in these logs{why}: wrote {runtime or 'an empty trace'} to {target}"
        per = ", ".join(f"{label}: {n:,}" for label, n in self.events.items())
        skipped = f"; {self.skipped:,} unreadable events skipped" if self.skipped else ""
        return (f"tlview: wrote {self.total:,} chromium events{runtime and ' and '}{runtime} to {target} "
                f"({per}{skipped})")

    @property
    def total(self) -> int:
        return sum(self.events.values())


def process_ids(groups: list[Group]) -> dict[Group, int]:
    """Ranks keep their number; processes with no rank come after the highest rank."""
    ids = {g: g.rank for g in groups if g.rank is not None}
    after = max(ids.values(), default=-1) + 1
    for group in groups:
        if group.rank is None:
            ids[group] = after
            after += 1
    return ids


def write_perfetto(index, out, rank=...) -> PerfettoWritten:
    """Write the Chrome trace of `index` (one rank, or all) to the binary file `out`."""
    groups = [g for g in index.groups() if rank is ... or g.rank == rank]
    pids = process_ids(groups)
    labels = {g: g.label() for g in groups}
    written = PerfettoWritten({labels[g]: 0 for g in groups})
    out.write(b'{"traceEvents": [\n')
    first = True
    earliest = None

    def emit(event: dict) -> None:
        nonlocal first, earliest
        out.write(orjson.dumps(event) if first else b",\n" + orjson.dumps(event))
        first = False
        if event.get("ph") != "M" and (earliest is None or event["ts"] < earliest):
            earliest = event["ts"]

    for order, group in enumerate(groups):
        emit({"name": "process_name", "ph": "M", "pid": pids[group], "tid": 0,
              "args": {"name": labels[group]}})
        emit({"name": "process_sort_index", "ph": "M", "pid": pids[group], "tid": 0,
              "args": {"sort_index": order}})
    for source in list(index.sources):
        if not isinstance(source, TraceFile):
            continue
        for rec, payload, _ in read_kind(source, CHROMIUM):
            group, cid = index.context_of(source.contexts[rec])
            if group not in pids:
                continue  # another rank's (--rank)
            event = parse_event(payload)
            if event is None or not _well_formed(event):
                written.skipped += 1
                continue
            emit(_placed(event, pids[group], cid))
            written.events[labels[group]] += 1
    after = max(pids.values(), default=-1) + 1
    for _, graphs, events in runtime_events(index, rank, after, earliest or 0):
        for event in events:
            emit(event)
        written.runtime += sum(e["ph"] == "X" for e in events)
        written.runtime_graphs += graphs
    out.write(b"\n]}\n")
    return written


def _placed(event: dict, pid: int, cid: CompileId | None) -> dict:
    """The event with its rank's pid and its record's compile id in its args."""
    event["pid"] = pid
    args = event.get("args")
    if not isinstance(args, dict):
        args = {} if args is None else {"value": args}
    if cid is not None:
        said = args.get("compile_id")
        ours = str(cid)
        if isinstance(said, str) and CompileId.parse(said) not in (cid, cid.compile_key):
            args["event_compile_id"] = said  # torch named another compile: keep what it said
        args["compile_id"] = ours
    event["args"] = args
    return event


def _well_formed(event: dict) -> bool:
    phase = event.get("ph")
    if not isinstance(phase, str) or len(phase) != 1 or not _number(event.get("ts")):
        return False
    return phase != "X" or _number(event.get("dur"))  # a complete event needs its duration


def _number(value) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and value == value  # noqa: PLR0124 - False for NaN alone
            and abs(value) != float("inf"))
