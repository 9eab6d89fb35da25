"""Whose compiles these are: a rank of a distributed job, or, for records with no rank, one
process. Two files with no rank are two processes (a job run twice into one folder, a launcher, a
data-loader worker), never one; a trace and the TORCH_LOGS text of one process share its pid, so
they fill one tree. The compile ids of different groups are unrelated (each counts from `0/0`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Group:
    rank: int | None
    pid: int | None = None  # only for a process without a rank

    @classmethod
    def of(cls, rank: int | None, pid: int | None) -> Group:
        return cls(rank, None) if rank is not None else cls(None, pid)

    def order(self, started: str = "") -> tuple[int, int, str]:
        """Ranks in rank order, then processes newest first (`started`: "MMDD HH:MM:SS.ffffff")."""
        if self.rank is not None:
            return (0, self.rank, "")
        return (1, 0, "".join(chr(0x10FFFF - ord(c)) for c in started))  # reversed: newest first

    def label(self, started: str = "", files: tuple[str, ...] = ()) -> str:
        """`rank 3`, or `process 11055 · dedicated_log_torch_trace_x.log · 11-22 04:20:24`."""
        if self.rank is not None:
            return f"rank {self.rank}"
        parts = [f"process {self.pid}" if self.pid is not None else "process ?"]
        parts += [name.rsplit("/", 1)[-1] for name in files[:2]]
        if started:
            parts.append(f"{started[:2]}-{started[2:4]} {started[5:13]}")
        return " · ".join(parts)


# (sources: TraceFiles, a pid and its start, and TextLogs, pid -> start; which one is told by
# `started`, a test mypy does not narrow the file by)
def process_starts(sources: Iterable[Any]) -> dict[int, str]:
    """pid -> when its first record was written ("MMDD HH:MM:SS.ffffff"), as its files say: a
    trace file is one process, a text log may hold many. One pass over the sources."""
    starts: dict[int, str] = {}
    for source in list(sources):
        pairs = source.started.items() if isinstance(source.started, dict) else [(source.pid, source.started)]
        for pid, when in pairs:
            if pid is not None and when and when < starts.get(pid, "\uffff"):
                starts[pid] = when
    return starts
