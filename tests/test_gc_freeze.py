"""The cyclic GC kept off what a person waits for (#23): none while tlview starts (nor in a
headless run), the index and tree frozen once read whole, and full collections made when nothing
happens, not at a moment of Python's choosing."""

from __future__ import annotations

import gc

from conftest import CORPUS, ready

import tlview.ui.gc_freeze as settle
from tlview.cli import main
from tlview.index import gc_pauses
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


def _collections_of_any_generation() -> tuple[list, object]:
    made = []

    def seen(phase, info):
        if phase == "stop":
            made.append(info["generation"])
    gc.callbacks.append(seen)
    return made, seen


def test_pauses_of_the_start_and_of_indexing_nest_and_the_start_ends_once():
    assert gc.isenabled()
    gc_pauses.start()
    gc_pauses.start()  # (one start at a time)
    with gc_pauses.paused():  # indexing, which goes on after the first screen
        gc_pauses.started()  # the first screen: indexing still pauses it
        assert not gc.isenabled()
        gc_pauses.started()  # once: it does not end indexing's pause
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_headless_run_makes_no_collection_and_gives_the_gc_back(capsys):
    """tlview --json: no collection from start to end (after indexing, full collections walked
    the whole index: 1.45 s of --json on 20,000 rank files), and the caller's GC given back."""
    made, seen = _collections_of_any_generation()
    try:
        assert main(["--json", str(CORPUS / "recompiles" / "trace")]) == 0
    finally:
        gc.callbacks.remove(seen)
    assert '"compiles"' in capsys.readouterr().out
    assert made == []
    assert gc.isenabled()


async def test_the_explorer_gives_the_gc_back_once_its_first_screen_is_drawn():
    gc_pauses.start()  # as cli.main does
    try:
        app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
        async with app.run_test() as pilot:
            await ready(app, pilot)
            assert gc.isenabled()
    finally:
        gc_pauses.started()
