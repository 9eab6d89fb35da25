"""Regular expressions compiled when first used. A start of tlview compiled 222 of them as its
modules were imported (12 ms of a 0.26 s `--json` of a 100 MB trace), most for what the logs at
hand never need: the causes of problems the run does not have, a job's death in text it has
not. A lazy pattern answers like the compiled one: after its first use, its methods are the
compiled pattern's own (no lookup through it)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

_ANSWERS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split",
            "pattern", "flags", "groups", "groupindex", "scanner")


class LazyPattern:
    # What __getattr__ answers, typed as re.Pattern[str]'s own. Annotations only, no class
    # attributes: the first use still reaches __getattr__, which sets them on the instance.
    match: Callable[..., re.Match[str] | None]
    search: Callable[..., re.Match[str] | None]
    fullmatch: Callable[..., re.Match[str] | None]
    finditer: Callable[..., Iterator[re.Match[str]]]
    findall: Callable[..., list[Any]]
    sub: Callable[..., str]
    subn: Callable[..., tuple[str, int]]
    split: Callable[..., list[str | Any]]
    pattern: str
    flags: int
    groups: int
    groupindex: Mapping[str, int]
    scanner: Callable[..., Any]

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name not in _ANSWERS:
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for answer in _ANSWERS:  # from now on found on the instance: __getattr__ is not asked
            setattr(self, answer, getattr(compiled, answer))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


def lazy(pattern: str, flags: int = 0) -> LazyPattern:
    return LazyPattern(pattern, flags)
