"""Compile ids as torch writes them: `0/1`, `0/0_1`, `!0/1/0`, `!0`.

A compile id is (compiled_autograd_id, frame_id, frame_compile_id, attempt). Any part may be
missing; `attempt` is taken as 0 when the frame compile id is known, as tlparse does.

Each part is a counter: a whole number from 0 to 2**64 - 1 (or null, for compiled_autograd_id,
which older torch writes). A record whose part is anything else (1.5, a number past 64 bits,
true, a list, text, null) is an odd compile id, a problem of its record (`odd_fields`), placed
where it is least surprising: an odd attempt reads as attempt 0 (the record stays with its
compile); an odd frame id, frame compile id or compiled autograd id leaves the record with no
compile id (the records of no compile id of its rank), never guessed into a compile whose
verdict it could change. An odd rank reads as no rank: the record stays with its file's rank
or process (one file is one process).
"""

from __future__ import annotations

import json
import re
from typing import NamedTuple


class CompileId(NamedTuple):
    autograd: int | None
    frame: int | None
    frame_compile: int | None
    attempt: int

    @classmethod
    def from_fields(cls, autograd: object, frame: object, frame_compile: object,
                    attempt: object) -> CompileId | None:
        """Build from a trace record's context fields (`...`: not there); None when the record has
        no compile id, or an odd one (the module's docstring)."""
        if _odd(autograd, null_ok=True) or _odd(frame) or _odd(frame_compile):
            return None
        ids = (_as_id(autograd), _as_id(frame), _as_id(frame_compile))
        if ids == (None, None, None):
            return None
        return cls(*ids, _as_id(attempt) or 0)

    @classmethod
    def parse(cls, text: str) -> CompileId | None:
        """Parse torch's text (`0/1_2`, `!3/0/1`, `!3`) or tlparse's (`[!3/-/-]`)."""
        m = _CID_RE.match(text.strip().strip("[]"))
        if m is None:
            return None
        ca, frame, fcid, attempt = m.group("ca", "frame", "fcid", "attempt")
        return cls(
            int(ca) if ca is not None else None,
            None if frame in (None, "-") else int(frame),
            None if fcid in (None, "-") else int(fcid),
            int(attempt) if attempt else 0,
        )

    @property
    def compile_key(self) -> CompileId:
        """The compile this attempt belongs to (attempts of one compile share it)."""
        # (not _replace: asked 22,000 times indexing 10,000 compile ids, 0.13 s of it profiled)
        return self if self.attempt == 0 else CompileId(self.autograd, self.frame, self.frame_compile, 0)

    @property
    def frame_key(self) -> tuple[int | None, int | None]:
        return (self.autograd, self.frame)

    @property
    def is_recompile(self) -> bool:
        return (self.frame_compile or 0) > 0

    def __str__(self) -> str:
        # tlparse's spelling without brackets: `-` for a missing part, attempt only when non-zero.
        text = f"{_dash(self.frame)}/{_dash(self.frame_compile)}"
        if self.autograd is not None:
            text = f"!{self.autograd}/{text}"
        if self.attempt:
            text += f"_{self.attempt}"
        return text


# Records of no compile id (export's, the torch version): tlparse writes them `-/-`.
OUTSIDE = CompileId(None, None, None, 0)

_CID_RE = re.compile(
    r"^(?:!(?P<ca>\d+)(?:/|$))?(?:(?P<frame>\d+|-)/(?P<fcid>\d+|-))?(?:_(?P<attempt>\d+))?$"
)
# A compile id as torch writes it inside messages (`0/1`, `0/0_1`, `!0/1/0`).
CID_IN_TEXT = r"!?\d+(?:/\d+){1,2}(?:_\d+)?"
# The compile-id prefix of a recompile reason: "0/0: tensor 'x' size mismatch ...".
REASON_CID_RE = re.compile(rf"^\s*(?P<cid>{CID_IN_TEXT}):\s*")


ID_END = 1 << 64  # torch's ids are counters; orjson reads a number past 64 bits as a float
FIELDS = ("compiled_autograd_id", "frame_id", "frame_compile_id", "attempt")


def _as_id(value: object) -> int | None:
    return value if type(value) is int and 0 <= value < ID_END else None


def _odd(value: object, null_ok: bool = False) -> bool:
    """There (`...`: not there), and not an id."""
    return value is not ... and _as_id(value) is None and not (value is None and null_ok)


def odd_fields(rank: object, autograd: object, frame: object, frame_compile: object,
               attempt: object) -> list[tuple[str, str]]:
    """(problem kind, message) for each context field of a record that is there but is not an id
    (`...`: not there), naming the field, its value and where the record went."""
    odd = []
    for name, value in zip(FIELDS, (autograd, frame, frame_compile, attempt)):
        if not _odd(value, null_ok=name == "compiled_autograd_id"):  # (older torch writes it null)
            continue
        where = ("read as attempt 0" if name == "attempt"
                 else "the record is kept with the records of no compile id")
        odd.append(("odd compile id", f"{name} is {_value(value)}, not a compile id number: {where}"))
    if _odd(rank):
        odd.append(("odd rank", (f"rank is {_value(rank)}, not a rank number: the record is kept "
                                 "with its file's rank or process")))
    return odd


def _value(value: object) -> str:
    """A value as written: 18446744073709551616 (orjson: a float), 1.5, null, true, [1]."""
    if type(value) is float and value.is_integer() and abs(value) >= 1 << 63:
        return f"{int(value)} (past 64 bits)"
    if type(value) is int:
        return f"{value} (negative)" if value < 0 else f"{value} (past 64 bits)"
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)
