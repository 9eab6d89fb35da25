"""A trace file's records read back from disk when a pane asks: metadata, payloads, stack frames.

An object each TraceFile owns (`records`), reading the offsets and kinds its file's scan found;
TraceFile's own methods of the same names hand on to it.
"""

from __future__ import annotations

import json
from functools import lru_cache
from hashlib import md5
from typing import TYPE_CHECKING

import orjson

from tlview.source.damaged_lines import ENVELOPE_START
from tlview.source.payload import LoadedPayload, decode_file_region, load_payload

if TYPE_CHECKING:
    from tlview.source.trace_file import TraceFile

# Big JSON strings inside compilation metrics (40 KB of the 45 KB line): not kept in the index.
_CONFIG_FIELDS = ("inductor_config", "dynamo_config", "functorch_config")
# What the index keeps of them instead: the md5 of the dynamo_config and the torch version, by
# which a compile's settings (domain/settings.py) are read from disk once per distinct config,
# not once per compile (10,000 compile ids: 5,336 reads of a 40 KB line, 0.2 s of --report).
CONFIG_DIGEST = "dynamo_config_md5"
_METADATA_HEAD = 64 << 10  # enough for almost every envelope line; longer ones are read whole


def loads_metadata(line: bytes, cut_configs: bool = False, at: int = 0) -> tuple[dict | None, str]:
    """An envelope's JSON object, or (None, what is wrong with it). A line with bytes that are
    not UTF-8 is read with U+FFFD in their place: (its object, where the first of them is), `at`
    being where `line` starts in its envelope line.

    With `cut_configs`, the config strings of compilation metrics are dropped once parsed (they
    are read from disk when a pane shows them). Parsed whole, then dropped: orjson read a real
    33 KB metrics line in 17.5 µs, where cutting the strings out of the bytes first and parsing
    the rest took 37 µs (the search for each string's end was most of it)."""
    try:
        meta = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        meta, error = _loads_damaged(line, exc.msg, at)
        if meta is None:
            return meta, error
    else:
        error = ""
    if not isinstance(meta, dict) or not meta:
        return None, "metadata is not a JSON object"
    if cut_configs:
        for value in meta.values():
            if isinstance(value, dict):
                _drop_configs(value)
    return meta, error


def _drop_configs(event: dict) -> None:
    config = event.get("dynamo_config")
    if isinstance(config, str):
        version = event.get("pytorch_version")
        event[CONFIG_DIGEST] = config_digest(config, version if isinstance(version, str) else None)
    for name in _CONFIG_FIELDS:
        if isinstance(event.get(name), str):
            del event[name]


def config_digest(config: str, version: str | None) -> str:
    """The md5 of a compile's dynamo_config text and torch version (`CONFIG_DIGEST`)."""
    return md5(f"{version}\0{config}".encode("utf-8", "surrogatepass"), usedforsecurity=False).hexdigest()


def _loads_damaged(line: bytes, why: str, at: int) -> tuple[dict | None, str]:
    """loads_metadata of a line orjson rejects: bytes that are not UTF-8 (orjson says
    "surrogates not allowed" of them all), or NaN and Infinity (Python's json.dumps writes
    them; JSON and orjson reject them)."""
    text: bytes | str = line
    note = ""
    try:
        line.decode()
    except UnicodeDecodeError as bad:
        note = f"the envelope line is not valid UTF-8 at byte {at + bad.start + 1}"
        text = line.decode("utf-8", "replace")
    meta = None
    if note:
        try:
            meta = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            why = exc.msg
    if isinstance(text, str):
        nonfinite = "NaN" in text or "Infinity" in text
    else:
        nonfinite = b"NaN" in text or b"Infinity" in text
    if meta is None and nonfinite:
        try:
            meta = json.loads(text)
        except ValueError:
            pass
    if meta is None:
        return None, f"{note}, nor valid JSON ({why})" if note else f"metadata is not valid JSON ({why})"
    if not isinstance(meta, dict) or not meta:
        return None, "metadata is not a JSON object"
    return meta, note and f"{note} (read with U+FFFD in its place)"


def _string_field(line: bytes, name: str) -> str | None:
    """The value of the JSON string field `name` in a metadata line, when it is followed by another
    field (`"name": "...", "next"`): inside the string every quote is escaped, so its end is the
    first `", "` whose quote is not."""
    key = b'"' + name.encode() + b'": "'
    at = line.find(key)
    if at < 0:
        return None
    start = stop = at + len(key)
    while (stop := line.find(b'", "', stop)) >= 0:
        slashes = stop - len(line[:stop].rstrip(b"\\"))
        if slashes % 2 == 0:
            return _json_string(line[start:stop])
        stop += 1
    return None


@lru_cache(maxsize=64)  # a run's compiles share a handful of configs: each is decoded once
def _json_string(literal: bytes) -> str | None:
    try:
        value = orjson.loads(b'"' + literal + b'"')
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


class TraceRecords:
    """Lazy access to the records a TraceFile indexed."""

    def __init__(self, file: TraceFile) -> None:
        self.file = file

    def record_span(self, rec: int) -> tuple[int, int]:
        """(envelope offset, end offset) of record `rec`: its envelope and payload lines, not the
        bytes of no record that may follow them (record_ends.py)."""
        file = self.file
        offsets = file.offsets
        start = offsets[rec]
        end = offsets[rec + 1] if rec + 1 < len(offsets) else file.scanned_to
        ends = file.record_ends
        return start, ends.record_end(start, end) if ends.cuts else end

    def envelope(self, rec: int) -> tuple[bytes, int, int]:
        """(envelope line, payload start, record end)."""
        read_range = self.file.read_range
        start, end = self.record_span(rec)
        head = read_range(start, min(end, start + _METADATA_HEAD))
        eol = head.find(b"\n")
        if eol < 0 and end - start > len(head):
            head = read_range(start, end)  # an envelope line longer than the head
            eol = head.find(b"\n")
        line = head if eol < 0 else head[:eol]
        return line, start + len(line) + 1, end

    def envelope_line(self, rec: int) -> bytes:
        """Record `rec`'s envelope line (up to its first 64 KiB), also while it is being scanned;
        up to the next record glued on the same line."""
        read_range = self.file.read_range
        start = self.file.offsets[rec]
        head = read_range(start, start + 4096)  # (most are shorter: a stack is a few KiB)
        if b"\n" not in head and len(head) == 4096:
            head = read_range(start, start + _METADATA_HEAD)
        eol = head.find(b"\n")
        line = head if eol < 0 else head[:eol]
        glued = ENVELOPE_START.search(line, 1)
        return line[:glued.start()] if glued else line

    def load_metadata(self, rec: int) -> dict | None:
        """Record `rec`'s metadata, read from disk (None if it does not parse)."""
        line, _, _ = self.envelope(rec)
        j = line.find(b"] {")
        meta, _error = loads_metadata(line[j + 2:]) if j >= 0 else (None, "")
        return meta

    def event_strings(self, rec: int, names: tuple[str, ...]) -> dict[str, str] | None:
        """String fields of a record's event (`dynamo_config`, `pytorch_version` of compilation
        metrics), read without parsing the rest of its line: a 40 KB metrics line took 60 µs to
        parse whole, once for each compile a fix was chosen for. None: not read this way (a field
        missing, not a plain string); load_event then reads the record whole."""
        line, _, _ = self.envelope(rec)
        found = {}
        for name in names:
            value = _string_field(line, name)
            if value is None:
                return None
            found[name] = value
        return found

    def load_event(self, rec: int) -> dict:
        """The value of the record's event key (`{"create_symbol": {...}}` -> `{...}`)."""
        meta = self.load_metadata(rec) or {}
        value = meta.get(self.file.kind_of(rec))
        return value if isinstance(value, dict) else {}

    def load_payload(self, rec: int) -> LoadedPayload:
        """Read a record's payload from disk, in steps, and verify its md5."""
        start, end, expected = self._payload_place(rec)
        return load_payload(self.file.read_range, start, end, expected, self.file.line_number)

    def verified_md5(self, rec: int) -> str | None:
        """The md5 a record's envelope gives its payload, when the scan checked every payload of
        this file and each matched: equal md5s are then equal payloads, and a reader of many ranks
        parses one of them (1,023 ranks alike read 4,096 payloads). None otherwise."""
        if not self.file.verify_md5 or self.file.md5_bad:
            return None
        if (said := self.file.payload_md5s.get(rec)) is not None:
            return said  # (the scan kept it)
        line, _, _ = self.envelope(rec)
        at = line.rfind(b'"has_payload": "')  # (torch writes it last: 32 hex digits)
        return line[at + 16:at + 48].decode("ascii", "replace") if at >= 0 and line[at + 48:at + 49] == b'"' else None

    def payload_md5_ok(self, rec: int) -> bool | None:
        """Whether a record's payload matches its md5 (None: it has none), hashed a few MiB at a
        time: nothing of it is kept."""
        start, end, expected = self._payload_place(rec)
        if expected is None:
            return None
        return decode_file_region(self.file.read_range, start, end).md5 == expected

    def _payload_place(self, rec: int) -> tuple[int, int, str | None]:
        """(payload start, record end, the md5 its envelope gives)."""
        line, payload_start, end = self.envelope(rec)
        j = line.find(b"] {")
        meta = loads_metadata(line[j + 2:])[0] if j >= 0 else None
        expected = meta.get("has_payload") if isinstance(meta, dict) else None
        return min(payload_start, end), end, expected if isinstance(expected, str) else None

    def frame_filename(self, index: int | str) -> str:
        """A stack frame's file: string-table ids resolve through the `{"str": ...}` records, which
        are the process's (another file of the same process, e.g. draft_export's, may define them)."""
        if isinstance(index, str):
            return index
        file = self.file
        name = file.strings.get(index)
        if name is None:
            name = file.sink.process_string(file, index)
        return name if name is not None else f"(unknown string {index})"
