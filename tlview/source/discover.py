"""Finding logs: a path is a trace file, a trace folder, or TORCH_LOGS text; told apart by content."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from tlview.source.text_log import LINE_RE, clean_line

TRACE_LINE = re.compile(rb"^V\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^\n]*?:\d+\] \{\"")
RANK_IN_NAME = re.compile(r"rank_(\d+)")
SNIFF_BYTES = 64 << 10

TRACE = "trace"
TEXT = "text"


class NoLogsError(Exception):
    """The path holds nothing tlview can read; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class FoundLog:
    path: str
    kind: str  # TRACE or TEXT
    rank_from_name: int | None


def sniff(path: str) -> str | None:
    """TRACE, TEXT or None, from the first lines of the file (never from its name)."""
    try:
        with open(path, "rb") as f:
            head = f.read(SNIFF_BYTES)
    except OSError:
        return None
    text_hits = 0
    for line in head.split(b"\n")[:200]:
        if not line.strip() or line[:1] == b"\t":
            continue
        if TRACE_LINE.match(line):
            return TRACE
        if LINE_RE.match(clean_line(line)):
            text_hits += 1
            if text_hits >= 1:
                return TEXT
    return None


def rank_from_name(path: str) -> int | None:
    m = RANK_IN_NAME.search(os.path.basename(path))
    return int(m.group(1)) if m else None


def find_logs(path: str, latest: bool = False) -> tuple[list[FoundLog], list[str]]:
    """The logs under `path` and notes on what was skipped. Raises NoLogsError for nothing to read."""
    if not os.path.exists(path):
        raise NoLogsError(f"{path}: no such file or folder")
    if not os.access(path, os.R_OK):
        raise NoLogsError(f"{path}: not readable (permission denied)")
    notes: list[str] = []
    if os.path.isdir(path):
        candidates = folder_files(path)
        if not candidates:
            raise NoLogsError(f"{path}: the folder is empty")
    else:
        if os.path.getsize(path) == 0:
            raise NoLogsError(f"{path}: the file is empty")
        candidates = [path]
    found: list[FoundLog] = []
    for candidate in candidates:
        if os.path.getsize(candidate) == 0:
            notes.append(f"{candidate}: empty file, skipped")
            continue
        kind = sniff(candidate)
        if kind is None:
            if candidate == path:
                raise NoLogsError(f"{path}: not a TORCH_TRACE file or TORCH_LOGS text "
                                  "(no trace record or log line in its first 64 KiB)")
            continue
        found.append(FoundLog(candidate, kind, rank_from_name(candidate)))
    if not found:
        raise NoLogsError(f"{path}: no TORCH_TRACE file or TORCH_LOGS text in this folder")
    found.sort(key=lambda f: f.kind != TRACE)  # traces first: their order of compile ids leads
    if latest:
        traces = [f for f in found if f.kind == TRACE]
        if traces:
            newest = max(traces, key=lambda f: os.path.getmtime(f.path))
            notes.append(f"--latest: reading {newest.path} only")
            found = [newest]
    return found, notes


def folder_files(folder: str) -> list[str]:
    """Regular files in the folder and one level down (a TORCH_COMPILE_DEBUG tree), sorted."""
    files: list[str] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        raise NoLogsError(f"{folder}: cannot list the folder ({exc.strerror})") from None
    subdirs = []
    for entry in entries:
        if entry.is_file():
            files.append(entry.path)
        elif entry.is_dir() and not entry.name.startswith("."):
            subdirs.append(entry.path)
    for sub in subdirs:
        try:
            files.extend(e.path for e in sorted(os.scandir(sub), key=lambda e: e.name) if e.is_file())
        except OSError:
            continue
    return files
