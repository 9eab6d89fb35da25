"""How a distributed job died, from the last lines of each rank in its text logs: the Python
exception a rank raised (its class, message and the last frame of the user's own code in its
traceback), a collective's timeout (gloo, the NCCL watchdog, a monitored barrier), a collective
mismatch gloo noticed, a peer that went away, an NCCL error, and torchrun's account: which rank
failed first, and the ranks it ended with a signal.

A job dies at its end, but not every rank's end is the log's: under `torchrun --tee` all ranks
write one stream, and a rank's last words may lie far above the log's last bytes (with
`TORCH_LOGS=+dynamo` each rank writes ~15 KB after its traceback). So each log is read backwards
from its end until every rank it holds has shown its last lines, each byte once.
A line's rank is its `[rankN]:` prefix, else the log's one rank; torchrun's summary names its own.

A log of no rank is one process's: it died where Python printed an uncaught exception, and only
then (see `_uncaught`): a program may print the traceback of an exception it caught and go on.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import PurePath

from tlview.domain.reasons import is_generated_path, is_library_path
from tlview.index.index import Index
from tlview.patterns import lazy
from tlview.source.tail import TAIL_BYTES, blocks_backwards, tail_lines
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
EXCEPTION = "exception"  # the kind of a death no pattern above names: the rank's own exception
DIGITS = lazy(r"\d+")
RANK_PREFIX = lazy(r"^\[rank(\d+)\]:\s?")
TEE = lazy(r"^\[[A-Za-z_]*\d+\]:(?=\[rank)")  # torchrun --tee's `[default3]:` before `[rank3]:`
SOURCE_PLACE = lazy(r"\[[^\]\s]*\.(?:cc|cpp|h|hpp):\d+\]\s*")  # `[/__w/.../pair.cc:545] `
# Python's traceback: its header, its frames, and the exception's line (`module.Class: message`,
# the first unindented line after the frames); of chained ones, the last is what was raised
TRACEBACK = "Traceback (most recent call last):"
FRAME = lazy(r'^\s+File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)')
EXCEPTION_LINE = lazy(r"^(?P<cls>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?::\s?(?P<message>.*))?$")
# a line torch logged (`I1127 16:56:29.868000 575 torch/_dynamo/eval_frame.py:701] `), and one
# of a compile (its compile id after the prefix, before or after an artifact's name)
TORCH_LINE = lazy(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^:\]\s]+:\d+\]")
COMPILE_ID_LINE = lazy(r"^[VIWEC]\d{4} [\d:.]+ +\d+ [^:\]\s]+:\d+\](?: \[__\w+\])? \[!?\d+/\d+")
# torchrun's failure summary: `Failures:` and `Root Cause (first observed failure):`, each entry a
# `rank : 1 (local_rank: 1)` and an `exitcode : -15 (pid: 5433)  (SIGTERM)`
ROOT_CAUSE = "Root Cause (first observed failure)"
SUMMARY_RANK = lazy(r"^\s*rank\s*:\s*(\d+)")
SUMMARY_EXIT = lazy(r"^\s*exitcode\s*:\s*(-?\d+)[^\n]*?(?:\((SIG\w+)\))?\s*$")
# Each rank's last lines read: its traceback and what it wrote after it (a rank's exit under
# `+dynamo`: ~15 KB), or what it wrote last when it raised nothing.
RANK_TAIL_BYTES = 64 << 10
# The most read of one log looking for its ranks' last lines: a rank silent for longer than this
# before the end is not searched further. Measured on 64 MB of one rank's lines with a second rank
# sought (2 cores, shared): 0.36 s where blocks hold no line of a sought rank (passed over by one
# search), 2.4 s read line by line; 1,024 ranks' deaths of ~15 KB each need ~15 MB.
MOST_READ = 64 << 20


def job_death(index: Index) -> dict | None:
    """{"deaths": [{"ranks", "kind", "message", "exception", "where"}], "root_cause": {...} | None,
    "signals": [{"ranks", "signal", "exitcode"}]}: the ranks' own exceptions first, then what the
    others died of, then the deaths of processes of no rank (`"ranks": []`, with the "log" they
    were read from); None when no text log says the job died."""
    first: dict[int, dict] = {}
    root = None
    signals: dict[int, tuple[str, int]] = {}
    processes: list[dict] = []
    for source in list(index.sources):
        if not isinstance(source, TextLog):
            continue
        size = _size(source.path)
        said, said_root, said_signals = _deaths_in(source.path, size, tuple(sorted(source.ranks)))
        # (torchrun's own traceback, of no rank, is its failure summary: read as the root cause)
        if not source.ranks and not said_root and (process := _process_death_in(source.path, size)):
            processes.append({"ranks": [], **process, "log": source.path})
        for rank, death in said:
            first.setdefault(rank, death)
        for rank, signal in said_signals:
            signals.setdefault(rank, signal)
        root = dict(said_root) if said_root else root  # (a copy: the cached one stays as read)
    if not first and root is None and not processes:
        return None
    # ranks that died the same way together (their messages differ in numbers only: ports, ranks)
    grouped: dict[tuple, dict] = {}
    for rank, death in sorted(first.items(), key=lambda item: (item[1]["kind"] != EXCEPTION, item[0])):
        key = (death["kind"], DIGITS.sub("N", death["message"]), str(death["where"]))
        grouped.setdefault(key, {"ranks": [], **death})["ranks"].append(rank)
    by_signal: dict[tuple[str, int], list[int]] = {}
    for rank, signal in sorted(signals.items()):
        by_signal.setdefault(signal, []).append(rank)
    return {"deaths": list(grouped.values()) + processes, "root_cause": root,
            "signals": [{"ranks": ranks, "signal": signal, "exitcode": code}
                        for (signal, code), ranks in by_signal.items()]}


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


@lru_cache(maxsize=4096)
def _deaths_in(path: str, size: int, ranks: tuple[int, ...]) -> tuple[tuple, dict | None, tuple]:
    """((rank, death) per rank, torchrun's root cause, (rank, (signal, exit code)) of the ranks
    torchrun ended with a signal) of one log; read again only when the log grew (the Run pane
    asks at every update of a followed job)."""
    tails, last_lines = _rank_tails(path, ranks)
    deaths = tuple((rank, death) for rank, lines in sorted(tails.items()) if (death := _death(lines)))
    root, signals = _summary(last_lines)
    return deaths, root, signals


@lru_cache(maxsize=4096)
def _process_death_in(path: str, size: int) -> dict | None:
    """The death of the one process of a log of no rank, from its last lines; read again only
    when the log grew."""
    return _uncaught(tail_lines(path))


def _uncaught(lines: list[str]) -> dict | None:
    """The process's death where the last traceback is one Python printed for an exception
    nothing caught: `Traceback (most recent call last):` at the start of a line (torch's logger
    prefixes every line of a traceback it logs: those were caught), frames, then the exception's
    line; after it only the message's further lines, then what torch logs at exit (the frames
    it traced, its compilation metrics), none of it with a compile id: a compile logged after
    the traceback means the program went on. A line of no prefix after torch's lines (the
    program's own output) means the same."""
    start = next((n for n in range(len(lines) - 1, -1, -1) if lines[n].startswith(TRACEBACK)), None)
    if start is None:
        return None
    where = None
    end = None
    for n in range(start + 1, len(lines)):
        line = lines[n]
        if m := FRAME.match(line):
            where = _user_frame(m) or where
        elif not line[:1].isspace():  # (a frame's source line is indented)
            end = n
            break
    if end is None or not (m := EXCEPTION_LINE.match(lines[end])):
        return None
    logged = False
    for line in lines[end + 1:]:
        if TORCH_LINE.match(line):
            logged = True
            if COMPILE_ID_LINE.match(line):
                return None
        elif logged:
            return None
    message = lines[end]
    if message.endswith(":") and end + 1 < len(lines) and not TORCH_LINE.match(lines[end + 1]):
        message += " " + lines[end + 1].strip()  # `raised:`: what was raised is the next line
    return {"kind": EXCEPTION, "message": _message(message), "exception": m.group("cls"), "where": where}


def _rank_tails(path: str, ranks: tuple[int, ...]) -> tuple[dict[int, list[str]], list[str]]:
    """({rank: its last lines, prefixes off, in order}, the log's last lines): read backwards
    until each rank (those the log holds, and any its last lines name) has shown
    `RANK_TAIL_BYTES` of its lines, or the log's start."""
    own_rank = ranks[0] if len(ranks) == 1 else None
    wanted = set(ranks)
    tails: dict[int, list[str]] = {}
    taken: dict[int, int] = {}
    last_lines: list[str] = []
    seen = 0
    for block in blocks_backwards(path, MOST_READ):
        pending = wanted - {rank for rank, n in taken.items() if n >= RANK_TAIL_BYTES}
        if seen >= TAIL_BYTES and not pending:
            break
        if seen >= TAIL_BYTES and own_rank is None and not any(b"[rank%d]:" % r in block for r in pending):
            seen += len(block)  # none of the ranks still sought wrote here: passed over in one search
            continue
        for line in reversed(block.decode("utf-8", "replace").splitlines()):
            seen += len(line) + 1
            line = TEE.sub("", line, count=1)
            if seen <= TAIL_BYTES:
                last_lines.append(line)
            m = RANK_PREFIX.match(line)
            rank = int(m.group(1)) if m else own_rank
            if rank is None or taken.get(rank, 0) >= RANK_TAIL_BYTES:
                continue
            wanted.add(rank)
            text = line[m.end():] if m else line
            tails.setdefault(rank, []).append(text)
            taken[rank] = taken.get(rank, 0) + len(text) + 1
    for lines in tails.values():
        lines.reverse()
    last_lines.reverse()
    return tails, last_lines


def _death(lines: list[str]) -> dict | None:
    """A rank's death from its last lines: the first that names a death, else its exception;
    with the exception's class and the user's frame it was raised from (or waited in)."""
    kind, message = next(((k, line) for line in lines for k, pattern in DEATHS if pattern.search(line)),
                         (None, None))
    exception, where = _exception(lines)
    if kind is None and exception is not None:
        kind, message = EXCEPTION, exception[1]
    if kind is None or message is None:
        return None
    return {"kind": kind, "message": _message(message), "exception": exception[0] if exception else None,
            "where": where}


def _exception(lines: list[str]) -> tuple[tuple[str, str], dict | None] | tuple[None, None]:
    """((its class, its line), the last frame of the user's code) of the last traceback."""
    start = next((n for n in range(len(lines) - 1, -1, -1) if lines[n].startswith(TRACEBACK)), None)
    if start is None:
        return None, None
    where = None
    for line in lines[start + 1:]:
        if m := FRAME.match(line):
            where = _user_frame(m) or where
        elif line[:1].strip() and (m := EXCEPTION_LINE.match(line.strip())):
            return (m.group("cls"), line.strip()), where
    return None, None


def _user_frame(frame: re.Match) -> dict | None:
    """A traceback's frame as {"file", "line", "function"}, where it is the user's own code."""
    if is_library_path(frame.group("path")) or is_generated_path(frame.group("path")):
        return None
    return {"file": frame.group("path"), "line": int(frame.group("line")), "function": frame.group("function")}


# the function Dynamo resumes after a graph break is named after the user's own
RESUME_FUNCTION = lazy(r"^torch_dynamo_resume_in_(\w+?)_at_\d+$")


def where_text(where: dict) -> str:
    """`program.py:41 in layer`: the frame's file by its name (the JSON has its path), and the
    user's function where Dynamo's resume function stands for it."""
    function = where["function"]
    if m := RESUME_FUNCTION.match(function):
        function = m.group(1)
    return f"{PurePath(where['file']).name}:{where['line']} in {function}"


def _message(line: str) -> str:
    line = RANK_PREFIX.sub("", line, count=1)
    line = re.sub(r"^\[[EWIF]\d{4} [\d:.]+ [^\]]*\]\s*", "", line)  # c10's `[E1125 23:05:41.9 x.cpp:69]`
    return SOURCE_PLACE.sub("", line).strip()[:300]


def _summary(lines: list[str]) -> tuple[dict | None, tuple]:
    """torchrun's failure summary: (the root cause {"rank", "exitcode", "signal"}, the ranks of
    its other failures that a signal ended, with the signal and exit code)."""
    root = None
    signals = []
    entry: dict | None = None
    in_root = False
    for line in lines + [""]:
        if line.startswith((ROOT_CAUSE, "Failures:")) or SUMMARY_RANK.match(line) or not line:
            if entry is not None and entry["rank"] is not None:
                if entry.pop("root"):
                    root = entry
                elif entry["signal"]:
                    signals.append((entry["rank"], (entry["signal"], entry["exitcode"])))
            entry = None
            if line.startswith(ROOT_CAUSE):
                in_root = True
            elif line.startswith("Failures:"):
                in_root = False
        if m := SUMMARY_RANK.match(line):
            entry = {"rank": int(m.group(1)), "exitcode": None, "signal": None, "root": in_root}
        elif entry is not None and entry["exitcode"] is None and (m := SUMMARY_EXIT.match(line)):
            entry["exitcode"], entry["signal"] = int(m.group(1)), m.group(2)
    return root, tuple(signals)
