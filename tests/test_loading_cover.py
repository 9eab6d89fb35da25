"""The loading indicator (ui/loading_cover.py) over every pane whose content a worker makes: up
while its loader is held (a loader patched to wait on an event, never a sleep), gone once the
content arrives, and gone when the loader fails (the error shown instead)."""

from __future__ import annotations

import threading

import pytest
from conftest import CORPUS, until

from tlview.ui import dynamic_pane, graphs_pane, run_pane
from tlview.ui.app import TlviewApp
from tlview.ui.diff_pane import DiffPane
from tlview.ui.guards_pane import GuardsPane
from tlview.ui.log_pane import LogPane

RUN = CORPUS / "recompiles" / "trace"

# (tab, the view covered, where its loader is patched: (owner, name))
LOADERS = {
    "graphs": ("2", "#graph-view", (graphs_pane, "first_block")),
    "guards": ("3", "GuardsPane PayloadView", (GuardsPane, "text_for")),
    "dynamic": ("6", "DynamicPane", (dynamic_pane, "group_dynamic")),
    "log": ("7", "LogPane PayloadView", (LogPane, "text_for")),
    "diff": ("8", "DiffPane PayloadView", (DiffPane, "text_for")),
    "run": ("9", "#run-body", (run_pane, "run_view")),
}


def held(monkeypatch, owner, name: str, gate: threading.Event, fail: bool = False) -> list[str]:
    """Patch the loader `owner.name` to wait for `gate`, then load (or fail); returns the list
    of the loads that ended, by the loading threads."""
    original = getattr(owner, name)
    ended: list[str] = []

    def waiting(*args, **kwargs):
        assert gate.wait(30), "the gate was never opened"
        ended.append(threading.current_thread().name)
        if fail:
            raise OSError("the disk went away")
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, waiting)
    return ended


async def start_held(app, pilot, tab: str, selector: str):
    await until(pilot, lambda: app.facts.finished and app.detail.all_mounted, what="the panes mounted")
    await pilot.press(tab)
    view = app.query_one(selector)
    await until(pilot, lambda: view.loading, what="the indicator while the load is held")
    return view


@pytest.mark.asyncio
@pytest.mark.parametrize("pane", list(LOADERS))
async def test_the_indicator_is_up_while_the_pane_loads_and_gone_once_it_loaded(monkeypatch, pane):
    tab, selector, (owner, name) = LOADERS[pane]
    gate = threading.Event()
    ended = held(monkeypatch, owner, name, gate)
    app = TlviewApp(str(RUN))
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            view = await start_held(app, pilot, tab, selector)
            assert not ended  # (up while nothing came back)
        finally:
            gate.set()
        await until(pilot, lambda: ended and not view.loading and view._cover_widget is None,
                    what="the indicator gone once the content came")
        await app.workers.wait_for_complete()
        assert not view.loading


@pytest.mark.asyncio
@pytest.mark.parametrize("pane", ["guards", "run"])
async def test_a_load_that_fails_shows_the_error_not_a_spinner(monkeypatch, pane):
    tab, selector, (owner, name) = LOADERS[pane]
    gate = threading.Event()
    held(monkeypatch, owner, name, gate, fail=True)
    app = TlviewApp(str(RUN))
    async with app.run_test(size=(120, 40)) as pilot:
        try:
            view = await start_held(app, pilot, tab, selector)
        finally:
            gate.set()
        await until(pilot, lambda: "the disk went away" in app.facts.pane_failure, what="the error said")
        await until(pilot, lambda: not view.loading and view._cover_widget is None, what="no spinner")
        if pane == "guards":
            assert "could not load this pane: OSError: the disk went away" in view.text


@pytest.mark.asyncio
async def test_a_quick_load_shows_no_indicator():
    """Most loads take milliseconds: moving the cursor does not flash a spinner over the panes."""
    app = TlviewApp(str(RUN))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.facts.finished and app.detail.all_mounted, what="the panes mounted")
        await app.workers.wait_for_complete()
        await pilot.press("3")
        view = app.query_one("GuardsPane PayloadView")
        covered: list[bool] = []

        def seen(loading: bool) -> None:
            covered.append(loading)

        view.watch(view, "loading", seen, init=False)
        for _ in range(3):
            await pilot.press("j")
            await app.workers.wait_for_complete()
            await pilot.pause()
        assert True not in covered
