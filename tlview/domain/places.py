"""Places in the user's code as torch names them: `file.py:12`, and the function Dynamo makes of
the code after a graph break (`torch_dynamo_resume_in_step_at_25`: `step`, resumed at line 25).
One regex per syntax, here."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<function>.+)_at_(?P<line>\d+)$")
_PLACE = re.compile(r"^(?P<file>.*?):(?P<line>\d+)$")


def short_path(location: str) -> str:
    """`/home/user/job/model.py:42` -> `model.py:42` (the full path is in --json)."""
    return location.rsplit("/", 1)[-1]


class Resumed(NamedTuple):
    function: str  # the user's function the code after the break belongs to
    line: int  # the line it resumes at


@lru_cache(maxsize=4096)  # (asked of every compile's function at each verdict)
def resumed(function: str | None) -> Resumed | None:
    """`torch_dynamo_resume_in_step_at_25` -> Resumed("step", 25); None for a user's function.
    Nested resumes (`..._in_torch_dynamo_resume_in_step_at_25_at_27`) name the outer function."""
    m = _RESUME.match(function or "")
    if m is None:
        return None
    inner = resumed(m.group("function"))
    return Resumed(inner.function if inner else m.group("function"), int(m.group("line")))


def user_function(function: str | None) -> str | None:
    """The user's function a compiled frame belongs to (a resume function's parent)."""
    found = resumed(function)
    return found.function if found else function


def split_place(place: str | None) -> tuple[str, int | None]:
    """`/a/b.py:12` -> ("/a/b.py", 12); a place with no line -> (place, None)."""
    m = _PLACE.match(place or "")
    return (m.group("file"), int(m.group("line"))) if m else (place or "", None)
