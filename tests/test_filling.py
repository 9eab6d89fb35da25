"""The explorer fills in while it indexes (issue #26, item 4): what the index gained is shown in
slices with keys served between them, files of many ranks are read in rank order and tell their
progress as they go, verdicts are judged once per change of their own compile, and the UI never
waits for the indexing thread's lock to take the changes."""

from __future__ import annotations

import asyncio
import shutil
import threading

import pytest
from conftest import CORPUS, GENERATED, json_for, press, ready, until

RANKS4 = GENERATED / "multi_rank4" / "trace"


def _ranks_read_backwards(folder):
    """The four ranks of a real 4-rank run, named so that they are read rank 3 first: each rank
    that comes in is put before the ranks already shown."""
    for place, log in enumerate(sorted(RANKS4.glob("*.log"), reverse=True)):
        shutil.copy(log, folder / f"p{place}_{log.name}")
    return folder


async def shown_whole(app, pilot) -> None:
    """The logs read, the backlog shown, the panes' loaders done."""
    await until(pilot, lambda: app.facts.finished and app.facts.shown_all, what="the backlog shown")
    await ready(app, pilot)


def _widget_keys(tree) -> list:
    keys, stack = [], list(reversed(tree.root.children))
    while stack:
        node = stack.pop()
        keys.append(node.data.key)
        stack.extend(reversed(node.children))
    return keys


@pytest.mark.asyncio
async def test_a_backlog_shown_in_slices_ends_as_the_tree_built_at_once(tmp_path, monkeypatch):
    """One compile per slice and a progress report after each file: ranks arrive 3, 2, 1, 0 and
    each is inserted before the others. The tree ends in the model's order, the status line counts
    what --json counts, and it said "showing…" while the backlog was not shown yet."""
    from tlview.domain.totals import totals
    from tlview.index import indexing
    from tlview.index.indexing import open_index
    from tlview.ui import app as app_module
    from tlview.ui.app import TlviewApp
    from tlview.ui.status_line import status_text
    from tlview.views.tree import TreeModel

    monkeypatch.setattr(app_module, "SLICE_COMPILES", 1)
    monkeypatch.setattr(app_module, "SLICE_SECONDS", 0.0)  # one part a slice
    monkeypatch.setattr(indexing, "PROGRESS_SECONDS", 0.0)  # a report after every file
    folder = _ranks_read_backwards(tmp_path)
    seen_showing = []
    app = TlviewApp(str(folder))
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: seen_showing.append("showing…" in str(status_text(app.facts)))
                    or app.facts.finished and app.facts.shown_all, what="the backlog shown")
        await ready(app, pilot)
        whole = TreeModel(open_index(str(folder)))
        assert [e.label for e in app.model.roots] == ["rank 0", "rank 1", "rank 2", "rank 3"]
        assert _widget_keys(app.tree) == [e.key for e in whole.walk()]
        # The lines as drawn (each rank's laid out again only when it gained a node) are the
        # tree's lines in that order, and each node knows its line.
        tree = app.tree
        drawn = [tree.get_node_at_line(number) for number in range(tree.last_line + 1)]
        assert [node.data.key for node in drawn] == [e.key for e in whole.walk()]
        assert [node.line for node in drawn] == list(range(len(drawn)))
        # Each line on screen is drawn as a tree that never kept a line would draw it: ranks
        # inserted before the others moved every line kept since.
        def drawn_twice():
            kept = [list(tree.render_line(y)) for y in range(tree.size.height)]
            tree._drawn.clear()
            tree._line_cache.clear()
            return kept, [list(tree.render_line(y)) for y in range(tree.size.height)]

        kept, fresh = drawn_twice()
        assert kept == fresh
        # A frame collapsed near the top: the lines below it move up (what a click reads).
        frame = next(n for n in drawn if n.data.kind == "frame" and n.children)
        frame.collapse()
        await pilot.pause()
        assert len(drawn_lines(tree)) < len(drawn)
        kept, fresh = drawn_twice()
        assert kept == fresh
        counted = json_for(folder)["totals"]
        for name in ("compile_ids", "recompiles", "graph_breaks", "restarts", "records"):
            assert getattr(app.facts.totals, name) == getattr(totals(app.index), name) == counted[name], name
        assert counted["compile_ids"] == 12 and counted["recompiles"] == 1
        assert any(seen_showing)  # the status line said it was still filling in
        assert "showing" not in str(status_text(app.facts))


@pytest.mark.asyncio
async def test_the_views_after_a_slice_come_in_a_callback_of_their_own(tmp_path, monkeypatch):
    """A slice of the backlog, then the views (panes, tree note, status line) in the same
    callback held a key read meanwhile for 60-100 ms at 20,000 ranks. After a slice that took its
    time (here every slice: SLICE_SECONDS 0), the views wait for the next callback, and a key
    read then comes first. They still come, and end what --json says."""
    import sys

    from tlview.index import indexing
    from tlview.ui import app as app_module
    from tlview.ui.app import TlviewApp

    monkeypatch.setattr(app_module, "SLICE_COMPILES", 1)
    monkeypatch.setattr(app_module, "SLICE_SECONDS", 0.0)
    monkeypatch.setattr(indexing, "PROGRESS_SECONDS", 0.0)
    after_a_slice = []
    update_views = TlviewApp._update_views

    def views(self):
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_name != "refresh_views":
            frame = frame.f_back
        after_a_slice.append(frame is not None and bool(frame.f_locals.get("changes")))
        update_views(self)

    monkeypatch.setattr(TlviewApp, "_update_views", views)
    folder = _ranks_read_backwards(tmp_path)
    app = TlviewApp(str(folder))
    async with app.run_test(size=(150, 45)) as pilot:
        await shown_whole(app, pilot)
        assert after_a_slice and not any(after_a_slice)
        assert app.facts.totals.compile_ids == json_for(str(folder))["totals"]["compile_ids"]


def test_many_small_files_tell_progress_as_they_are_read(tmp_path, monkeypatch):
    """20,000 small rank files were one round of reading, with one progress report at its end
    (the explorer showed nothing for 10 s): a report comes at least every PROGRESS_SECONDS."""
    from tlview.index import indexing
    from tlview.index.index import Index
    from tlview.source.discover import find_logs

    monkeypatch.setattr(indexing, "PROGRESS_SECONDS", 0.0)
    folder = _ranks_read_backwards(tmp_path)
    index = Index()
    for log in find_logs(str(folder))[0]:
        index.add_log(log)
    reports = []
    indexing.Indexer(index, use_fork=False, use_pool=False,
                     progress=lambda: reports.append(index.bytes_read)).run()
    assert len(reports) >= 4 + 1  # one a file, and the round's
    assert reports == sorted(reports) and reports[0] < reports[-1] == index.bytes_total


def test_rank_files_are_read_in_rank_order(tmp_path):
    from tlview.source.discover import find_logs

    for rank in (10, 2, 1, 0, 11):
        shutil.copy(next(RANKS4.glob("*rank_0_*.log")), tmp_path / f"dedicated_log_torch_trace_rank_{rank}_x.log")
    assert [log.rank_from_name for log in find_logs(str(tmp_path))[0]] == [0, 1, 2, 10, 11]


def test_the_ui_takes_changes_while_the_indexing_thread_holds_the_lock():
    """A worker feeding many small files takes the index's lock again at once: taking the changes
    waited 100-700 ms for it."""
    from tlview.index.indexing import open_index

    index = open_index(str(RANKS4))
    held, release = threading.Event(), threading.Event()

    def hold():
        with index.lock:
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(5)
    taken = []
    taker = threading.Thread(target=lambda: taken.append(index.take_changes()))
    taker.start()
    taker.join(3)
    waited = taker.is_alive()
    release.set()
    holder.join()
    taker.join()
    assert not waited and taken, "take_changes waited for the index's lock"


def test_a_record_outside_compile_ids_leaves_other_verdicts_judged():
    """Each record of no compile id changes the run's Export entry: a compile that cannot be
    torch.export's keeps its verdict (all 10,000 were judged again, at every such record); a
    compile id of an export is judged again, as its verdict is its export's."""
    from tlview.index.indexing import open_index

    for folder, exports in ((RANKS4, False), (GENERATED / "export" / "trace", True)):
        index = open_index(str(folder))
        compiles = {n.compile for n in index.iter_nodes() if n.compile is not None and not n.is_outside}
        before = {c: c._revisions() for c in compiles}
        for entry in index.outside.values():
            index.touch(entry.compile)
        changed = [c for c in compiles if c._revisions() != before[c]]
        assert bool(changed) is exports, folder
        assert all(c.verdict.export for c in changed)


def test_regrouping_by_rank_takes_what_is_shown_not_the_whole_index():
    """The second rank makes groups the top level. The tree regroups what it shows and the part
    that brought the rank, and the rest of the index follows in later parts: at 20,000 ranks the
    regrouping of all that was read held the first key 444 ms. The end is the tree built at once."""
    from tlview.index.index import Index
    from tlview.index.indexing import Indexer
    from tlview.source.discover import find_logs
    from tlview.views.tree import TreeModel

    logs = find_logs(str(RANKS4))[0]
    index = Index()
    index.add_log(logs[0])
    Indexer(index, use_fork=False, use_pool=False).run(finish=False)
    model = TreeModel(index)
    first_rank = {id(e.compile) for e in model.compile_entries()}
    assert first_rank and not model.grouped
    for log in logs[1:]:
        index.add_log(log)
    Indexer(index, use_fork=False, use_pool=False).run()
    later = sorted((c for f in index.frames.values() for c in f.compiles if id(c) not in first_rank),
                   key=lambda c: c.head.seq)
    assert len(later) > 3

    delta = model.apply(later[:1])
    assert delta.rebuilt and model.grouped
    assert {id(e.compile) for e in model.compile_entries()} == first_rank | {id(later[0])}
    model.apply(later[1:])
    whole = TreeModel(index)
    assert [(e.key, e.compile_ids, e.status) for e in model.walk()] == \
        [(e.key, e.compile_ids, e.status) for e in whole.walk()]


@pytest.mark.asyncio
async def test_the_run_pane_builds_one_view_at_a_time_and_stops_when_left(monkeypatch):
    """The Run pane's view is O(compiles) and its thread cannot be stopped: a new view asked for
    while one is built waits for it, and a view whose pane was left is not built to its end.
    (Loads started at every update ran three or four at once at 20,000 ranks.)"""
    from tlview.ui import run_pane
    from tlview.ui.app import TlviewApp

    release = threading.Event()
    calls = {"summaries": 0, "timelines": 0, "running": 0, "most": 0}
    real_summary, real_timeline = run_pane.run_summary, run_pane.compile_timeline

    def slow_summary(*args, **kwargs):
        calls["summaries"] += 1
        calls["running"] += 1
        calls["most"] = max(calls["most"], calls["running"])
        try:
            release.wait(10)
            return real_summary(*args, **kwargs)
        finally:
            calls["running"] -= 1

    def counted_timeline(*args):
        calls["timelines"] += 1
        return real_timeline(*args)

    monkeypatch.setattr(run_pane, "run_summary", slow_summary)
    monkeypatch.setattr(run_pane, "compile_timeline", counted_timeline)
    monkeypatch.setattr(run_pane, "LOAD_GAP", 0)
    app = TlviewApp(str(RANKS4))
    async with app.run_test(size=(150, 45)) as pilot:
        await ready(app, pilot)
        pane = app.query_one(run_pane.RunPane)
        await pilot.press("9")
        await until(pilot, lambda: calls["summaries"] == 1, what="the Run pane's view begun")
        await pilot.resize_terminal(170, 45)  # another width: another view, asked for meanwhile
        await pilot.pause(0.1)
        assert calls["summaries"] == 1  # it waits for the one being built
        await pilot.press("1")  # the pane is left
        await until(pilot, lambda: not pane._on_screen, what="the pane hidden")
        release.set()
        await app.workers.wait_for_complete()
        await pilot.pause(0.1)
        assert calls["summaries"] == 1 and calls["timelines"] == 0  # not built past the pane's leaving
        assert "Total compile time" not in pane.copy_text()
        await pilot.press("9")  # back: built now, whole
        await until(pilot, lambda: "Total compile time" in pane.copy_text(), what="the Run pane's view")
        assert calls["most"] == 1 and calls["timelines"] >= 1


def test_a_deferring_indexer_reads_nothing_while_it_defers():
    """Keys first: while `defer()` holds (a key came a moment ago), the indexing thread sleeps
    between files and reads nothing; then it reads everything."""
    from tlview.index.index import Index
    from tlview.index.indexing import Indexer
    from tlview.source.discover import find_logs

    index = Index()
    for log in find_logs(str(RANKS4))[0]:
        index.add_log(log)
    seen = []

    def defer() -> bool:
        seen.append(index.bytes_read)
        return len(seen) <= 5  # a key: five checks, then it has been handled

    Indexer(index, use_fork=False, use_pool=False, defer=defer).run()
    assert seen[:6] == [0] * 6  # deferred five times before the first file, nothing read meanwhile
    assert index.bytes_read == index.bytes_total and len(index.sources) == 4
    assert len(index.nodes) == json_for(RANKS4)["totals"]["compile_ids"]


# ---- keys first, from the moment a key is read ---------------------------------------------------

@pytest.mark.asyncio
async def test_the_driver_tells_the_app_of_a_key_as_it_reads_it():
    """The input thread stamps a key or a click the moment it reads it (the slices and the
    indexing thread step back from then on), not when the app gets to it: at 20,000 ranks the app
    got to a key 120 ms after it was read. Other input (a resize, focus) is no key."""
    from textual import events

    from tlview.ui.driver import TlviewDriver

    class App:
        def __init__(self):
            self.told, self.posted = 0, []

        def user_input(self):
            self.told += 1

        def post_message(self, message):
            self.posted.append(message)

        async def _post_message(self, message):
            self.posted.append(message)

    app = App()
    driver = TlviewDriver(app)
    driver._loop = asyncio.get_running_loop()  # (as start_application_mode sets it)
    driver.process_message(events.Resize((80, 24), (80, 24)))
    assert app.told == 0
    driver.process_message(events.Key("j", "j"))
    assert app.told == 1  # at once, in the thread that read it
    await asyncio.sleep(0.05)
    assert [type(m) for m in app.posted][-1] is events.Key  # and the key goes on to the app


@pytest.mark.asyncio
async def test_a_key_read_ends_the_slice_running(monkeypatch):
    """A slice of the backlog stops at the next part once a key was read (not at its deadline),
    and the rest is shown after the key."""
    from tlview.ui import app as app_module
    from tlview.ui.app import TlviewApp
    from tlview.ui.backlog import Backlog

    monkeypatch.setattr(app_module, "SLICE_COMPILES", 1)
    monkeypatch.setattr(app_module, "SLICE_SECONDS", 60.0)  # a slice would show the whole backlog
    app = TlviewApp(str(RANKS4))
    async with app.run_test(size=(150, 45)) as pilot:
        await ready(app, pilot)
        compiles = sorted({n.compile for n in app.index.nodes.values()}, key=lambda c: c.head.seq)
        assert len(compiles) == 11  # (12 compile ids: one compile restarted once)
        parts = []
        real_apply = app.model.apply

        def apply(part):
            parts.append(part)
            if len(parts) == 2:
                app.user_input()  # a key read by the driver while the second part is shown
            return real_apply(part)

        monkeypatch.setattr(app.model, "apply", apply)
        app.key_at = 0.0
        app._backlog = Backlog(compiles)  # shown again (each as changed)
        app.refresh_views()
        assert len(parts) == 2 and len(app._backlog) == 9
        await until(pilot, lambda: not app._backlog, what="the rest shown after the key")
        assert sum(len(p) for p in parts) == 11


@pytest.mark.asyncio
async def test_frames_collapsed_past_the_limit_send_no_message_each(monkeypatch):
    """Past EXPAND_ENTRIES the frames are collapsed at once, with no message per node: Textual's
    collapse() posts a NodeCollapsed that bubbles to the App, 80,000 dispatches at 20,000 ranks
    that held the keys pressed meanwhile."""
    from textual.widgets import Tree

    from tlview.ui import app as app_module
    from tlview.ui import frame_tree
    from tlview.ui.app import TlviewApp

    monkeypatch.setattr(app_module, "SLICE_COMPILES", 1)
    monkeypatch.setattr(app_module, "SLICE_SECONDS", 0.0)  # the tree grows past the limit while shown
    monkeypatch.setattr(frame_tree, "EXPAND_ENTRIES", 6)
    collapsed = []
    real_post = frame_tree.FrameTree.post_message

    def post(self, message):
        if isinstance(message, Tree.NodeCollapsed):
            collapsed.append(message)
        return real_post(self, message)

    monkeypatch.setattr(frame_tree.FrameTree, "post_message", post)
    app = TlviewApp(str(RANKS4))
    async with app.run_test(size=(150, 45)) as pilot:
        await shown_whole(app, pilot)
        tree = app.tree
        assert tree._collapsed_big
        cursor_path = set()
        node = tree.cursor_node
        while node is not None:
            cursor_path.add(node.id)
            node = node.parent
        frames = [n for n in tree._by_key.values() if n.data.kind == "frame"]
        assert len(frames) >= 4
        assert all(not n.is_expanded for n in frames if n.id not in cursor_path)
        assert not collapsed
        # Once more on the whole tree shown: its lines are laid out again at once (no line of a
        # collapsed frame's children is drawn), though no node was added.
        for frame in frames:
            frame.expand()
        await pilot.pause()
        assert len(drawn_lines(tree)) > len(frames) + 8
        tree._collapse_frames()
        await pilot.pause()
        drawn = drawn_lines(tree)
        assert all(n.parent is tree.root or n.parent.is_expanded for n in drawn)
        assert {n.id for n in drawn} >= {n.id for n in frames} and not collapsed


def drawn_lines(tree) -> list:
    return [tree.get_node_at_line(number) for number in range(tree.last_line + 1)]


def test_the_pool_yields_the_cpu_to_the_explorer(tmp_path, monkeypatch):
    """The explorer's pool processes (and their forkserver) run below the explorer's priority:
    on 2 cores they took the cores from the UI process while 10,000 compile ids came in."""
    import os

    from conftest import CORPUS

    from tlview.index import parallel, pool
    from tlview.index.index import Index
    from tlview.index.indexing import open_index
    from tlview.source.discover import find_logs

    data = b"".join(next((CORPUS / s / "trace").glob("*.log")).read_bytes()
                    for s in ("graph_breaks", "recompiles", "dynamic_shapes", "model")) * 2
    path = tmp_path / "dedicated_log_torch_trace_big.log"
    path.write_bytes(data)
    seen = {}
    real = parallel.below_the_explorer

    def observed(pool):
        real(pool)
        for pid in pool._processes:
            seen[pid] = os.getpriority(os.PRIO_PROCESS, pid)

    monkeypatch.setattr(parallel, "below_the_explorer", observed)
    index = Index()
    for log in find_logs(str(path))[0]:
        index.add_log(log)
    assert len(data) > 400 << 10
    index.sources[0].size = len(data)  # (as the indexer finds it before it takes the pool)
    parallel.index_with_pool(index, index.sources[0], lambda: None, lambda: False,
                             first=64 << 10, step=128 << 10)
    index.finish()
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert seen and all(nice >= max(mine, pool.POOL_NICENESS) for nice in seen.values())
    assert len(index.nodes) == len(open_index(str(path), parallel_ok=False).nodes)


@pytest.mark.asyncio
async def test_the_run_pane_steps_back_while_a_key_comes_first(monkeypatch):
    """The Run pane's thread builds and renders its lines off the UI thread, and sleeps between
    parts while a key comes first as the logs are read; the pane then draws only the lines on
    screen."""
    from conftest import visible_lines

    from tlview.ui.app import TlviewApp
    from tlview.ui.run_pane import RunPane

    app = TlviewApp(str(RANKS4))
    async with app.run_test(size=(150, 45)) as pilot:
        await ready(app, pilot)
        keys = {"first": True}
        monkeypatch.setattr(app, "keys_first", lambda: keys["first"])
        monkeypatch.setattr(app, "filling", lambda: True)  # (as while the logs are read)
        pane = app.query_one(RunPane)
        await pilot.press("9")
        await until(pilot, lambda: pane._loading, what="the Run pane's thread started")
        await pilot.pause(0.3)
        assert pane._loading and "Total compile time" not in pane.copy_text()  # stepping back
        keys["first"] = False
        await until(pilot, lambda: "Total compile time" in pane.copy_text(), what="the Run pane's view")
        body = app.query_one("#run-body")
        await until(pilot, lambda: visible_lines(body), what="the lines drawn")
        lines = visible_lines(body)
        # compile ids on some ranks only are no hang (what the ranks ran is not logged): the run first
        assert lines[0].startswith("Total compile time") and "Why the job may hang" not in lines
        assert len(lines) > body.size.height // 2
        assert body.virtual_size.height > body.size.height  # more lines than shown: drawn as scrolled
        await until(pilot, lambda: not pane._loading and pane._wanted is None
                    and pane._shown[2] == pane._width(), what="the view for the pane's width")
        body.scroll_end(animate=False)
        await until(pilot, lambda: body.scroll_offset.y == body.max_scroll_y > 0, what="scrolled to the end")
        await until(pilot, lambda: visible_lines(body) != lines, what="the last lines drawn")
        end = visible_lines(body)
        assert any(line.startswith("Ranks 0-3") for line in end) and end[-1].startswith("⚠")  # the view's end


def test_the_backlog_gives_each_compile_once_oldest_first(monkeypatch):
    """Compiles queued in any order, again while queued, and again after they were taken (a
    compile that changed once more) come out each once, oldest first, as one sort of them would."""
    from tlview.index.indexing import open_index
    from tlview.ui import backlog as backlog_module
    from tlview.ui.backlog import Backlog, arrival

    compiles = sorted({n.compile for n in open_index(str(RANKS4)).nodes.values()}, key=arrival)
    assert len(compiles) == 11
    for few in (0, 16):  # placed one by one, and sorted again
        monkeypatch.setattr(backlog_module, "FEW", few)
        backlog = Backlog(compiles[6:9])
        backlog.add([compiles[8], compiles[7], *compiles[9:]])  # again while queued, then newer
        assert backlog.take(2) == compiles[6:8] and len(backlog) == 3
        backlog.add([compiles[2], compiles[6], compiles[0]])  # older ones, and one taken before
        assert backlog.take(100) == [compiles[0], compiles[2], compiles[6], *compiles[8:]]
        assert not backlog and backlog.take(5) == []


def test_merging_and_judging_step_back_between_nodes(tmp_path, monkeypatch):
    """The indexing thread's own work between two parts (merging one, judging what changed) calls
    its pause now and then, not only before each part: a key pressed in the explorer meanwhile
    comes first. The index it makes is the one-process index."""
    from conftest import CORPUS

    from tlview.index import index as index_module
    from tlview.index import merging as parts
    from tlview.index import parallel
    from tlview.index.index import Index
    from tlview.index.indexing import open_index
    from tlview.report.summary import build_summary
    from tlview.source.discover import find_logs

    monkeypatch.setattr(parts, "PAUSE_EVERY", 2)
    monkeypatch.setattr(index_module, "JUDGE_PAUSE_EVERY", 2)
    data = b"".join(next((CORPUS / s / "trace").glob("*.log")).read_bytes()
                    for s in ("graph_breaks", "recompiles", "dynamic_shapes", "model")) * 2
    path = tmp_path / "dedicated_log_torch_trace_big.log"
    path.write_bytes(data)
    index = Index()
    for log in find_logs(str(path))[0]:
        index.add_log(log)
    index.sources[0].size = len(data)
    merged, pauses = [], []
    real_merge = index.merge_part
    monkeypatch.setattr(index, "merge_part", lambda *a, **k: merged.append(1) or real_merge(*a, **k))
    parallel.index_with_pool(index, index.sources[0], lambda: None, lambda: False,
                             first=64 << 10, step=256 << 10, defer=lambda: pauses.append("merge"))
    index.finish()
    index.judge_changed(pause=lambda: pauses.append("judge"))
    whole = open_index(str(path), parallel_ok=False)
    assert len(merged) >= 2
    assert pauses.count("merge") > len(merged)  # (once before each part, and inside its merges)
    assert pauses.count("judge") >= len({n.compile for n in whole.nodes.values()}) // 2 - 1
    assert build_summary(index) == build_summary(whole)


@pytest.mark.asyncio
async def test_a_key_read_during_a_slice_puts_off_the_views(monkeypatch):
    """A key read while a slice is shown: the slice ends and the views' refresh (the status line's
    totals, O(files)) waits for a later slice; once the key is served they are refreshed, and at
    most every ten times what the last refresh took."""
    import time

    from tlview.ui import app as app_module
    from tlview.ui import keys_first
    from tlview.ui.app import TlviewApp
    from tlview.ui.backlog import Backlog

    monkeypatch.setattr(app_module, "SLICE_COMPILES", 1)
    app = TlviewApp(str(RANKS4))
    async with app.run_test(size=(150, 45)) as pilot:
        await ready(app, pilot)
        compiles = sorted({n.compile for n in app.index.nodes.values()}, key=lambda c: c.head.seq)
        real_apply, real_snapshot = app.model.apply, app.running.snapshot
        snapshots = []

        def apply(part):
            app.user_input()  # a key read by the driver while this part is shown
            return real_apply(part)

        def slow_snapshot():
            snapshots.append(time.monotonic())
            time.sleep(0.05)
            return real_snapshot()

        monkeypatch.setattr(app.model, "apply", apply)
        monkeypatch.setattr(app.running, "snapshot", slow_snapshot)
        app.key_at, app._views_at = 0.0, 0.0
        app._backlog = Backlog(compiles)
        app.refresh_views()
        assert len(app._backlog) == 10 and snapshots == []  # one part, and no views
        monkeypatch.setattr(app.model, "apply", real_apply)
        await until(pilot, lambda: not app._backlog and snapshots, what="the rest and the views shown")
        assert app._views_every >= 0.5
        # the last slice too (nothing left in the backlog): a key read during it comes first
        snapshots.clear()
        monkeypatch.setattr(app.model, "apply", apply)
        app._backlog = Backlog(compiles[:1])
        app.refresh_views()
        assert not app._backlog and snapshots == []
        await until(pilot, lambda: snapshots, what="the views, once the key is shown")
        assert snapshots[0] - app.key_at >= keys_first.KEYS_FIRST


@pytest.mark.asyncio
async def test_ranks_coming_in_order_keep_the_lines_laid_out_before(tmp_path, monkeypatch):
    """Ranks read in rank order come in at the end of the tree: a layout takes the lines of the
    ranks laid out before as they were and lays out the rest. The lines, their numbers and what
    is drawn are a whole build's."""
    from tlview.index import indexing
    from tlview.index.indexing import open_index
    from tlview.ui import app as app_module
    from tlview.ui import frame_tree
    from tlview.ui.app import TlviewApp
    from tlview.ui.frame_tree import FrameTree
    from tlview.views.tree import TreeModel

    monkeypatch.setattr(app_module, "SLICE_COMPILES", 1)
    monkeypatch.setattr(app_module, "SLICE_SECONDS", 0.0)
    monkeypatch.setattr(indexing, "PROGRESS_SECONDS", 0.0)
    monkeypatch.setattr(frame_tree, "LAYOUT_EVERY", 0.0)  # a layout each slice
    monkeypatch.setattr(frame_tree, "LAYOUT_SHARE", 0)
    for log in sorted(RANKS4.glob("*.log")):
        shutil.copy(log, tmp_path / log.name)
    started_from = []
    real_build = FrameTree._build

    def build(tree):
        started_from.append(len(tree._previous_lines or ()))
        real_build(tree)

    monkeypatch.setattr(FrameTree, "_build", build)
    app = TlviewApp(str(tmp_path))
    async with app.run_test(size=(150, 45)) as pilot:
        await shown_whole(app, pilot)
        tree = app.tree
        whole = [e.key for e in TreeModel(open_index(str(tmp_path))).walk()]
        drawn = [tree.get_node_at_line(number) for number in range(tree.last_line + 1)]
        assert [node.data.key for node in drawn] == whole
        assert [node.line for node in drawn] == list(range(len(whole)))
        assert sum(1 for n in started_from if n) >= 3  # layouts that took lines laid out before
        kept = [list(tree.render_line(y)) for y in range(tree.size.height)]
        tree._drawn.clear()
        tree._line_cache.clear()
        assert kept == [list(tree.render_line(y)) for y in range(tree.size.height)]


@pytest.mark.asyncio
async def test_while_keys_come_the_tree_grows_less_often(monkeypatch):
    """While the tree fills in, its new lines are laid out every LAYOUT_EVERY; while a person
    presses keys, every LAYOUT_READING (a key that lands on a layout waits for it and for its
    frame), and never while a key comes first: then once it was handled; once the keys stop, as
    before; and at the end of the filling, at once."""
    import time

    from tlview.ui import frame_tree, keys_first
    from tlview.ui.app import TlviewApp
    from tlview.views.tree import TreeDelta

    app = TlviewApp(str(RANKS4))
    async with app.run_test(size=(150, 45)) as pilot:
        await ready(app, pilot)
        tree = app.tree

        async def laid_out(since: float, key_ago: float, more_to_come: bool = True) -> bool:
            now = time.monotonic()
            tree._stale, tree._laid_out, tree._build_seconds = True, now - since, 0.0
            app.key_at = now - key_ago
            tree.apply(TreeDelta(), more_to_come=more_to_come)
            await pilot.pause()
            return not tree._stale

        every, reading = frame_tree.LAYOUT_EVERY, frame_tree.LAYOUT_READING
        assert not await laid_out(since=every / 2, key_ago=60)
        assert await laid_out(since=every * 1.5, key_ago=60)  # no key: every LAYOUT_EVERY
        assert app.held_until == 0.0  # the indexing thread went on meanwhile
        assert not await laid_out(since=every * 1.5, key_ago=keys_first.KEYS_FIRST + 0.1)  # keys coming
        asked = time.monotonic()
        assert await laid_out(since=reading + 0.1, key_ago=keys_first.KEYS_FIRST + 0.1)
        # while a person reads, the indexing thread steps back for the layout and its frame
        assert asked + frame_tree.LAYOUT_HOLD <= app.held_until <= time.monotonic() + frame_tree.LAYOUT_HOLD
        assert await laid_out(since=every * 1.5, key_ago=keys_first.READING + 0.1)  # they stopped
        # a key read a moment ago comes first: the layout waits until it is handled
        assert not await laid_out(since=reading + 0.1, key_ago=0.0)
        assert tree._layout_due
        await until(pilot, lambda: not tree._stale, what="the layout put off")
        assert time.monotonic() - app.key_at >= keys_first.KEYS_FIRST
        assert await laid_out(since=0.0, key_ago=0.0, more_to_come=False)


async def test_once_the_logs_are_read_a_pane_s_thread_does_not_wait_for_keys(monkeypatch):
    """Nothing else is reading: the Run pane's thread goes on right after the key that opened it
    (it waited 150 ms for nothing, the Run pane's first open took 250 ms)."""
    from tlview.ui.app import TlviewApp
    from tlview.ui.run_pane import RunPane

    app = TlviewApp(str(RANKS4))
    async with app.run_test(size=(150, 45)) as pilot:
        await ready(app, pilot)
        await until(pilot, lambda: app.facts.finished, what="the logs read")
        monkeypatch.setattr(app, "keys_first", lambda: True)  # a key, always
        pane = app.query_one(RunPane)
        await pilot.press("9")
        await until(pilot, lambda: "Total compile time" in pane.copy_text(), what="the Run pane's view")


@pytest.mark.asyncio
async def test_the_status_line_and_tree_note_lay_the_screen_out_only_when_their_size_may_change(tmp_path, monkeypatch):
    """Static.update lays out the whole screen by default: the status line (one row of a set
    width) and the tree note did at each update of the views while the logs came in (11 ms each
    at 10,000 compile ids, 38 and 14 times). The status line never needs it, the tree note only
    when it shows lines or did; a text drawn already is not drawn again. They still show what
    --json counts."""
    from textual.widgets import Static

    from tlview.index import indexing
    from tlview.ui import app as app_module
    from tlview.ui.app import TlviewApp
    from tlview.ui.tree_note import TreeNote

    monkeypatch.setattr(app_module, "SLICE_COMPILES", 1)
    monkeypatch.setattr(app_module, "SLICE_SECONDS", 0.0)
    monkeypatch.setattr(app_module, "VIEWS_EVERY", 0.0)  # the views at every slice
    monkeypatch.setattr(indexing, "PROGRESS_SECONDS", 0.0)
    updates = []  # (widget, whether it laid the screen out)
    update = Static.update

    def counted_update(self, content="", *, layout=True):
        if self.id == "status" or isinstance(self, TreeNote):
            updates.append((self.id, layout))
        return update(self, content, layout=layout)

    monkeypatch.setattr(Static, "update", counted_update)
    folder = _ranks_read_backwards(tmp_path)
    app = TlviewApp(str(folder))
    async with app.run_test(size=(150, 45)) as pilot:
        await shown_whole(app, pilot)
        assert len([u for u in updates if u[0] == "status"]) >= 3  # (the line changed as it filled)
        assert ("status", True) not in updates
        assert not [u for u in updates if u[0] == "tree-note"]  # nothing to say: never drawn
        counted = f"{json_for(str(folder))['totals']['compile_ids']} compile ids"
        assert counted in app.query_one("StatusLine").text


@pytest.mark.asyncio
async def test_the_panes_not_shown_are_mounted_once_the_logs_are_read(monkeypatch):
    """Each pane mounted laid out the whole screen: the seven mounted one per frame while 10,000
    compile ids came in took 150-200 ms of the main thread, which the indexing waited for. While
    `mount_later()` holds they wait; a pane asked for meanwhile is mounted alone, at once; the
    others follow once it no longer holds."""
    from textual.app import App

    from tlview.ui import detail as detail_module
    from tlview.ui.detail import COMPOSED_FIRST, TABS, DetailPane
    from tlview.ui.pane import Selection

    monkeypatch.setattr(detail_module, "MOUNT_LATER", 0.01)
    filling = [True]
    lexer_built = []  # when the code panes' lexer was built: the panes mounted then
    monkeypatch.setattr(detail_module, "warm_up", lambda: lexer_built.append(mounted(app)))

    class Holder(App):
        def compose(self):
            yield DetailPane(Selection(None, None), mount_later=lambda: filling[0], id="detail")

    def mounted(app) -> set:
        return {tab_id for tab_id, *_ in TABS if app.query(f"#{tab_id}-pane")}

    app = Holder()
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(10):  # frames and looks at mount_later
            await pilot.pause(0.02)
        assert mounted(app) == set(COMPOSED_FIRST)
        run = app.query_one(DetailPane).pane("run")
        assert run.id == "run-pane" and mounted(app) == {*COMPOSED_FIRST, "run"}
        assert not lexer_built  # (its imports and regexes were in front of the first screen)
        filling[0] = False
        await until(pilot, lambda: len(mounted(app)) == len(TABS), what="the other panes mounted")
        await until(pilot, lambda: lexer_built, what="the lexer built, once the panes are mounted")
        assert lexer_built == [{tab_id for tab_id, *_ in TABS}]


@pytest.mark.asyncio
async def test_a_pane_left_for_another_is_told_at_once_and_its_thread_stops(monkeypatch):
    """'1' after '9': the Run pane's Hide event came after the frame that showed the Summary,
    and its thread built the run's view meanwhile, sharing the interpreter with that frame (the
    key took 110-230 ms at 10,000 compile ids). The pane is told as the tab changes, and its
    thread stops at its next step; shown again, it builds its view."""
    from tlview.ui.app import TlviewApp
    from tlview.ui.run_pane import RunPane

    app = TlviewApp(str(RANKS4))
    async with app.run_test(size=(150, 45)) as pilot:
        await ready(app, pilot)
        pane = app.query_one(RunPane)
        hold = threading.Event()
        steps = []
        from tlview.ui import run_pane

        real_view = run_pane.run_view

        def slow_view(index, rank, width, go_on):
            def step():
                steps.append(1)
                hold.wait(5)
                go_on()
            return real_view(index, rank, width, step)

        monkeypatch.setattr(run_pane, "run_view", slow_view)
        await pilot.press("9")
        await until(pilot, lambda: pane._loading and steps, what="the Run pane's thread in its first step")
        app.action_show_tab("summary")
        assert not pane._on_screen  # told now: no event or frame in between
        hold.set()
        await until(pilot, lambda: not pane._loading, what="the thread stopped")
        assert len(steps) == 1 and pane._shown is None  # left at its next step; built when shown again
        monkeypatch.setattr(run_pane, "run_view", real_view)
        await pilot.press("9")
        await until(pilot, lambda: "Total compile time" in pane.copy_text(), what="the Run pane's view")


@pytest.mark.asyncio
async def test_the_graphs_list_mounted_as_the_app_ends_sets_nothing_up():
    """The Graphs pane is mounted after the first screen: a signal just then ends the app while
    its Select mounts, with its overlay gone. Textual's Select asks for the overlay as it mounts
    (NoMatches, and the app ended with a traceback); the pane's own sets nothing up then."""
    from textual.app import App
    from textual.css.query import NoMatches
    from textual.widgets import Select

    from tlview.ui.graphs_pane import GraphSelect

    class Bare:
        def compose(self):  # as the app ends: its children gone before its Mount is handled
            return iter(())

    class BareGraphSelect(Bare, GraphSelect):
        pass

    class BareSelect(Bare, Select):
        pass

    for select, fails in ((BareGraphSelect, False), (BareSelect, True)):
        class Holder(App):
            def compose(self):
                yield select([("a", 1)], id="s")

        app = Holder()
        failed = None
        try:
            async with app.run_test() as pilot:
                await pilot.pause()
        except NoMatches as exc:
            failed = exc
        assert (failed is not None) is fails, select
        if not fails:
            with_overlay = GraphSelect([("a", 1)], value=1)

            class Whole(App):
                def compose(self):
                    yield with_overlay

            async with Whole().run_test() as pilot:
                await pilot.pause()
                assert with_overlay.query_one("SelectCurrent").has_value  # set up as Select is


@pytest.mark.asyncio
async def test_a_pane_asked_for_while_the_logs_are_first_read_shows_once_mounted(monkeypatch):
    """While the logs are first read the panes not shown wait to be mounted; a key for one (4,
    `o`, `y`) mounts it then. It was shown before its widgets were there: the app ended with
    NoMatches ('#recompile-head' at 20,000 rank files, '#graph-list' on `o`)."""
    from tlview.ui.app import TlviewApp
    from tlview.ui.detail import COMPOSED_FIRST, TABS
    from tlview.ui.payload_view import PayloadView

    monkeypatch.setattr(TlviewApp, "filling", lambda self: True)  # the panes wait
    app = TlviewApp(str(CORPUS / "recompiles" / "trace"))
    async with app.run_test(size=(150, 45)) as pilot:
        await until(pilot, lambda: app.facts.finished and app.tree.entry is not None, what="read")
        await press(pilot, "j")  # [0/1]: a recompile
        mounted = {tab_id for tab_id, *_ in TABS if app.query(f"#{tab_id}-pane")}
        assert mounted == set(COMPOSED_FIRST)
        await press(pilot, "4", "y")
        head = app.query_one("#recompile-head")
        await until(pilot, lambda: "[0/1]" in str(head.render()), what="the recompile shown")
        await press(pilot, "o")
        view = app.query_one("#graph-view", PayloadView)
        await until(pilot, lambda: "def call" in view.text, what="the output code")
        assert app.focused is view and app.detail.active == "graphs"
        for key in "356789":
            await press(pilot, key)
        assert app.is_running and app.detail.active == "run"
