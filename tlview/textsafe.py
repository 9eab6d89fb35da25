"""Text from logs made safe to show: control characters become visible, never interpreted.

Payloads contain arbitrary user code and messages. Escape sequences (clear screen, set title,
OSC 52 clipboard writes), carriage returns and bidi overrides must not act on the terminal, so
they are shown as `\\x1b`, `\\r`, `\\u202e`. Rich markup is not a concern here: callers build
`rich.text.Text` objects (never markup strings) from this text.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

# C0 controls except TAB and newline, DEL, C1 controls, every bidi control (marks, embeddings,
# overrides, isolates, the Arabic letter mark U+061C) and the invisible ones (zero-width space and
# joiners, word joiner and invisible operators, line and paragraph separators, the BOM,
# interlinear annotation marks, the Mongolian vowel separator): none reaches a terminal unseen.
_INVISIBLE = ("\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069"
              "\ufeff\ufff9-\ufffb")
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def _visible(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """Control characters made visible; TAB and newline kept."""
    return _UNSAFE.sub(_visible, text)


_BREAKS = re.compile("[\t\n]")


def visible_name(name: str) -> str:
    """A file name as one printable line: a byte that is not UTF-8 as `\\xff` (as `ls -b`), and
    every control character, newline and tab too, made visible (a name is never two lines)."""
    name = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return _BREAKS.sub(_visible, visible(name))


FIX_CHARS = 2000  # a fix is shown whole (the longest is about 450 characters): it is the answer


def one_line(text: str, limit: int = 200) -> str:
    """First line, made visible and cut to `limit` characters."""
    line = visible(text.split("\n", 1)[0].replace("\t", " "))
    return line if len(line) <= limit else line[: limit - 1] + "…"


def visible_data(value):
    """Every text inside a summary (dicts, lists) made visible: what the headless report prints."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {k: visible_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [visible_data(v) for v in value]
    return value


# ---- names that are not UTF-8, in what tlview writes -------------------------------------------

def _escaped_byte(error: UnicodeError) -> tuple[str, int]:
    """A byte of a file name that is not UTF-8 (Python keeps it as a surrogate) shows as `\\xff`,
    as `ls -b` shows it, instead of ending the output with an encoding error."""
    bad = error.object[error.start:error.end]
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}"
                   for c in bad), error.end


codecs.register_error("tlview-escape", _escaped_byte)


def escape_undecodable(stream) -> None:
    try:
        stream.reconfigure(errors="tlview-escape")
    except (AttributeError, ValueError):
        pass  # not a TextIOWrapper: it writes what it can


# In UTF-8: C1 controls (U+0080-U+009F; U+009B is a CSI, U+009D an OSC to a terminal that takes
# 8-bit controls), the bidi controls and the invisible ones (_INVISIBLE). orjson escapes C0 itself
# and writes these raw.
_UNSAFE_UTF8 = re.compile(rb"\xc2[\x80-\x9f]|\xd8\x9c|\xe1\xa0\x8e|\xe2\x80[\x8b-\x8f\xa8\xa9\xaa-\xae]|"
                          rb"\xe2\x81[\xa0-\xa4\xa6-\xa9]|\xef\xbb\xbf|\xef\xbf[\xb9-\xbb]")


def _json_escape(m: re.Match) -> bytes:
    return b"\\u%04x" % ord(m.group().decode("utf-8"))


def json_bytes(summary: dict) -> bytes:
    """The JSON document, with every control character escaped (`\\u001b`, `\\u009b`): a
    `cat` of it never acts on the terminal. (Those bytes occur only inside JSON strings.)"""
    import orjson

    def dump(doc) -> bytes:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str)

    try:
        data = dump(summary)
    except orjson.JSONEncodeError:
        # A file name with a byte that is not UTF-8: JSON holds text, so the byte shows as `\xff`.
        data = dump(_without_surrogates(summary))
    return _UNSAFE_UTF8.sub(_json_escape, data)


def _streamed(value) -> bool:
    return callable(value) or (hasattr(value, "__iter__") and not isinstance(value, (list, tuple, dict, str, bytes)))


def json_chunks(summary: dict, limit: int = 1 << 20) -> Iterator[bytes]:
    """json_bytes(summary) in pieces of about `limit` bytes, the same bytes: a top-level value that
    is an iterable other than a list (the summary's compile entries, made as they are read) is
    written an item at a time and never held whole; a function's value (what reading them found)
    is asked for when its turn comes. 100,000 compile ids: 215 MB of JSON, never all in memory."""
    later = [k for k, v in summary.items() if _streamed(v)]
    if not later:
        yield json_bytes(summary)
        return
    # A top-level key's line (a newline and two spaces before it) occurs nowhere inside a JSON
    # string (no raw newline there): where the skeleton holds a placeholder, the value goes.
    skeleton = json_bytes({k: (_PLACEHOLDER if k in later else v) for k, v in summary.items()})
    pieces, rest = [], skeleton  # the skeleton around the values written in pieces
    for key in later:
        mark = b"\n  " + json_bytes(key) + b": "
        before, rest = rest.split(mark + json_bytes(_PLACEHOLDER), 1)
        pieces.append(before + mark)
    pieces.append(rest)
    buffer = bytearray(pieces[0])
    for key, after in zip(later, pieces[1:]):
        value = summary[key]
        if callable(value):
            buffer += _indented(json_bytes(value()), b"\n  ")
        else:
            count = 0
            for item in value:
                buffer += (b",\n    " if count else b"[\n    ") + _indented(json_bytes(item), b"\n    ")
                count += 1
                if len(buffer) >= limit:
                    yield bytes(buffer)
                    buffer.clear()
            buffer += b"\n  ]" if count else b"[]"
        buffer += after
    yield bytes(buffer)


_PLACEHOLDER = "tlview: written in pieces"


def _indented(data: bytes, newline: bytes) -> bytes:
    return data.replace(b"\n", newline)


def _without_surrogates(value):
    if isinstance(value, str):
        return value.encode("utf-8", "tlview-escape").decode("utf-8")
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_surrogates(v) for v in value]
    return value
