"""The explorer fills in while it indexes (issue #26, item 4): what the index gained is shown in
slices with keys served between them, files of many ranks are read in rank order and tell their
progress as they go, verdicts are judged once per change of their own compile, and the UI never
waits for the indexing thread's lock to take the changes."""

from __future__ import annotations

import shutil
import threading

import pytest

from conftest import GENERATED, json_for, ready, until

RANKS4 = GENERATED / "multi_rank4" / "trace"


def _ranks_read_backwards(folder):
    """The four ranks of a real 4-rank run, named so that they are read rank 3 first: each rank
    that comes in is put before the ranks already shown."""
    for place, log in enumerate(sorted(RANKS4.glob("*.log"), reverse=True)):
        shutil.copy(log, folder / f"p{place}_{log.name}")
    return folder


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
    from tlview.model import indexing
    from tlview.model.indexing import open_index
    from tlview.model.totals import totals
    from tlview.model.tree import TreeModel
    from tlview.ui import app as app_module
    from tlview.ui.app import TlviewApp
    from tlview.ui.status_line import status_text

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
        counted = json_for(folder)["totals"]
        for name in ("compile_ids", "recompiles", "graph_breaks", "restarts", "records"):
            assert getattr(app.facts.totals, name) == getattr(totals(app.index), name) == counted[name], name
        assert counted["compile_ids"] == 12 and counted["recompiles"] == 1
        assert any(seen_showing)  # the status line said it was still filling in
        assert "showing" not in str(status_text(app.facts))


def test_many_small_files_tell_progress_as_they_are_read(tmp_path, monkeypatch):
    """20,000 small rank files were one round of reading, with one progress report at its end
    (the explorer showed nothing for 10 s): a report comes at least every PROGRESS_SECONDS."""
    from tlview.model import indexing
    from tlview.model.index import Index
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
    from tlview.model.indexing import open_index

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
    from tlview.model.indexing import open_index

    for folder, exports in ((RANKS4, False), (GENERATED / "export" / "trace", True)):
        index = open_index(str(folder))
        compiles = {n.compile for n in index.iter_nodes() if n.compile is not None and not n.is_outside}
        before = {c: c._revisions() for c in compiles}
        for entry in index.outside.values():
            index._touch(entry.compile)
        changed = [c for c in compiles if c._revisions() != before[c]]
        assert bool(changed) is exports, folder
        assert all(c.verdict.export for c in changed)
