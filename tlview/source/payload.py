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
    """Strip the TABs off a (small) payload region; report lines that are not payload lines."""
    decoder = PayloadDecoder(keep=len(region))
    decoder.feed(region)
    decoder.close()
    return DecodedPayload(decoder.kept_text(), decoder.blank_lines, decoder.bad_lines)


_AT_LINE_START, _IN_PAYLOAD_LINE, _IN_OTHER_LINE = range(3)


class PayloadDecoder:
    """A payload region decoded as it is fed, in pieces of any size: its md5, the lines that are
    not payload, and (up to `keep` bytes) its text.

    Written by hand because memory must not follow a payload's size: a 500 MB payload, or a 2 GB
    line with no newline, is hashed a few MiB at a time. The rules are tlparse's: one TAB starts
    each payload line, a trailing CR is dropped, blank lines inside are skipped; the first line
    that is none of these ends the payload (it and what follows are reported as bad lines)."""

    __slots__ = (
        "_held_cr",
        "_in_payload",
        "_line_start",
        "_lines",
        "_other_last",
        "_other_len",
        "_other_marks",
        "_pos",
        "_state",
        "bad_lines",
        "blank_lines",
        "digest",
        "keep",
        "kept",
        "kept_size",
        "size",
        "truncated",
    )

    def __init__(self, keep: int = 0) -> None:
        self.digest = hashlib.md5()
        self.keep = keep  # bytes of payload text to keep (0: only hash it)
        self.kept: list[bytes] = []
        self.kept_size = 0
        self.truncated = False  # more text came than `keep`
        self.blank_lines: list[int] = []
        self.bad_lines: list[int] = []
        self.size = 0  # bytes of payload text
        self._pos = 0  # region offset of the next byte fed
        self._state = _AT_LINE_START
        self._in_payload = True
        self._lines = 0  # payload lines so far (a newline goes between two)
        self._held_cr = False  # a CR at the end of a piece: dropped if its line ends there
        self._line_start = 0
        self._other_len = 0  # a line that is not payload: its length, non-space bytes, last byte
        self._other_marks = 0
        self._other_last = 0

    @property
    def md5(self) -> str:
        return self.digest.hexdigest()

    @property
    def payload_ended(self) -> bool:
        """A line that is not payload began (one of more than a CR cannot be a blank line)."""
        return not self._in_payload or (self._state == _IN_OTHER_LINE and self._other_len > 1)

    def kept_text(self) -> bytes:
        return b"".join(self.kept)

    def _emit(self, text: bytes) -> None:
        self.digest.update(text)
        self.size += len(text)
        if self.kept_size < self.keep:
            room = self.keep - self.kept_size
            self.kept.append(text if len(text) <= room else text[:room])
            self.kept_size += min(len(text), room)
            self.truncated = self.truncated or len(text) > room
        elif text:
            self.truncated = True

    def _start_payload_line(self) -> None:
        if self._lines:
            self._emit(b"\n")
        self._lines += 1

    def feed(self, data: bytes) -> None:
        i, n, base = 0, len(data), self._pos
        slow_until = -1  # lines up to here failed the fast path: take them one by one
        while i < n:
            state = self._state
            if state == _AT_LINE_START:
                self._line_start = base + i
                if self._in_payload and data[i] == 9:
                    # Fast path: a run of whole TAB lines (every real payload) in one replace.
                    last = data.rfind(b"\n", i) if i > slow_until else -1
                    if last > i:
                        part = data[i:last + 1]
                        count = part.count(b"\n")
                        if part.count(b"\n\t") == count - 1:
                            text = part[1:-1].replace(b"\n\t", b"\n")
                            if b"\r" in text:  # a file that went through Windows line endings
                                text = text.replace(b"\r\n", b"\n").removesuffix(b"\r")
                            self._start_payload_line()
                            self._lines += count - 1
                            self._emit(text)
                            i = last + 1
                            continue
                        slow_until = last
                    self._start_payload_line()
                    self._state = _IN_PAYLOAD_LINE
                    i += 1
                else:
                    self._state = _IN_OTHER_LINE
                    self._other_len = self._other_marks = self._other_last = 0
                continue
            nl = data.find(b"\n", i)
            stop = n if nl < 0 else nl
            if state == _IN_PAYLOAD_LINE:
                if self._held_cr:
                    self._held_cr = False
                    if stop > i:
                        self._emit(b"\r")
                piece = data[i:stop]
                if piece.endswith(b"\r"):
                    piece = piece[:-1]
                    self._held_cr = True
                if piece:
                    self._emit(piece)
            else:
                piece = data[i:stop]
                self._other_len += len(piece)
                self._other_marks += len(piece) - piece.count(b" ")
                if piece:
                    self._other_last = piece[-1]
            if nl < 0:
                break
            self._end_line()
            i = nl + 1
        self._pos = base + n

    def _end_line(self) -> None:
        if self._state == _IN_PAYLOAD_LINE:
            self._held_cr = False  # a CR that ends its line is not payload
        elif self._state == _IN_OTHER_LINE:
            length, marks = self._other_len, self._other_marks
            if self._other_last == 13:
                length, marks = length - 1, marks - 1
            if self._in_payload and length == 0:
                self.blank_lines.append(self._line_start)  # tlparse skips them; so do we
            else:
                self._in_payload = False
                if marks > 0:  # the same test as between records: only spaces are blank
                    self.bad_lines.append(self._line_start)
        self._state = _AT_LINE_START

    def close(self) -> PayloadDecoder:
        """The region ended: a last line with no newline ends here."""
        if self._state != _AT_LINE_START:
            self._end_line()
        return self


def whole_payload(block: bytes, start: int, stop: int, md5: str) -> bytes | None:
    """The payload text of block[start:stop] when it is whole and right, at C speed; else None
    (then the exact decoder, which says what is wrong).

    Every TAB deleted at once (bytes.replace) gives the text when each TAB is a line's first
    byte; when its md5 matches, the record is whole (a blank or bad line, a TAB inside a line
    would have changed the text, so the md5). A CR goes to the decoder, which drops one that ends
    a line, as tlparse does."""
    if not (0 <= start < stop <= len(block)) or block[stop - 1] != 10 or block[start] != 9:
        return None
    text = block[start:stop - 1].replace(b"\t", b"")  # (1.4x bytes.translate's speed: memchr)
    if b"\r" in text or hashlib.md5(text).hexdigest() != md5:
        return None
    return text


def decode_file_region(read_range, start: int, end: int, keep: int = 0, step: int = 4 << 20,
                       for_display: bool = False) -> PayloadDecoder:
    """Decode [start, end) of a file `step` bytes at a time (`read_range(a, b)` reads it).

    `for_display`: pause between steps (a UI thread gets the GIL), and stop reading once `keep`
    bytes of text are kept or the payload has ended (what follows is not shown: a hole or garbage
    after a record is not read to its end)."""
    decoder = PayloadDecoder(keep)
    pos = start
    while pos < end:
        data = read_range(pos, min(end, pos + step))
        if not data:
            break  # the file shrank under us
        decoder.feed(data)
        pos += len(data)
        if for_display:
            if decoder.truncated or decoder.payload_ended:
                break
            if pos < end:
                time.sleep(0)
    return decoder.close()


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
    def of_text(cls, text: str, md5_ok: bool | None = None,
                problems: list[str] | None = None) -> LoadedPayload:
        payload = cls(text.split("\n"), md5_ok, problems or [])
        payload._text = text
        return payload


SHOWN_BYTES = 8 << 20  # a pane shows the start of a bigger payload (memory follows what is shown)


def load_payload(read_range, start: int, end: int, expected_md5: str | None,
                 line_number=None, step: int = LOAD_STEP, shown: int = SHOWN_BYTES) -> LoadedPayload:
    """The payload in [start, end) of a file (`read_range(a, b)` reads it), decoded in steps with
    a pause between steps (a UI thread gets the GIL in between instead of stalling for seconds).

    Only the first `shown` bytes of text are kept: a bigger payload shows its start at once, and
    says so (its md5 is then not checked: that would read it all)."""
    decoder = decode_file_region(read_range, start, end, keep=shown, step=step, for_display=True)
    problems: list[str] = []
    md5_ok = None
    if decoder.truncated:
        problems.append(f"a payload of {size_text(end - start)}: only its first {size_text(shown)} are shown, "
                        "and its md5 was not checked")
    elif expected_md5 is not None:
        md5_ok = decoder.md5 == expected_md5
        if not md5_ok:
            problems.insert(0, "md5 mismatch: " + MD5_MISMATCH)
    if decoder.bad_lines:
        where = f"line {line_number(start + decoder.bad_lines[0])}: " if line_number else ""
        problems.append(f"{where}what follows it is neither payload nor a record (not shown)")
    if decoder.blank_lines:
        problems.append(f"{len(decoder.blank_lines)} blank line(s) inside the payload were skipped")
    text = decoder.kept_text().decode("utf-8", "replace")
    return LoadedPayload.of_text(text, md5_ok, problems)


def size_text(n: int) -> str:
    """`3 bytes`, `1,024 bytes`, `1.5 MiB`, `512 MiB`: sizes in messages."""
    if n < 1 << 20:
        return f"{n:,} byte" + ("" if n == 1 else "s")
    return f"{n / (1 << 20):,.1f} MiB".replace(".0 MiB", " MiB")
