"""Loops over a run's compiles that a thread runs for a view (the Run pane): `stepping` calls
`between()` every STEP items, where that thread may stop (the view was left) or step back (a key
comes first). At 10,000 compile ids each such loop held the interpreter for 60-200 ms, and a key
pressed then (the pane left for another) waited for it."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
STEP = 256


def stepping(items: Iterable[T], between: Callable[[], None] | None) -> Iterator[T]:
    if between is None:
        yield from items
        return
    for number, item in enumerate(items):
        if number % STEP == 0:
            between()
        yield item
