"""Live follow in the explorer: a folder that does not exist yet, records arriving, a toast."""

from __future__ import annotations

import re
import threading
import time

from conftest import CORPUS
from test_ui import _until
from tlview.ui.app import TlviewApp
from tlview.ui.frame_tree import FrameTree

TRACE = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()


def _status(app) -> str:
    return str(app.query_one("#status").render())


def _write_slowly(folder, data: bytes, stop: threading.Event) -> None:
    folder.mkdir()
    path = folder / "dedicated_log_torch_trace_live.log"
    records = re.split(rb"(?m)^(?=V\d{4} )", data)
    with open(path, "ab") as f:
        for i, record in enumerate(records):
            f.write(record)
            f.flush()
            if i % 40 == 0:
                time.sleep(0.01)
            if stop.is_set():
                return


async def test_follow_a_folder_that_does_not_exist_yet(tmp_path):
    folder = tmp_path / "tracedir"
    app = TlviewApp(str(folder), follow=True)
    stop = threading.Event()
    async with app.run_test(size=(150, 45)) as pilot:
        await _until(pilot, lambda: "waiting for" in _status(app))
        assert "tracedir" in _status(app)
        writer = threading.Thread(target=_write_slowly, args=(folder, TRACE, stop))
        writer.start()
        tree = app.query_one(FrameTree)
        await _until(pilot, lambda: tree.model is not None and len(tree.model.compile_entries()) == 12)
        writer.join()
        await _until(pilot, lambda: "LIVE" in _status(app) and "12 compile ids" in _status(app))
        statuses = {e.node.id: e.status for e in tree.model.compile_entries()}
        assert statuses["3/4"] == "error" and statuses["0/1"] == "ok"
        # auto-follow moved the cursor to the newest compile id as they came
        await _until(pilot, lambda: tree.cursor_node.data.node is not None
                     and tree.cursor_node.data.node.id == "3/4")
        await pilot.press("k")  # the user moves: following pauses
        await pilot.pause(0.2)
        assert not app.auto_follow and "paused" in _status(app)
        await pilot.press("f")
        await pilot.pause(0.2)
        assert app.auto_follow
    stop.set()


async def test_toasts_when_recompiles_arrive_after_catching_up(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    path = folder / "dedicated_log_torch_trace_x.log"
    records = re.split(rb"(?m)^(?=V\d{4} )", TRACE)
    first_recompile = next(i for i, r in enumerate(records) if b'"recompile_reasons"' in r)
    path.write_bytes(b"".join(records[:first_recompile]))
    app = TlviewApp(str(folder), follow=True)
    notes = []
    async with app.run_test(size=(150, 45)) as pilot:
        app.notify = lambda message, **kw: notes.append((message, kw.get("title")))
        tree = app.query_one(FrameTree)
        await _until(pilot, lambda: tree.model is not None and len(tree.model.compile_entries()) >= 1)
        await _until(pilot, lambda: app._caught_up)
        statuses = {e.node.id: e.status for e in tree.model.compile_entries() if e.kind == "compile"}
        assert statuses["0/0"] == "ok" and statuses["0/1"] == "compiling"  # under way: no metrics yet
        with open(path, "ab") as f:
            f.write(b"".join(records[first_recompile:]))
        await _until(pilot, lambda: len(tree.model.compile_entries()) == 12)
        await _until(pilot, lambda: any(title == "failed" for _, title in notes))
    recompiled = [m for m, t in notes if t == "recompiled"]
    assert recompiled and recompiled[0].startswith("[0/1] recompiled: 0/0: n == 2")
    assert any(m.startswith("[3/4] failed") for m, t in notes if t == "failed")
