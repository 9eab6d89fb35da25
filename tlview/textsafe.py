"""Text from logs made safe to show: control characters become visible, never interpreted.

Payloads contain arbitrary user code and messages. Escape sequences (clear screen, set title,
OSC 52 clipboard writes), carriage returns and bidi overrides must not act on the terminal, so
they are shown as `\\x1b`, `\\r`, `\\u202e`. Rich markup is not a concern here: callers build
`rich.text.Text` objects (never markup strings) from this text.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator, Mapping

# C0 controls except TAB and newline, DEL, C1 controls, and every character that shows nothing: all
# of Unicode's format characters (category Cf: bidi marks, embeddings, overrides and isolates, the
# Arabic letter mark, zero-width space and joiners, word joiner and invisible operators, the BOM,
# the soft hyphen, interlinear annotation marks, the tag characters that hide text, ...; Unicode
# 15's list), the line and paragraph separators, and the blanks that are letters or marks (the
# combining grapheme joiner, Hangul fillers, the braille blank, variation selectors): none
# reaches a terminal unseen.
_INVISIBLE = ("\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
              "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f"
              "\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
              "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef")
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]")


def _visible(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


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
    if not isinstance(error, UnicodeEncodeError):  # registered for writing only: text, not bytes
        raise error
    bad = error.object[error.start:error.end]
    return "".join(f"\\x{ord(c) - 0xDC00:02x}" if 0xDC80 <= ord(c) <= 0xDCFF else f"\\u{ord(c):04x}"
                   for c in bad), error.end


codecs.register_error("tlview-escape", _escaped_byte)


def escape_undecodable(stream) -> None:
    try:
        stream.reconfigure(errors="tlview-escape")
    except (AttributeError, ValueError):
        pass  # not a TextIOWrapper: it writes what it can


# In UTF-8, any character but ASCII: orjson escapes C0 itself and writes the rest raw; of these,
# the C1 controls (U+009B is a CSI, U+009D an OSC to a terminal that takes 8-bit controls) and the
# invisible ones (_INVISIBLE) are escaped. (A class of lead bytes: a JSON document of ASCII, most
# of them, is scanned at C speed.)
_NON_ASCII_UTF8 = re.compile(rb"[\xc2-\xf4][\x80-\xbf]+")


def _json_escape(m: re.Match) -> bytes:
    text = m.group().decode("utf-8", "surrogatepass")
    if not _UNSAFE.search(text):
        return m.group()
    return "".join(_json_char(c) for c in text).encode("utf-8")


def _json_char(char: str) -> str:
    if not _UNSAFE.match(char):
        return char
    code = ord(char)
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # (JSON writes it as a surrogate pair)
    return f"\\u{0xd800 + (code >> 10):04x}\\u{0xdc00 + (code & 0x3ff):04x}"


def json_bytes(summary: object) -> bytes:
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
    # (isascii runs in C at GB/s; the search for non-ASCII runs took 0.22 s of 31 MB of JSON,
    # 10,000 compile ids, where no byte was non-ASCII)
    return data if data.isascii() else _NON_ASCII_UTF8.sub(_json_escape, data)


def _streamed(value) -> bool:
    return callable(value) or (hasattr(value, "__iter__") and not isinstance(value, (list, tuple, dict, str, bytes)))


def json_chunks(summary: Mapping[str, object], limit: int = 1 << 20) -> Iterator[bytes]:
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
            assert isinstance(value, Iterable)  # (_streamed: a callable or an iterable)
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
