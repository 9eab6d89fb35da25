"""Text from logs made safe to show: control characters become visible, never interpreted.

Payloads contain arbitrary user code and messages. Escape sequences (clear screen, set title,
OSC 52 clipboard writes), carriage returns and bidi overrides must not act on the terminal, so
they are shown as `\\x1b`, `\\r`, `\\u202e`. Rich markup is not a concern here: callers build
`rich.text.Text` objects (never markup strings) from this text.
"""

from __future__ import annotations

import re

# C0 controls except TAB and newline, DEL, C1 controls, bidi embeddings/overrides/isolates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _visible(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """Control characters made visible; TAB and newline kept."""
    return _UNSAFE.sub(_visible, text)


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
