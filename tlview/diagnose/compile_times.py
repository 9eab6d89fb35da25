"""When each compile id began over the run, for a jump to a time: the times (timeline.py's best
clock of each rank, all ranks on one axis), counted into buckets and drawn as one row of block
characters per series, and what a person types for a time (`12:03:05`, `+90s`, `+2m`, `50%`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import ceil

from tlview.diagnose.timeline import compile_timeline
from tlview.domain.compile_node import Compile
from tlview.domain.verdict import Kind

BLOCKS = "▁▂▃▄▅▆▇█"
DAY = 86400.0
# What the explorer's b/r/x step through: a compile with one of these is a problem on the histogram.
PROBLEMS = (Kind.GRAPH_BREAK, Kind.RECOMPILE, Kind.FAILURE, Kind.FRAME_SKIPPED)


@dataclass(frozen=True)
class CompileMoment:
    start_s: float  # seconds since the run's first compile began
    compile: Compile

    @property
    def problem(self) -> bool:
        return any(self.compile.verdict.has(kind) for kind in PROBLEMS)


@dataclass(frozen=True)
class RunTimes:
    """The compile ids' start times, earliest first, and the clock they were read by."""

    moments: list[CompileMoment]
    span_s: float  # the last compile's start (0 s is the first's)
    origin: float | None  # 0 s: epoch seconds, or a text log's seconds since 1 January
    clock: str | None  # `wall` or `text` (timeline.py); None: no times

    def clock_text(self, offset_s: float) -> str:
        """`HH:MM:SS` of a moment of the run, by its clock (UTC for epoch times)."""
        if self.origin is None:
            return f"+{offset_s:.0f}s"
        seconds = int((self.origin + offset_s) % DAY)
        return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"

    def first_at_or_after(self, offset_s: float, shown=lambda compile_: True) -> CompileMoment | None:
        """The first compile id begun at or after `offset_s` that `shown` keeps."""
        return next((m for m in self.moments if m.start_s >= offset_s and shown(m.compile)), None)


def run_times(index) -> RunTimes:
    """Every rank's compile ids by when they began (a compile's first span: its forward)."""
    timeline = compile_timeline(index)
    by_id = {(group.rank, group.pid, str(key)): compile_ for (group, key), compile_ in list(index.compiles.items())}
    starts: dict[int, CompileMoment] = {}
    for row in timeline["rows"]:  # (by start time: a compile's first row is its start)
        compile_ = by_id.get((row["rank"], row["process"], row["id"]))
        if compile_ is not None and id(compile_) not in starts:
            starts[id(compile_)] = CompileMoment(row["start_s"], compile_)
    moments = sorted(starts.values(), key=lambda m: m.start_s)
    return RunTimes(moments, max((m.start_s for m in moments), default=0.0),
                    timeline["origin"] if moments else None, timeline["clock"] if moments else None)


def bucket_counts(times: Iterable[float], span_s: float, buckets: int) -> list[int]:
    """How many of `times` (0..span_s) fall in each of `buckets` equal parts of the span; the
    last part holds the span's end. A span of 0 s puts them all in the first."""
    counts = [0] * buckets
    for t in times:
        counts[bucket_of(t, span_s, buckets)] += 1
    return counts


def bucket_of(t: float, span_s: float, buckets: int) -> int:
    if span_s <= 0:
        return 0
    return max(0, min(buckets - 1, int(t / span_s * buckets)))


def bucket_start(i: int, span_s: float, buckets: int) -> float:
    return span_s * i / buckets


def bars(counts: list[int], top: int | None = None) -> str:
    """One block character per count, as high as the count is of `top` (by default the highest);
    a count of 0 is a blank, any other at least ▁."""
    top = max(counts, default=0) if top is None else top
    return "".join(" " if c <= 0 or top <= 0 else BLOCKS[min(len(BLOCKS), ceil(c / top * len(BLOCKS))) - 1]
                   for c in counts)


def parse_moment(text: str, times: RunTimes) -> float:
    """Seconds since the run's start of what a person typed: `HH:MM:SS` (the run's clock; past
    midnight wraps), `+90s`, `+2m` or `+90` from the start, `50%` of the run. ValueError says why not."""
    said = text.strip()
    if not said:
        raise ValueError("type a time: HH:MM:SS, +90s, +2m or 50%")
    try:
        if said.endswith("%"):
            return times.span_s * float(said[:-1]) / 100
        if said.startswith("+"):
            amount = said[1:]
            unit = 60.0 if amount.endswith("m") else 1.0
            return float(amount.rstrip("ms")) * unit
        if ":" in said:
            parts = [float(p) for p in said.split(":")]
            if len(parts) != 3:
                raise ValueError
            hours, minutes, seconds = parts
            if times.origin is None:
                raise ValueError("this run's times have no clock: use +90s or 50%")
            wanted = hours * 3600 + minutes * 60 + seconds
            return (wanted - times.origin % DAY) % DAY
    except ValueError as error:
        if str(error):
            raise
    raise ValueError(f"not a time: {said!r} (HH:MM:SS, +90s, +2m or 50%)")
