"""Finding logs: a path is a trace file, a trace folder, or TORCH_LOGS text; told apart by content.

Whatever sits in a folder (pipes, devices, broken or looping links, compressed or unreadable
files), finding logs never blocks, never reads a file twice and never fails: what it skips it
says, with the path, in a note. A named pipe is never opened (that blocks until a writer comes).
"""

from __future__ import annotations

import errno
import itertools
import os
import re
import shlex
import stat
from dataclasses import dataclass

from tlview.source.reader import CR_TO_LF, cr_only
from tlview.source.text_log import LINE_RE, TORCH_EXCEPTIONS, clean_line
from tlview.textsafe import visible_name

TRACE_LINE = re.compile(rb"^V\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^\n]*?:\d+\] \{\"")
TRACE_LINE_INSIDE = re.compile(rb"V\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ [^\n]*?:\d+\] \{\"")
RANK_IN_NAME = re.compile(r"rank_(\d+)")
DIGITS = re.compile(r"(\d+)")
SNIFF_BYTES = 64 << 10
# A log's kind is mostly told by its first lines: read first, and on to SNIFF_BYTES only when
# they do not tell (64 KiB read and split of each of 1,024 rank files cost 0.13 s).
SNIFF_FIRST = 4 << 10
BOM = b"\xef\xbb\xbf"  # editors and some Windows tools put it before the first line

# What a compressed file starts with: its format, and the tool that prints it decompressed.
COMPRESSED = ((b"\x1f\x8b", "gzip", "zcat"), (b"BZh", "bzip2", "bzcat"),
              (b"\xfd7zXZ\x00", "xz", "xzcat"), (b"\x28\xb5\x2f\xfd", "zstd", "zstdcat"))
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")

TRACE = "trace"
TEXT = "text"


class NoLogsError(Exception):
    """The path holds nothing tlview can read; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class FoundLog:
    path: str
    kind: str  # TRACE or TEXT
    rank_from_name: int | None
    name: str | None = None  # what to call it, when not its path (stdin's copy is "stdin")

    @property
    def shown_name(self) -> str:
        return self.name or shown(self.path)


def sniff(path: str) -> str | None:
    """TRACE, TEXT or None, from the first lines of the file (never from its name)."""
    try:
        return sniff_file(path)[0]
    except OSError:
        return None


def sniff_file(path: str) -> tuple[str | None, bytes]:
    """sniff_bytes of the file's first bytes, and the bytes read (b"" for what is not a regular
    file). The first SNIFF_FIRST bytes are read, and the rest of SNIFF_BYTES only when their whole
    lines do not tell: the answer is sniff_bytes's on SNIFF_BYTES either way."""
    with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None, b""
        head = f.read(SNIFF_FIRST)
        if len(head) == SNIFF_FIRST:
            kind = _kind_of_whole_lines(head)
            if kind is not None:
                return kind, head
            head += f.read(SNIFF_BYTES - SNIFF_FIRST)
        kind = sniff_bytes(head)
        if kind is None and len(head) == SNIFF_BYTES and not head.strip(b"\0"):
            # A hole (a file cut and written on, a crash before the data reached the disk): its
            # records come after it, and the reader reads them (damaged_lines.py says so).
            after = _after_nuls(f.fileno(), len(head))
            kind = sniff_bytes(after) if after else None
            if kind is None and os.path.basename(path).startswith(TORCH_TRACE_PREFIX):
                kind = TRACE  # (torch's own name: more NULs than looked past)
        return kind, head


TORCH_TRACE_PREFIX = "dedicated_log_torch_trace_"  # what torch names a TORCH_TRACE file
NUL_SCAN_MAX = 64 << 20  # NUL bytes read past to the first line (a hole the disk knows is skipped)


def _after_nuls(fd: int, start: int) -> bytes:
    """SNIFF_BYTES from the first byte that is not NUL at or after `start`; b"" for none within
    NUL_SCAN_MAX bytes read (a sparse file's hole is skipped without reading it)."""
    pos, read = start, 0
    while read < NUL_SCAN_MAX:
        try:
            pos = os.lseek(fd, pos, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                return b""  # only a hole to the end
        except AttributeError:
            pass  # (no SEEK_DATA here)
        chunk = os.pread(fd, SNIFF_BYTES, pos)
        if not chunk:
            return b""
        if rest := chunk.lstrip(b"\0"):
            return rest + os.pread(fd, SNIFF_BYTES - len(rest), pos + len(chunk))
        pos += len(chunk)
        read += len(chunk)
    return b""


def read_head(path: str) -> bytes:
    """A regular file's first bytes; b"" for anything else. Never blocks: a named pipe is opened
    without waiting for a writer (O_NONBLOCK), and not read (that would take a job's output)."""
    with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return b""
        return f.read(SNIFF_BYTES)


def sniff_bytes(head: bytes) -> str | None:
    """TRACE, TEXT or None, from a log's first bytes. A job's stderr with no log line but the
    traceback of a torch.compile exception (TORCH_LOGS set to categories that logged nothing
    before the job died) is TEXT: it tells a failed compile."""
    if cr_only(head, whole=True):
        head = head.translate(CR_TO_LF)  # old Mac line ends: read as lines (reader.py)
    lines = head.removeprefix(BOM).split(b"\n")
    kind = _kind_of_lines(lines[:SNIFF_LINES])
    if kind is not None:
        return kind
    if b"Traceback (most recent call last)" in head and any(
            line.startswith(_TORCH_EXCEPTIONS) for line in lines):
        return TEXT
    return None


SNIFF_LINES = 200


def _kind_of_lines(lines: list[bytes]) -> str | None:
    """TRACE or TEXT from the first line that tells."""
    for line in lines:
        if not line.strip() or line[:1] == b"\t":
            continue
        if is_trace_line(line):
            return TRACE
        if LINE_RE.match(clean_line(line)):
            return TEXT
    return None


def _kind_of_whole_lines(head: bytes) -> str | None:
    """What sniff_bytes tells of a longer head, from this head's whole lines; None when they do
    not tell (nor a bare CR's line ends, which have no LF: those are None too)."""
    end = head.rfind(b"\n")
    if end < 0:
        return None
    return _kind_of_lines(head[:end].removeprefix(BOM).split(b"\n", SNIFF_LINES)[:SNIFF_LINES])


_TORCH_EXCEPTIONS = tuple(prefix.encode() for prefix in TORCH_EXCEPTIONS)


def is_trace_line(line: bytes) -> bool:
    # `search` past the start: a first record glued after NULs or a torn write is still a trace
    return TRACE_LINE.match(line) is not None or (
        line[:1] in (b"\x00", b"V") and TRACE_LINE_INSIDE.search(line) is not None)


def is_log_line(line: bytes) -> bool:
    """A TORCH_TRACE envelope or a TORCH_LOGS line (a job's own prints are neither)."""
    return is_trace_line(line) or LINE_RE.match(clean_line(line)) is not None


def compressed_hint(path: str, head: bytes) -> str | None:
    """`x.log.gz is compressed (gzip): zcat x.log.gz > x.log (or ...)`, or None if it is not."""
    for magic, fmt, tool in COMPRESSED:
        if head.startswith(magic):
            break
    else:
        return None
    name = shown(path)
    quoted = shlex.quote(name)
    plain = next((name[: -len(s)] for s in COMPRESSED_SUFFIXES if name.endswith(s)), None)
    into = f"{tool} {quoted} > {shlex.quote(plain)} (or {tool} {quoted} | tlview --follow -)" if plain \
        else f"{tool} {quoted} | tlview --follow -"
    return f"{name} is compressed ({fmt}): {into}"


def special_file_hint(path: str, mode: int) -> str | None:
    """Why a path that is neither a folder nor a regular file cannot be read as a log."""
    what = special_kind(mode)
    if what is None:
        return None
    name = shown(path)
    if stat.S_ISFIFO(mode):
        return f"{name} is a named pipe: pipe it in with `cat {shlex.quote(name)} | tlview --follow -`"
    return f"{name} is {what}, not a log file"


def special_kind(mode: int) -> str | None:
    """What a path is that is neither a folder nor a regular file: `a named pipe`, `a device`..."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def shown(path: str) -> str:
    """A path as it can be printed on one line: a byte that is not UTF-8 shows as `\\xff`, an
    escape or a newline in a name as `\\x1b`, `\\x0a` (textsafe.visible_name)."""
    return visible_name(path)


def stat_path(path: str) -> os.stat_result:
    """os.stat, or NoLogsError saying truly what is wrong (a broken or looping link is not
    "no such file")."""
    try:
        return os.stat(path)
    except OSError as exc:
        raise NoLogsError(unreachable(path, exc)) from None


def unreachable(path: str, exc: OSError) -> str:
    name = shown(path)
    if exc.errno == errno.ELOOP:
        return f"{name}: a symbolic link loop"
    if exc.errno == errno.ENOENT:
        if os.path.islink(path):
            return f"{name}: a broken symbolic link (to {shown(os.readlink(path))})"
        return f"{name}: no such file or folder"
    if exc.errno == errno.EACCES:
        return f"{name}: not readable (permission denied)"
    return f"{name}: {exc.strerror or exc}"


def check_readable(path: str) -> None:
    """An existing path that can never hold a log gets a true one-line message (NoLogsError):
    a pipe, a device, a compressed file. Nothing blocks: a pipe is known by stat, not opened."""
    st = stat_path(path)
    if hint := special_file_hint(path, st.st_mode):
        raise NoLogsError(hint)
    if stat.S_ISREG(st.st_mode) and st.st_size:
        try:
            head = read_head(path)
        except OSError as exc:
            raise NoLogsError(unreachable(path, exc)) from None
        if hint := compressed_hint(path, head):
            raise NoLogsError(hint)


def rank_from_name(path: str) -> int | None:
    m = RANK_IN_NAME.search(os.path.basename(path))
    return int(m.group(1)) if m else None


def find_logs(path: str, latest: bool = False, first_only: bool = False) -> tuple[list[FoundLog], list[str]]:
    """The logs under `path` and notes on what was skipped. Raises NoLogsError for nothing to read.
    `first_only`: stop at the first log (a check that there is one: reading the start of 20,000
    rank files took 0.9 s before the explorer's first screen)."""
    st = stat_path(path)
    if not os.access(path, os.R_OK):
        raise NoLogsError(f"{shown(path)}: not readable (permission denied)")
    notes: list[str] = []
    if stat.S_ISDIR(st.st_mode):
        candidates = folder_files(path, notes)
        if not candidates and not notes:
            raise NoLogsError(f"{shown(path)}: the folder is empty")
    else:
        check_readable(path)
        if st.st_size == 0:
            raise NoLogsError(f"{shown(path)}: the file is empty")
        candidates = [path]
    found: list[FoundLog] = []
    compressed: list[str] = []
    for candidate in candidates:
        try:
            kind, head = sniff_file(candidate)
        except OSError as exc:
            notes.append(f"{unreachable(candidate, exc)}, skipped")
            continue
        if not head:
            notes.append(f"{shown(candidate)}: empty file, skipped")
            continue
        if kind is None:
            if hint := compressed_hint(candidate, head):
                compressed.append(hint)
                notes.append(f"{hint}; skipped")
            elif candidate == path:
                raise NoLogsError(f"{shown(path)}: not a TORCH_TRACE file or TORCH_LOGS text "
                                  "(no trace record or log line in its first 64 KiB)")
            continue
        found.append(FoundLog(candidate, kind, rank_from_name(candidate)))
        if first_only:
            break
    if not found:
        why = f"{shown(path)}: no TORCH_TRACE file or TORCH_LOGS text in this folder"
        if compressed:
            why += f"; {len(compressed)} compressed: {compressed[0]}"
        elif notes:
            why += f" ({notes[0]})"
        raise NoLogsError(why)
    found.sort(key=lambda f: f.kind != TRACE)  # traces first: their order of compile ids leads
    if latest:
        traces = [f for f in found if f.kind == TRACE]
        if traces:
            newest = max(traces, key=lambda f: _mtime(f.path))
            notes.append(f"--latest: reading {shown(newest.path)} only")
            found = [newest]
    return found, notes


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def one_log_at(path: str, latest: bool) -> bool:
    """Whether the explorer reads one log at `path`: a file, the latest run, or a folder of one
    file. (A folder of many is not listed a second time for this: 20,000 rank files.)"""
    try:
        if latest or not stat.S_ISDIR(os.stat(path).st_mode):
            return True
        with os.scandir(path) as entries:
            if len(list(itertools.islice(entries, 2))) > 1:
                return False
    except OSError:
        return False
    return len(folder_files(path)) == 1  # (one entry: a file, or a folder one level down)


def folder_files(folder: str, notes: list[str] | None = None) -> list[str]:
    """Regular files in the folder and one level down (a TORCH_COMPILE_DEBUG tree), sorted.

    Each file once: a link to a file or folder already listed (`ln -s . loop`) adds nothing.
    What is not a regular file (a pipe, a device, a broken or looping link, a folder that
    cannot be listed) is skipped, and told in `notes`.
    """
    notes = [] if notes is None else notes
    files: list[str] = []
    seen: set[tuple[int, int]] = set()
    try:
        top = os.stat(folder)
        seen.add((top.st_dev, top.st_ino))
    except OSError:
        pass
    subdirs = []
    for path, st in _entries(folder, notes, top=True):
        if stat.S_ISDIR(st.st_mode):
            subdirs.append((path, st))
        elif (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            files.append(path)
    for sub, st in subdirs:
        if (st.st_dev, st.st_ino) in seen:
            continue  # a link back to a folder already listed (`ln -s . loop`)
        seen.add((st.st_dev, st.st_ino))
        for path, st in _entries(sub, notes, top=False):
            if not stat.S_ISDIR(st.st_mode) and (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                files.append(path)
    return files


def natural_order(name: str) -> list:
    """A sort key with the numbers in names as numbers: rank_2 before rank_10, so a job's ranks
    are read (and come into the tree, appended) in rank order."""
    parts: list = DIGITS.split(name)  # text, number, text, ...: the same types at each place
    parts[1::2] = [int(p) for p in parts[1::2]]
    return parts


def _entries(folder: str, notes: list[str], top: bool):
    """(path, stat) of the folder's regular files and folders; anything else noted, never opened."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: natural_order(e.name))
    except OSError as exc:
        if top:
            raise NoLogsError(f"{shown(folder)}: cannot list the folder ({exc.strerror})") from None
        notes.append(f"{shown(folder)}: cannot list the folder ({exc.strerror}), skipped")
        return
    for entry in entries:
        try:
            st = entry.stat()  # follows links: a link to a log is read
        except OSError as exc:
            notes.append(f"{unreachable(entry.path, exc)}, skipped")
            continue
        if stat.S_ISDIR(st.st_mode):
            if top and not entry.name.startswith("."):
                yield entry.path, st
        elif what := special_kind(st.st_mode):
            notes.append(f"{shown(entry.path)}: {what}, skipped")
        else:
            yield entry.path, st
