"""The explorer's index and tree, out of the cyclic GC's way once they have grown."""

from __future__ import annotations

import gc

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
