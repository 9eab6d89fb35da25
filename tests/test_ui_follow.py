"""Live follow in the explorer: a folder that does not exist yet, records arriving, ranks that come
in any order listed in rank order, what is new counted as the status line counts it, a toast."""

from __future__ import annotations

import re
import threading
import time

from conftest import (
    CORPUS,
    SIZE,
    press,
    ready,
    tlview_command,
    until,
)

from tlview.ui.app import TlviewApp
from tlview.ui.status_line import StatusLine

TRACE = next((CORPUS / "recompiles" / "trace").glob("*.log")).read_bytes()
DISTRIBUTED = CORPUS / "distributed" / "trace"


def _status(app) -> str:
    from tlview.ui.status_line import StatusLine

    return app.query_one(StatusLine).text


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
        await until(pilot, lambda: "waiting for" in _status(app))
        assert "tracedir" in _status(app)
        writer = threading.Thread(target=_write_slowly, args=(folder, TRACE, stop))
        writer.start()
        await until(pilot, lambda: len(app.model.compile_entries()) == 12)
        writer.join()
        await until(pilot, lambda: "LIVE" in _status(app) and "12 compile ids" in _status(app))
        # [3/4] shows with its first record; its failure comes with the file's last one
        await until(pilot, lambda: any(e.node.id == "3/4" and e.status.word != "compiling"
                                       for e in app.model.compile_entries()))
        statuses = {e.node.id: e.status.word for e in app.model.compile_entries()}
        assert statuses["3/4"] == "error" and statuses["0/1"] == "ok"
        # auto-follow moved the cursor to the newest compile id as they came
        await until(pilot, lambda: app.tree.entry is not None and app.tree.entry.node is not None
                    and app.tree.entry.node.id == "3/4")
        await pilot.press("k")  # the user moves: following pauses
        await until(pilot, lambda: not app.auto_follow and "paused" in _status(app))
        await pilot.press("f")
        await until(pilot, lambda: app.auto_follow and "LIVE" in _status(app))
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
        await until(pilot, lambda: len(app.model.compile_entries()) >= 1)
        await until(pilot, lambda: app.caught_up)
        statuses = {e.node.id: e.status.word for e in app.model.compile_entries() if e.kind == "compile"}
        assert statuses["0/0"] == "ok" and statuses["0/1"] == "compiling"  # under way: no metrics yet
        with open(path, "ab") as f:  # noqa: ASYNC230 - a few KB the app follows, written at once
            f.write(b"".join(records[first_recompile:]))
        await until(pilot, lambda: len(app.model.compile_entries()) == 12)
        await until(pilot, lambda: any("failed" in title for _, title in notes))
    recompiled = [m for m, t in notes if t == "recompiled"]
    assert recompiled and recompiled[0].startswith("[0/1] 0/0: n == 2")
    # a compile that failed and recompiled is one toast that says both (in its title)
    assert [(m, t) for m, t in notes if "failed" in (t or "")] == [
        next((m, t) for m, t in notes if m.startswith("[3/4] 3/3: tensor 'x' size mismatch"))]
    assert ("failed + recompiled") in [t for _, t in notes]
    for message, title in notes:  # what happened is said once: in the title
        assert not title or title.split(" + ")[0] not in message, (title, message)


async def test_an_append_shows_the_new_compile_id_once_and_never_the_old_one_again(tmp_path):
    """Following (#23, an append on screen in <= 100 ms at 1,000 ids): the cursor goes to the new
    compile id and the Summary is filled with it; the one it left is not filled again first
    (that cost 20 ms of each append)."""
    folder = tmp_path / "t"
    folder.mkdir()
    path = folder / "dedicated_log_torch_trace_x.log"
    records = re.split(rb"(?m)^(?=V\d{4} )", TRACE)
    heads = [r.split(b"\n", 1)[0] for r in records]
    start = next(i for i, h in enumerate(heads) if b'"frame_id": 0, "frame_compile_id": 1,' in h)
    end = next(i for i in range(start, len(heads))
               if b'"frame_id": ' in heads[i] and b'"frame_id": 0, "frame_compile_id": 1,' not in heads[i])
    path.write_bytes(b"".join(records[:start]))  # [0/0] whole
    app = TlviewApp(str(folder), follow=True)
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.caught_up and app.tree.entry is not None
                    and app.tree.entry.node.id == "0/0" and app.detail.selection.entry is app.tree.entry)
        summary = app.detail.pane("summary")
        shown, real_show = [], summary.show
        summary.show = lambda selection: (shown.append(selection.entry.node.id), real_show(selection))[1]
        with open(path, "ab") as f:  # noqa: ASYNC230 - a few KB the app follows, written at once
            f.write(b"".join(records[start:end]))  # [0/1]'s records
        await until(pilot, lambda: app.tree.entry.node.id == "0/1" and "0/1" in shown)
        assert set(shown) == {"0/1"}, shown


async def test_a_highlight_the_cursor_left_does_not_show_its_entry_again():
    """Under load a highlight of the entry the cursor left came after the cursor's new one (the
    tree laid out anew, then the cursor moved to an appended compile id): the panes showed 0/1,
    0/0, 0/1. A highlight whose node is no longer under the cursor is dropped."""
    from textual.widgets import Tree

    app = TlviewApp(str(CORPUS / "recompiles"))
    async with app.run_test(size=(150, 45)) as pilot:
        await ready(app, pilot)
        await press(pilot, "j")
        here = app.tree.cursor_node
        left = next(node for node in app.tree._by_key.values() if node is not here and node.data.compile is not None)
        assert app.detail.selection.entry is here.data
        app.tree.post_message(Tree.NodeHighlighted(left))
        await pilot.pause()
        await pilot.pause()
        assert app.tree.cursor_node is here and app.detail.selection.entry is here.data


def _append(path, data: bytes, stop: threading.Event, pieces: int = 40) -> None:
    records = re.split(rb"(?m)^(?=V\d{4} )", data)
    step = max(1, len(records) // pieces)
    with open(path, "ab") as f:
        for i in range(0, len(records), step):
            f.write(b"".join(records[i:i + step]))
            f.flush()
            if stop.wait(0.01):
                return


async def test_ranks_come_in_rank_order_while_following(tmp_path):
    """Rank 1's file appears first: the tree still lists rank 0 above rank 1."""
    rank0 = next(DISTRIBUTED.glob("*rank_0*")).read_bytes()
    rank1 = next(DISTRIBUTED.glob("*rank_1*")).read_bytes()
    app = TlviewApp(str(tmp_path), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        (tmp_path / "dedicated_log_torch_trace_rank_1_a.log").write_bytes(rank1)
        await until(pilot, lambda: len(app.model.compile_entries()) == 11)
        (tmp_path / "dedicated_log_torch_trace_rank_0_b.log").write_bytes(rank0)
        await until(pilot, lambda: len(app.model.compile_entries()) == 19)
        assert [root.title for root in app.model.roots] == ["rank 0", "rank 1"]
        assert [n.data.title for n in app.tree.root.children] == ["rank 0", "rank 1"]


async def test_new_compile_ids_are_counted_as_the_status_line_counts_them(tmp_path):
    path = tmp_path / "dedicated_log_torch_trace_x.log"
    records = re.split(rb"(?m)^(?=V\d{4} )", TRACE)
    half = len(records) // 2
    path.write_bytes(b"".join(records[:half]))
    app = TlviewApp(str(tmp_path), follow=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.caught_up and app.model.compile_entries())
        before = len(app.model.compile_entries())
        await pilot.press("k")  # reading: new compile ids are counted, not followed
        await until(pilot, lambda: not app.auto_follow)
        with open(path, "ab") as f:  # noqa: ASYNC230 - a few KB the app follows, written at once
            f.write(b"".join(records[half:]))
        await until(pilot, lambda: len(app.model.compile_entries()) == 12)
        await until(pilot, lambda: app.new_unseen == 12 - before)
        # the count first, the tree note and status line with the views (a slice later, when the
        # slice took long: a loaded machine)
        await until(pilot, lambda: f"+{12 - before} new" in str(app.query_one("#tree-note").render()),
                    what="the tree note's count")
        await until(pilot, lambda: "12 compile ids" in app.query_one(StatusLine).text, what="the status line")


def test_toasts_leave_the_live_sign_readable(terminal, tmp_path):
    folder = tmp_path / "trace"
    folder.mkdir()
    path = folder / "dedicated_log_torch_trace_x.log"
    records = re.split(rb"(?m)^(?=V\d{4} )", TRACE)
    first = next(i for i, r in enumerate(records) if b'"recompile_reasons"' in r)
    path.write_bytes(b"".join(records[:first]))
    term = terminal(f"{tlview_command()} --follow {folder}")
    term.wait_for("● LIVE")
    with open(path, "ab") as f:
        f.write(b"".join(records[first:]))
    screen = term.wait_for("recompiled")  # a toast
    assert "● LIVE" in screen
    term.keys("q")
    term.wait_for("EXITED:0")
