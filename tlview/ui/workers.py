"""The app's background work, as thread workers that drive the model (indexing.py, live.py,
search.py) and report by messages only. A failure is not caught here: the app's
Worker.StateChanged handler shows it.
"""

from __future__ import annotations

import os
import time
from typing import Protocol

from textual.app import App
from textual.message import Message
from textual.worker import get_current_worker

from tlview.diagnose.hang import job_verdict
from tlview.diagnose.ranks import divergence
from tlview.diagnose.what_ran import rank_groups
from tlview.diagnose.worst import worst_problem
from tlview.index.index import Index
from tlview.index.indexing import CHUNK, Indexer
from tlview.index.live import LiveIndex
from tlview.source.discover import find_logs
from tlview.ui.keys_first import step_back
from tlview.ui.messages import (
    FollowState,
    IndexFinished,
    IndexGrew,
    IndexReplaced,
    JobDiagnosed,
    JobEnded,
    PayloadMatches,
)
from tlview.views.filters import Filter
from tlview.views.search import search_payloads
from tlview.views.tree import TreeModel

SEARCH_REPORT = 0.25  # seconds between two reports of a payload search
# Following, the job's verdict is decided again at most this often while the logs grow (a hang
# shows as ranks that stop writing: seconds matter less than not reading every schedule per read).
DIAGNOSE_EVERY = 5.0


class IndexingApp(Protocol):
    """What the indexing workers ask of the app (TlviewApp): its filter, when to step back for
    keys (keys_first.py), and its messages."""

    flt: Filter

    def steps_back(self) -> bool: ...
    def post_message(self, message: Message) -> bool: ...


def report_growth(app: IndexingApp, index: Index, total: int | None = None) -> None:
    """Tell the app the index grew. What changed is judged first, here in the indexing thread:
    the records hold still between two reads, and the UI thread finds the verdicts done (at
    10,000 compile ids, 1 s of its time while it filled the tree)."""
    index.judge_changed(pause=lambda: step_back(app))
    app.post_message(IndexGrew(index.bytes_read, index.bytes_total if total is None else total))


def index_logs(app: IndexingApp, index: Index, path: str, latest: bool) -> None:
    """Read every log under `path` into `index`, with progress (the first screen comes early)."""
    worker = get_current_worker()
    found, notes = find_logs(path, latest=latest)
    index.notes.extend(notes)
    for log in found:
        index.add_log(log)
    total = sum(os.path.getsize(s.path) for s in index.sources) or 1

    def progress() -> None:
        report_growth(app, index, total)

    Indexer(index, use_fork=False, use_pool=True, progress=progress,
            cancelled=lambda: worker.is_cancelled, freeze=True, defer=app.steps_back).run()
    if not worker.is_cancelled:
        index.judge_changed(pause=lambda: step_back(app))
        groups = rank_groups(index) if len(index.ranks()) > 1 else None
        # The folded tree here too: built on the UI thread, 20,000 ranks held a key for 290 ms.
        folded = TreeModel(index, app.flt, ranks=groups) if groups is not None and groups.folds else None
        app.post_message(IndexFinished(groups, folded))
        diagnose_job(app, index)


def diagnose_job(app: IndexingApp, index: Index) -> None:
    """The job's verdict (hung, died) and the run's worst problem, in the thread that fills the
    index: the index holds still."""
    verdict = job_verdict(divergence(index))
    app.post_message(JobDiagnosed(verdict, worst_problem(index, verdict)))


def follow_logs(app: IndexingApp, live: LiveIndex, job=None) -> None:
    """Follow the path: new files, appends, replaced files; wake on file events or a poll."""
    worker = get_current_worker()

    def indexer_for(index: Index) -> Indexer:
        return Indexer(index, use_fork=False, use_pool=True, cancelled=lambda: worker.is_cancelled,
                       defer=app.steps_back)

    indexer = indexer_for(live.index)
    state = None
    job_done = False
    diagnosed_at, grew = 0.0, False
    live.follower.start()
    try:
        while not worker.is_cancelled:
            update = live.step(read=False)
            if update.rebuilt:
                indexer = indexer_for(live.index)
                app.post_message(IndexReplaced(live.index, update.messages))
            indexer.read_big_files()
            indexer.wait_while_deferred()  # keys first, as in index_logs
            read = live.index.refresh(limit=CHUNK)
            if read or update.new_files or update.rebuilt:
                report_growth(app, live.index)
                grew = True
            if grew and time.monotonic() - diagnosed_at > DIAGNOSE_EVERY:
                diagnose_job(app, live.index)
                diagnosed_at, grew = time.monotonic(), False
            if read >= CHUNK:
                continue  # more is there now: no waiting
            if job is not None and not job_done and (code := job.poll()) is not None:
                job_done = True
                app.post_message(JobEnded(code, job.folder))
            if live.ended() and not read and not update.new_files:
                live.finish()  # the pipe closed or the job exited: close the last records
                report_growth(app, live.index)
                diagnose_job(app, live.index)
                app.post_message(FollowState(True, update.waiting, ended=True))
                return
            if (True, update.waiting) != state:
                state = (True, update.waiting)
                app.post_message(FollowState(*state))
            if live.close_idle():
                report_growth(app, live.index)
            live.follower.wait()
    finally:
        live.follower.stop()


def search_in_payloads(app: App, index: Index, flt: Filter) -> None:
    """Look for the filter's text inside payloads; report the nodes found, a few times a second."""
    worker = get_current_worker()
    last = 0.0
    found = []
    count = 0
    for node, done, total in search_payloads(index, flt.text, lambda n: flt.matches(n),
                                             lambda: worker.is_cancelled):
        if node is not None:
            found.append(node)
            count += 1
        if time.monotonic() - last > SEARCH_REPORT or done == total:
            last = time.monotonic()
            note = (f" · searching payloads {done * 100 // max(total, 1)}%" if done < total else
                    f" · {count} more whose graphs, code or log text contain it")
            app.post_message(PayloadMatches(flt, found, note))
            found = []
