"""Pauses of Python's cyclic GC, counted: tlview's start and its indexing each pause it, and it
runs again only when neither does (one pause ending while the other went on would turn it back
on in the middle of indexing, or leave it off for good).

A module of its own, with no import of tlview's: the explorer pauses the GC before anything else
is imported."""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0
_was_enabled = True  # the GC's state when the first pause began


def pause() -> None:
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1


def resume(freeze: bool = False) -> None:
    """One pause ends. `freeze`: what was made meanwhile lives as long as the process; it is moved
    out of the GC's reach, or its first collections would walk all of it."""
    global _pauses
    with _lock:
        if _pauses == 0:
            return  # (a resume with no pause: nothing to end)
        _pauses -= 1
        if freeze:
            gc.freeze()
        if _pauses == 0 and _was_enabled:
            gc.enable()


_starting = False  # the pause of tlview's start is on (`start`)


def start() -> None:
    """tlview starts: no GC until `started`: the explorer's first screen drawn, or the end of a
    headless run. The imports and the explorer's making ran about 210 collections, 65-89 ms of
    the 0.5-0.7 s to its first screen, and freed nothing; a headless run ends once its output is
    written, its index living to the end, and after indexing its full collections walked all of
    it (1.45 s of 5.7 for --json on 20,000 rank files)."""
    global _starting
    with _lock:
        if _starting:
            return
        _starting = True
    pause()


def started(freeze: bool = False) -> None:
    """The pause `start` began ends, once (the explorer's first screen, then the end of main)."""
    global _starting
    with _lock:
        if not _starting:
            return
        _starting = False
    resume(freeze)


@contextmanager
def paused(freeze: bool = False):
    """Indexing allocates many small containers and frees none: the cyclic GC would scan the
    growing index over and over (measured: 20% of the time of a 1 GB index).

    With `freeze` (an index that lives as long as its process: the explorer's), what was made
    is moved out of the GC's reach before it runs again. Otherwise its first collections walk
    everything made meanwhile, each holding every thread: after 20,000 rank files, 239, 199 and
    338 ms, and each key pressed then waited for one."""
    pause()
    try:
        yield
    finally:
        resume(freeze)
