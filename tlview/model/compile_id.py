"""Compile ids as torch writes them: `0/1`, `0/0_1`, `!0/1/0`, `!0`.

A compile id is (compiled_autograd_id, frame_id, frame_compile_id, attempt). Any part may be
missing; `attempt` is taken as 0 when the frame compile id is known, as tlparse does.
"""

from __future__ import annotations

import re
from typing import NamedTuple


class CompileId(NamedTuple):
    autograd: int | None
    frame: int | None
    frame_compile: int | None
    attempt: int

    @classmethod
    def from_fields(cls, autograd, frame, frame_compile, attempt) -> "CompileId | None":
        """Build from a trace record's context fields; None when the record has no compile id."""
        autograd = _as_int(autograd)
        frame = _as_int(frame)
        frame_compile = _as_int(frame_compile)
        if autograd is None and frame is None and frame_compile is None:
            return None
        return cls(autograd, frame, frame_compile, _as_int(attempt) or 0)

    @classmethod
    def parse(cls, text: str) -> "CompileId | None":
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
    def compile_key(self) -> "CompileId":
        """The compile this attempt belongs to (attempts of one compile share it)."""
        return self._replace(attempt=0)

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


def _as_int(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def _dash(value: int | None) -> str:
    return "-" if value is None else str(value)
