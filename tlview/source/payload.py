"""Payloads: the TAB-indented lines after an envelope line, read from disk only when asked for.

A payload region is the bytes from the line after the envelope to the next envelope. Its payload is
the TAB lines with one TAB stripped, joined with newlines; md5 of that text is the envelope's
`has_payload`. A region may also hold lines that belong to no record (garbage, a torn write):
those are returned as bad lines so that the caller can report them with their place.

One decoder (`decode_region`) serves the scan's md5 check and every pane's load, so a payload
reads and verifies the same way everywhere, with the same words for what is wrong.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field

MD5_MISMATCH = "the payload does not match its md5 (edited, cut short, or still being written)"
LOAD_STEP = 2 << 20  # bytes decoded between two pauses: a 100 MB payload never stalls the UI


@dataclass(slots=True)
class DecodedPayload:
    text: bytes
    blank_lines: list[int]  # offsets (relative to the region) of empty lines inside the payload
    bad_lines: list[int]  # offsets (relative to the region) of lines that are not payload


def decode_region(region: bytes) -> DecodedPayload:
    """Strip the TABs off a payload region; report lines that are not payload lines."""
    if not region:
        return DecodedPayload(b"", [], [])
    body = region if region.endswith(b"\n") else region + b"\n"
    # Fast path: every line starts with TAB (true of every real file we have seen).
    if body[0] == 9 and body.count(b"\n\t") == body.count(b"\n") - 1:
        text = body[1:-1].replace(b"\n\t", b"\n")
        if b"\r" in text:  # a file that went through Windows line endings
            text = text.replace(b"\r\n", b"\n").removesuffix(b"\r")
        return DecodedPayload(text, [], [])
    lines: list[bytes] = []
    blank: list[int] = []
    bad: list[int] = []
    pos = 0
    end = len(body)
    in_payload = True
    while pos < end:
        nl = body.find(b"\n", pos)
        line = body[pos:nl]
        if line.endswith(b"\r"):
            line = line[:-1]
        if in_payload and line[:1] == b"\t":
            lines.append(line[1:])
        elif in_payload and line == b"":
            blank.append(pos)  # tlparse skips blank lines inside a payload; so do we
        else:
            in_payload = False
            if line.strip(b" "):  # the same test as between records: only spaces are blank
                bad.append(pos)
        pos = nl + 1
    return DecodedPayload(b"\n".join(lines), blank, bad)


def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def pread_exact(fd: int, start: int, end: int) -> bytes:
    """Read [start, end) with pread (never mmap: a file truncated under a mapping raises SIGBUS)."""
    chunks = []
    pos = start
    while pos < end:
        chunk = os.pread(fd, min(end - pos, 1 << 24), pos)
        if not chunk:  # the file shrank under us: return what is there
            break
        chunks.append(chunk)
        pos += len(chunk)
    return b"".join(chunks)


def line_number_at(fd: int, offset: int) -> int:
    """1-based line number of a byte offset, counted on demand (indexing does not count lines)."""
    count = 0
    pos = 0
    while pos < offset:
        chunk = os.pread(fd, min(1 << 22, offset - pos), pos)
        if not chunk:
            break
        count += chunk.count(b"\n")
        pos += len(chunk)
    return count + 1


@dataclass(eq=False)
class LoadedPayload:
    """A payload read for display: its lines, whether its md5 matched, and what was wrong."""

    lines: list[str]
    md5_ok: bool | None = None  # None when the record has no md5
    problems: list[str] = field(default_factory=list)
    _text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = "\n".join(self.lines)
        return self._text

    @classmethod
    def of_text(cls, text: str) -> "LoadedPayload":
        payload = cls(text.split("\n"))
        payload._text = text
        return payload


def load_payload(read_range, start: int, end: int, expected_md5: str | None,
                 line_number=None, step: int = LOAD_STEP) -> LoadedPayload:
    """The payload in [start, end) of a file (`read_range(a, b)` reads it), decoded in steps.

    A big payload is read, hashed and split `step` bytes at a time with a pause between steps,
    so that a UI thread gets the GIL in between instead of stalling for seconds."""
    digest = hashlib.md5()
    lines: list[str] = []
    problems: list[str] = []
    blank = 0
    pos = start
    carry = b""
    first = True
    while pos < end or carry:
        block = carry + (read_range(pos, min(end, pos + step)) if pos < end else b"")
        block_start = pos - len(carry)
        pos = min(end, pos + step)
        cut = block.rfind(b"\n") + 1 if pos < end else len(block)
        if cut == 0:
            carry = block
            continue
        part, carry = block[:cut], block[cut:]
        decoded = decode_region(part)
        digest.update(decoded.text if first else b"\n" + decoded.text)
        first = False
        lines.extend(decoded.text.decode("utf-8", "replace").split("\n"))
        blank += len(decoded.blank_lines)
        if decoded.bad_lines:
            where = f"line {line_number(block_start + decoded.bad_lines[0])}: " if line_number else ""
            problems.append(f"{where}{len(decoded.bad_lines)} line(s) that are neither payload nor a "
                            "record follow it (not shown)")
            break
        if pos < end:
            time.sleep(0)  # let a UI thread have the GIL
    md5_ok = None
    if expected_md5 is not None:
        md5_ok = digest.hexdigest() == expected_md5
        if not md5_ok:
            problems.insert(0, "md5 mismatch: " + MD5_MISMATCH)
    if blank:
        problems.append(f"{blank} blank line(s) inside the payload were skipped")
    return LoadedPayload(lines if not first else [""], md5_ok, problems)
