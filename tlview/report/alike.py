"""What `--report` and markdown print once for many compile ids that say the same thing: a frame
that recompiled 100,000 times for the same kind of guard is one row, with how many compile ids it
stands for and the first and last of them, not 100,000 rows a person scrolls past. `--json` keeps
every compile id.

Alike is decided on the summary's plain data, before anything is made visible: the numbers in a
reason (`n == 7`, `expected 8, actual 10`) differ from one compile id to the next and are not part
of what is alike; the frame, the status, the kinds and causes of the problems and their places are.
One pass, one dict lookup per item: linear in the compile ids.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, TypeVar

from tlview.report.json_types import CompileEntry, CompileProblemEntry, DiagnosisEntry, OutsideEntry
from tlview.textsafe import visible_data

T = TypeVar("T")

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@lru_cache(maxsize=4096)  # alike compile ids say the same fix and why: 36,000 texts at 10,000 ids
def masked(text: str | None) -> str:
    """A reason without its numbers: `n == #`, `changed size at dim #: # -> #`."""
    return _NUMBER.sub("#", text) if text else ""


@dataclass(slots=True)
class Alike(Generic[T]):
    """Items that say the same thing: the first as listed (it stands for them all), the last,
    and how many."""

    first: T
    last: T
    count: int = 1


class Folding(Generic[T]):
    """Items folded as they come (several foldings fed in one reading of the compile entries,
    which are made as they are read): `found`, the Alikes in the order of their first items.
    Only the first and last of each are kept."""

    def __init__(self, key: Callable[[T], Hashable]) -> None:
        self.key = key
        self.found: list[Alike[T]] = []
        self._by_key: dict[Hashable, Alike[T]] = {}

    def add(self, item: T) -> None:
        k = self.key(item)
        found = self._by_key.get(k)
        if found is None:
            self._by_key[k] = found = Alike(item, item)
            self.found.append(found)
        else:
            found.last = item
            found.count += 1


def fold_alike(items: Iterable[T], key: Callable[[T], Hashable]) -> list[Alike[T]]:
    """Items with the same key as one Alike, at the place of the first of them."""
    folding = Folding(key)
    for item in items:
        folding.add(item)
    return folding.found


def _whose(entry: Mapping[str, Any]) -> tuple:
    return entry.get("rank"), entry.get("process"), entry.get("ranks_said")


def row_key(entry: CompileEntry) -> tuple:
    """A compile id's row in the report's table: its frame and status, and what its problems are
    (kind, cause, place, the reason without its numbers), its breaks' places and reasons."""
    return (*_whose(entry), entry["function"], entry["location"], entry["status"],
            tuple((p["kind"], p["cause"], p["logged"], p["location"], p["exception"], masked(p["message"]))
                  for p in entry["verdict"]),
            tuple((gb["location"], gb["reason"], gb["cause"]) for gb in entry["graph_breaks"]))


# a problem of the verdict, with the compile id's entry (or the records outside compile ids) it is of
ProblemOf = tuple[CompileEntry | OutsideEntry, CompileProblemEntry]


def diagnosis_key(pair: tuple[CompileEntry, DiagnosisEntry]) -> tuple:
    """A "why, and what to do" line: the same cause at the same place, said the same way but for
    its numbers, with the same fix, in one rank (each line names its compile id with its rank or
    process: processes of no rank that say the same are one line, as they were)."""
    entry, d = pair
    return (entry.get("rank"), d["kind"], d["cause"], d.get("place"), masked(d["why"]), masked(d["fix"]))


def problem_key(pair: ProblemOf) -> tuple:
    """A problem of the verdict as markdown lists it: the same kind and cause in the same function
    at the same place, said the same way but for its numbers, with the same fix."""
    entry, p = pair
    return (*_whose(entry), "id" in entry, p["kind"], p["cause"], p["function"], p["location"], p["exception"],
            masked(p["why"]), masked(p["fix"]), masked(p["fail_reason"] or p["message"]))


def failure_key(pair: ProblemOf) -> tuple:
    """A failure: the same exception, the same reason but for its numbers."""
    entry, p = pair
    return (*_whose(entry), "id" in entry, p["exception"], p["location"],
            masked(p["fail_reason"] or p["message"] or p["why"]))


class Shown:
    """A compile id's entry made visible (textsafe) when it is printed, once: not every entry of
    the summary (of 100,000 alike, two are printed)."""

    def __init__(self) -> None:
        self._made: dict[int, Any] = {}

    def __call__(self, entry: T) -> T:
        made = self._made.get(id(entry))
        if made is None:
            made = self._made[id(entry)] = visible_data(entry)
        return made


def some_ids(ids: list[str], shown: int = 10) -> str:
    """Compile ids as a line names them: all of a few; of many, the first and last and how many
    are left out between (a break in each of 100,000 compile ids is not a line of 100,000 ids)."""
    if len(ids) <= shown:
        return ", ".join(ids)
    half = shown // 2
    return ", ".join([*ids[:half], f"… {len(ids) - 2 * half:,} more …", *ids[-half:]])
