"""Regular expressions compiled when first used. A start of tlview compiled 222 of them as its
modules were imported (12 ms of a 0.26 s `--json` of a 100 MB trace), most for what the logs at
hand never need: the causes of problems the run does not have, a job's death in text it has
not. A lazy pattern answers like the compiled one: after its first use, its methods are the
compiled pattern's own (no lookup through it)."""

from __future__ import annotations

import re

_ANSWERS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split",
            "pattern", "flags", "groups", "groupindex", "scanner")


class LazyPattern:
    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str):
        if name not in _ANSWERS:
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for answer in _ANSWERS:  # from now on found on the instance: __getattr__ is not asked
            setattr(self, answer, getattr(compiled, answer))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


def lazy(pattern: str | bytes, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
