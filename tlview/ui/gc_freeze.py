"""The explorer's index and tree, out of the cyclic GC's way once they have grown."""

from __future__ import annotations

import gc
import time

SETTLE_FROM = 1  # tree entries: from the first (unfrozen, the 3 MB model trace's index and the
# widgets made a full collection of 42 ms that landed on a search key; frozen, 8-10 ms)


def settle_memory(dropped: bool) -> None:
    """The index and the tree live as long as the app: out of the cyclic GC's way. Otherwise a
    full collection walks them every second or so, and a key or a live update that lands on one
    waits 80-100 ms more (measured at 10,000 compile ids; at 1,000, pane switches peaked at
    66-90 ms, 33-35 ms frozen). Done each time the tree doubled from SETTLE_FROM entries on: a
    few times in all. Freezing is O(1); a full collection (0.3-0.8 s at 10,000 ids or 20,000
    ranks, and it held every key) is done only when an index was `dropped` (built again): indexing
    leaves no cyclic garbage of its own (measured: 0 objects at 10,000 ids)."""
    if dropped:
        gc.unfreeze()  # the dropped index may go now
        gc.collect()
    gc.freeze()


class Settler:
    """When to settle: each time the tree doubled from SETTLE_FROM entries, once the read is whole
    (a followed job's index at 1,000 compile ids grew past its last doubling: a full collection of
    28-42 ms landed on one frame in six, and an append waited for it), and when an index was
    dropped (built again)."""

    def __init__(self) -> None:
        self._entries = 0  # tree entries when memory was last settled
        self._index = None  # the index then
        self._whole = None  # the index last settled once read whole

    def after_views(self, index, entries: int, whole: bool) -> None:
        dropped = self._index is not None and self._index is not index
        if dropped or entries >= max(SETTLE_FROM, 2 * self._entries + 1) or (whole and self._whole is not index):
            self._entries = entries
            settle_memory(dropped)
            self._index = index
            if whole:
                self._whole = index


HELD = 1_000_000  # gen1 collections before Python makes a full one: never, by its own choice
IDLE = 1.0  # seconds with no key and nothing new shown: a full collection then goes unnoticed
AT_LEAST_EVERY = 30.0  # seconds: a full collection even when busy (cyclic garbage stays bounded)


class FullCollections:
    """A full collection walks every object not frozen: 60,000 once the panes and their drawn
    lines are made (each of Textual's strips holds seven caches), 24-42 ms, at a moment of
    Python's choosing: one followed append in six waited for one (1,000 compile ids), and a
    key now and then. They are made here instead: after IDLE s with no key and nothing new
    shown, or every AT_LEAST_EVERY s at the latest. While the logs are read (`busy`) nothing is
    idle: a collection then took 130 ms at 20,000 rank files, and keys waited for it. `stop`
    gives Python its thresholds back."""

    def __init__(self, last_activity, busy=lambda: False) -> None:
        self._last_activity = last_activity  # () -> time.monotonic() of the last key or update
        self._busy = busy
        self._done_at = time.monotonic()
        self._thresholds = gc.get_threshold()
        gc.set_threshold(self._thresholds[0], self._thresholds[1], HELD)

    def tick(self) -> None:
        now = time.monotonic()
        pending = gc.get_count()[2] > 0  # gen1 collections since the last full one
        idle = not self._busy() and now - self._last_activity() >= IDLE
        if pending and (idle or now - self._done_at >= AT_LEAST_EVERY):
            gc.collect()
            self._done_at = time.monotonic()

    def stop(self) -> None:
        gc.set_threshold(*self._thresholds)
