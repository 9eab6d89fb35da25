"""The cyclic GC kept off what a person waits for (#23): the index and tree frozen once read
whole, and full collections made when nothing happens, not at a moment of Python's choosing."""

from __future__ import annotations

import gc

import tlview.ui.settle as settle
from conftest import CORPUS, ready
from tlview.ui.app import TlviewApp


def _full_collections() -> tuple[list, object]:
    made = []

    def seen(phase, info):
        if phase == "stop" and info["generation"] == 2:
            made.append(1)
    gc.callbacks.append(seen)
    return made, seen


def test_full_collections_wait_for_a_pause_and_come_at_least_every_so_often():
    thresholds = gc.get_threshold()
    now, busy = [0.0], [True]
    collections = settle.FullCollections(lambda: now[0], busy=lambda: busy[0])
    made, seen = _full_collections()
    try:
        assert gc.get_threshold()[2] == settle.HELD  # Python makes none by itself
        gc.collect(1)  # something pending: a gen1 collection since the last full one
        now[0] = settle.time.monotonic()  # a key just now
        collections.tick()
        assert not made
        now[0] -= settle.IDLE  # nothing for IDLE seconds, but the logs are still read
        collections.tick()
        assert not made
        busy[0] = False  # read: now it is idle
        collections.tick()
        assert made == [1]
        gc.collect(1)
        now[0] = settle.time.monotonic()  # busy, but the last full one is long past
        collections._done_at -= settle.AT_LEAST_EVERY
        collections.tick()
        assert made == [1, 1]
    finally:
        gc.callbacks.remove(seen)
        collections.stop()
    assert gc.get_threshold() == thresholds


def test_memory_is_settled_once_the_read_is_whole_and_when_an_index_is_dropped(monkeypatch):
    calls = []
    monkeypatch.setattr(settle, "settle_memory", lambda dropped: calls.append(dropped))
    settler, index, other = settle.Settler(), object(), object()
    settler.after_views(index, 1, whole=False)  # the first entry
    settler.after_views(index, 1, whole=False)  # no growth: nothing
    assert calls == [False]
    settler.after_views(index, 1, whole=True)  # read whole: the rest of the index
    settler.after_views(index, 1, whole=True)  # once
    assert calls == [False, False]
    settler.after_views(other, 1, whole=False)  # built again: the old one may go
    assert calls == [False, False, True]


async def test_the_explorer_holds_full_collections_and_gives_the_thresholds_back():
    thresholds = gc.get_threshold()
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test() as pilot:
        await ready(app, pilot)
        assert gc.get_threshold()[2] == settle.HELD
    assert gc.get_threshold() == thresholds
