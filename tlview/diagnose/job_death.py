"""How a distributed job died, from the last lines of its text logs: a collective's timeout (gloo,
the NCCL watchdog, a monitored barrier), a collective mismatch gloo noticed, a peer that went
away, an NCCL error, and torchrun's account of which rank failed first.

Only each text log's tail is read (a job dies at its end): the cost does not grow with the logs.
A line's rank is its `[rankN]:` prefix, else the log's one rank (a line of no rank is not counted:
the log may not be a distributed job's); torchrun's summary names its own.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache

from tlview.index.index import Index
from tlview.patterns import lazy
from tlview.source.tail import tail_lines
from tlview.source.text_log import TextLog

# (what it is, the line that says so); the first that matches a line names it
DEATHS = (
    ("timeout", lazy(r"Timed out waiting \d+ ?ms for \w+ operation")),  # gloo
    ("timeout", lazy(r"Watchdog caught collective operation timeout|ran for \d+ milliseconds before timing out")),
    ("timeout", lazy(r"failed to pass monitoredBarrier|reached monitoredBarrier, but received errors")),
    ("collective mismatch", lazy(r"Received data size doesn't match expected size|"
                                       r"[Cc]ollective mismatch|Detected mismatch between collectives")),
    ("peer lost", lazy(r"Connection (?:reset|closed) by peer")),
    ("NCCL error", lazy(r"NCCL (?:error|communicator was aborted)"
                        r"|nccl(?:Internal|System|UnhandledCuda|Invalid)\w*Error")),
    ("timeout", lazy(r"DistStoreError|Socket Timeout")),
)
DIGITS = lazy(r"\d+")
RANK_PREFIX = lazy(r"^\[rank(\d+)\]:\s?")
TEE = lazy(r"^\[[A-Za-z_]*\d+\]:(?=\[rank)")  # torchrun --tee's `[default3]:` before `[rank3]:`
SOURCE_PLACE = lazy(r"\[[^\]\s]*\.(?:cc|cpp|h|hpp):\d+\]\s*")  # `[/__w/.../pair.cc:545] `
# torchrun's failure summary: `Root Cause (first observed failure):` then `rank : 1 (local_rank: 1)`
# and `exitcode : -6 (pid: 5433)  (SIGABRT)`
ROOT_CAUSE = "Root Cause (first observed failure)"
SUMMARY_RANK = lazy(r"^\s*rank\s*:\s*(\d+)")
SUMMARY_EXIT = lazy(r"^\s*exitcode\s*:\s*(-?\d+)[^\n]*?(?:\((SIG\w+)\))?\s*$")


def job_death(index: Index) -> dict | None:
    """{"deaths": [{"ranks", "kind", "message"}], "root_cause": {...} | None}; None when no text
    log says the job died."""
    first: dict[int | None, tuple[str, str]] = {}
    root = None
    for source in list(index.sources):
        if not isinstance(source, TextLog):
            continue
        own_rank = next(iter(source.ranks)) if len(source.ranks) == 1 else None
        said, said_root = _deaths_in(source.path, _size(source.path), own_rank)
        for rank, death in said:
            first.setdefault(rank, death)
        root = dict(said_root) if said_root else root  # (a copy: the cached one stays as read)
    if not first and root is None:
        return None
    # ranks that died the same way together (their messages differ in numbers only: ports, ranks)
    grouped: dict[tuple[str, str], dict] = {}
    for rank, (kind, message) in sorted(first.items()):
        grouped.setdefault((kind, DIGITS.sub("N", message)),
                           {"ranks": [], "kind": kind, "message": message})["ranks"].append(rank)
    return {"deaths": list(grouped.values()), "root_cause": root}


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


@lru_cache(maxsize=4096)
def _deaths_in(path: str, size: int, own_rank: int | None) -> tuple[tuple, dict | None]:
    """((rank, (kind, message)) first per rank, torchrun's root cause) of one log's tail; read
    again only when the log grew (the Run pane asks at every update of a followed job)."""
    first: dict = {}
    root = None
    lines = tail_lines(path)
    for n, line in enumerate(lines):
        line = TEE.sub("", line, count=1)
        if line.startswith(ROOT_CAUSE):
            root = _root_cause(lines[n + 1:n + 12]) or root
            continue
        kind = next((k for k, pattern in DEATHS if pattern.search(line)), None)
        if kind is not None:
            m = RANK_PREFIX.match(line)
            rank = int(m.group(1)) if m else own_rank
            if rank is not None:  # a rank's words: one process's "Connection reset by peer" is no job's death
                first.setdefault(rank, (kind, _message(line)))
    return tuple(first.items()), root


def _message(line: str) -> str:
    line = RANK_PREFIX.sub("", line, count=1)
    line = re.sub(r"^\[[EWIF]\d{4} [\d:.]+ [^\]]*\]\s*", "", line)  # c10's `[E1125 23:05:41.9 x.cpp:69]`
    return SOURCE_PLACE.sub("", line).strip()[:300]


def _root_cause(lines: list[str]) -> dict | None:
    rank = exitcode = signal = None
    for line in lines:
        if rank is None and (m := SUMMARY_RANK.match(line)):
            rank = int(m.group(1))
        elif exitcode is None and (m := SUMMARY_EXIT.match(line)):
            exitcode, signal = int(m.group(1)), m.group(2)
    return {"rank": rank, "exitcode": exitcode, "signal": signal} if rank is not None else None
