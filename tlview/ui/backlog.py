"""The compiles the index changed that the explorer has not shown yet: each once, the oldest first.

The app shows them a slice at a time (app.refresh_views). Sorting the whole backlog again at each
report, and cutting a slice off the front of a list, cost the main thread O(backlog) a slice: at
10,000 compile ids the sort's key alone was 6% of its time while the tree filled in.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable
from operator import itemgetter

from tlview.domain.compile_node import Compile

FEW = 16  # compiles arriving out of order that are placed one by one (more: one sort)


def arrival(compile_: Compile) -> int:
    return compile_.head.seq


first = itemgetter(0)


class Backlog:
    def __init__(self, compiles: Iterable[Compile] = ()) -> None:
        self._queue: list[Compile] = []  # oldest first, from self._next on
        self._next = 0
        self._queued: set[Compile] = set()
        self.add(compiles)

    def __len__(self) -> int:
        return len(self._queue) - self._next

    def __bool__(self) -> bool:
        return self._next < len(self._queue)

    def add(self, compiles: Iterable[Compile]) -> None:
        """Queue what changed, each compile once, in arrival order. New compiles come after all
        that is queued (appended); one that changed again after it was shown is placed."""
        new = sorted(((arrival(c), c) for c in compiles if c not in self._queued), key=first)
        if not new:
            return
        self._queued.update(c for _, c in new)
        late = bisect_left(new, arrival(self._queue[-1]), key=first) if self else 0
        if late > FEW:
            rest = self._queue[self._next:]
            self._queue, self._next = sorted([*rest, *(c for _, c in new)], key=arrival), 0
            return
        self._queue += [c for _, c in new[late:]]
        for _, compile_ in new[:late]:
            insort(self._queue, compile_, lo=self._next, key=arrival)

    def take(self, count: int) -> list[Compile]:
        """The `count` oldest, out of the backlog."""
        part = self._queue[self._next:self._next + count]
        self._next += len(part)
        self._queued.difference_update(part)
        if self._next > 4096 and self._next * 2 > len(self._queue):  # drop what was taken
            del self._queue[:self._next]
            self._next = 0
        return part
