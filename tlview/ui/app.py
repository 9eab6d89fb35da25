"""The tlview TUI: a frame tree on the left, the selected compile id's panes on the right.

The App composes widgets and routes messages: workers (workers.py) fill the index and report by
messages; each report applies the index's changed compiles to the tree model and the widgets
(never a rebuild); the model decides what is news (live.py), the widgets only render.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.reactive import reactive
from textual.widgets import Tree
from textual.worker import Worker, WorkerState

from tlview.diagnose.compile_times import run_times
from tlview.diagnose.hang import JobVerdict
from tlview.diagnose.worst import WorstProblem
from tlview.domain.compile_node import Compile
from tlview.domain.rank_history import RankGroups
from tlview.domain.totals import RunningTotals
from tlview.index import gc_pauses
from tlview.index.index import Index
from tlview.index.live import LiveEvents, LiveIndex
from tlview.source.user_source import SourceFiles
from tlview.textsafe import one_line
from tlview.ui import workers
from tlview.ui.backlog import Backlog
from tlview.ui.detail import DetailPane, pane_title
from tlview.ui.filter_bar import FilterBar
from tlview.ui.filtering import ExplorerFilter
from tlview.ui.following import Following
from tlview.ui.frame_tree import FrameTree
from tlview.ui.gc_freeze import IDLE, FullCollections, Settler
from tlview.ui.headline import Headline
from tlview.ui.jumping import Jumps
from tlview.ui.key_hints import KeyHints
from tlview.ui.keys import BINDINGS, key_table
from tlview.ui.keys_first import KeyFrameScreen, KeysFirst, is_user_input
from tlview.ui.logs_app import LogsApp
from tlview.ui.messages import (
    FollowState,
    IndexFinished,
    IndexGrew,
    IndexReplaced,
    JobDiagnosed,
    JobEnded,
    JumpToCompile,
    PayloadMatches,
    WorkDone,
    while_shown,
)
from tlview.ui.pane import Selection
from tlview.ui.search import SearchBar
from tlview.ui.status_line import StatusFacts, StatusLine
from tlview.ui.time_jump_screen import TimeJumpScreen
from tlview.ui.tree_note import TreeNote
from tlview.views.bookmarks import Bookmarks
from tlview.views.filters import Filter, missing_rank
from tlview.views.tree import TreeEntry, TreeModel

# The main thread shows what the index gained in slices of about this long, SLICE_COMPILES
# compiles at a time, then serves keys and frames for SLICE_PAUSE: 20,000 ranks shown at once held
# every key for 5.6 s. A key read during a slice ends it after the part being shown (25 compiles:
# 100 at 10,000 ids took up to 30 ms).
SLICE_SECONDS = 0.05
SLICE_COMPILES = 25
SLICE_PAUSE = 0.02
VIEWS_EVERY = 0.25  # seconds at least between two refreshes of the views while a backlog is shown
VIEWS_SHARE = 10  # ... and ten times what the last one took


class TlviewApp(LogsApp):
    """The explorer. What it does on a key or a message is done by the objects it owns (each
    built with the app): the keys' moment (keys_first), the tree's filter (filtering), following
    a live job (following), the jumps (jumping), and those it shares with the compare view
    (logs_app.LogsApp: the footer's voice, the filter's keys, the panes' keys, the payload's
    actions, `m`/`o`); its `action_*` and `on_*` pass them on."""

    CSS_PATH = Path(__file__).parent / "tlview.tcss"
    TITLE = "tlview"
    BINDINGS = BINDINGS
    ALLOW_IN_MAXIMIZED_VIEW = "KeyHints, StatusLine, SearchBar"  # what it says, the counts, a search
    # the cursor goes to the newest compile id as they come (Following turns it off)
    auto_follow: reactive[bool] = reactive(False, init=False)

    def __init__(self, path: str, flt: Filter | None = None, latest: bool = False, follow: bool = False,
                 poll: bool = False, kind: str | None = None, job=None, input_ended=None,
                 name: str | None = None, private_path: bool = False, nothing_came=None,
                 source_roots=()) -> None:
        super().__init__(flt, key_table)
        self.key_moment = KeysFirst()
        self.tree_filter = ExplorerFilter(self)
        self.following = Following(self)
        self.jumps = Jumps(self)
        self.bookmarks = Bookmarks()  # this session's (M): the tree marks them, ' and " go to them
        self.sources = SourceFiles(list(source_roots))  # the user's files, for their lines at each problem
        # a pipe: true once it closed with no log line in it; the app then ends (nothing to explore)
        self.nothing_came = nothing_came
        self.nothing_came_in = False
        self.path = path
        self.latest = latest
        self.job = job  # a --run job: its end is announced
        self.live = LiveIndex(path, force_polling=poll, kind=kind, ended=input_ended or (lambda: False),
                              name=name if private_path else None) if follow else None
        self.model = TreeModel(self.live.index if self.live is not None else Index(), self.flt, live=follow)
        self.running = RunningTotals(self.model.index)  # the status line's counts
        self._backlog = Backlog()  # changed compiles not shown yet (refresh_views)
        self._slice_due = False
        self._views_next = False  # a slice was shown: the views come in the next callback
        self._views_at = 0.0  # time.monotonic() when the status line and panes were last brought up to date
        self._views_every = VIEWS_EVERY
        self._applied: set[Compile] = set()  # compiles shown in the tree since then
        self._settler = Settler()  # the index and tree out of the cyclic GC's way
        self.events = LiveEvents()
        self.set_reactive(TlviewApp.auto_follow, follow)
        self.facts = StatusFacts(name or Path(path).name or path, live="live" if follow else "")
        self.caught_up = not follow
        self.new_unseen = 0
        self.job_verdict: JobVerdict | None = None  # what happened to the job (JobDiagnosed)
        self.worst: WorstProblem | None = None  # the run's worst problem (JobDiagnosed)
        # the first screen opens on it and its pane; TLVIEW_FIRST_SCREEN=top opens on the tree's
        # first compile id, as tests of other things were written for (tests/conftest.py)
        self.opens_on_worst = os.environ.get("TLVIEW_FIRST_SCREEN") != "top"

    @property
    def index(self) -> Index:
        return self.model.index

    def rank_groups(self) -> RankGroups:
        """The tree's groups, made as it was filled (the index's, grouped now, before)."""
        return self.model.ranks or super().rank_groups()

    @property
    def tree(self) -> FrameTree:  # type: ignore[override]  # (DOMNode.tree: a rich Tree of the DOM, unused here)
        return self.query_one(FrameTree)

    def compose(self) -> ComposeResult:
        yield Headline(id="headline")
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield FrameTree(self.bookmarks, id="tree")
                yield TreeNote(id="tree-note")
            yield DetailPane(self._selection(None), mount_later=self.filling, id="detail")
        yield FilterBar(self.flt, id="filter-input")
        yield SearchBar(id="search-input")
        yield StatusLine()
        yield KeyHints()

    def on_mount(self) -> None:
        if not self.query(FrameTree):
            return  # ended before it was composed (Textual mounts nothing once exiting): a signal
        self.tree.show_model(self.model)
        self.tree.focus()
        self.call_after_refresh(gc_pauses.started, True)  # (cli.main paused the GC)
        self._collections = FullCollections(lambda: max(self.key_moment.key_at, self._views_at), busy=self.filling)
        self.set_interval(IDLE / 2, self._collections.tick)
        self.watch(self.screen, "maximized", self.pane_reading.maximized_changed, init=False)
        if self.live is not None:
            work = partial(workers.follow_logs, self, self.live, self.job)
        else:
            work = partial(workers.index_logs, self, self.index, self.path, self.latest)
        self.run_worker(work, name="indexing", group="index", thread=True, exclusive=True,
                        exit_on_error=False)

    def on_unmount(self) -> None:
        if collections := getattr(self, "_collections", None):  # (none if mounting failed)
            collections.stop()

    # ---- what the workers report ---------------------------------------------------------------

    def on_index_grew(self, message: IndexGrew) -> None:
        self.set_facts(done=message.done, total=message.total)
        self.refresh_views()

    def on_index_finished(self, message: IndexFinished) -> None:
        self.set_facts(finished=True)
        self.tree_filter.fold_ranks(message.ranks, message.folded)
        if problem := missing_rank(self.flt.rank, self.index.ranks()):
            self.notify(problem, severity="error", timeout=8)
        self.refresh_views()

    def on_job_diagnosed(self, message: JobDiagnosed) -> None:
        """What happened, said on the headline (the job's verdict on the status line too). On the
        first screen (no key pressed yet), the cursor goes to it, once: a hang or death to where
        it parted, its Run pane telling why; else the run's worst problem and its pane (not
        while following: the cursor follows the newest compile id)."""
        first = self.job_verdict is None and message.verdict is not None
        first_worst = self.worst is None and message.worst is not None
        self.job_verdict = message.verdict
        self.worst = message.worst or self.worst
        self.set_facts(job=message.verdict.said if message.verdict else "")
        if message.worst is not None:
            self.query_one(Headline).show(message.worst)
        if self.key_moment.key_at:
            return  # the user moved: the cursor is theirs
        if first:
            self.jumps.to_job_verdict(quiet=True)
        elif first_worst and self.opens_on_worst and self.live is None and message.worst is not None \
                and message.worst.kind is not None:
            self.jumps.to_worst(message.worst)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """The app's own workers: a failed one is shown (never "no compile ids")."""
        if event.state is WorkerState.ERROR:
            worker = event.worker
            text = f"{worker.name} failed: {type(worker.error).__name__}: {worker.error}"
            self.set_facts(**{"failure" if worker.group == "index" else "pane_failure": text})
            self.notify(one_line(text, 300), title="error", severity="error", timeout=15, markup=False)

    def on_work_done(self, message: WorkDone) -> None:
        """A widget's worker: a failed one is shown, toast and status line, until its pane loads."""
        where = next((t for w in message.widget.ancestors_with_self if (t := pane_title(w))), None)
        said = f"the {where} pane could not load" if where else "a view could not be drawn"
        if message.error is not None:
            text = f"{said}: {type(message.error).__name__}: {message.error}"
            self.set_facts(pane_failure=text)
            self.notify(one_line(text, 300), title="error", severity="error", timeout=15, markup=False)
        elif self.facts.pane_failure.startswith(said):
            self.set_facts(pane_failure="")  # it loaded since

    # ---- showing what changed ------------------------------------------------------------------

    @while_shown
    def refresh_views(self) -> None:
        """Bring the views up to what the index holds, SLICE_SECONDS of it at a time: the rest
        waits in the backlog for the next slice, and keys and frames are served in between."""
        fresh = self.index.take_changes()
        if self.running.index is not self.index:  # a folder indexed again: count it afresh
            self.running = RunningTotals(self.index)
            self._backlog = Backlog(fresh)
        else:
            self._backlog.add(fresh)
        if self._backlog and self.facts.shown_all:  # (the views may come a callback later)
            self.set_facts(shown_all=False)
        if self._backlog and self.keys_first():
            self._slice_later()
            return
        changes: list[Compile] = []
        begun, took = time.monotonic(), 0.0  # took: the last part's time (one to end past the slice waits)
        filling_in = self.filling()  # while the first read goes on, more is to come: the tree is laid out now and then
        while self._backlog and (not changes or (time.monotonic() + took < begun + SLICE_SECONDS
                                                  and not self.keys_first())):
            part, started = self._backlog.take(SLICE_COMPILES), time.monotonic()  # (one at least; a key read ends it)
            self.running.add(part)
            self.tree.apply(self.model.apply(part), more_to_come=bool(self._backlog) or filling_in)
            changes += part
            took = time.monotonic() - started
        self.tree.lay_out_when_due(more_to_come=bool(self._backlog) or filling_in)
        self._applied.update(changes)
        if self._backlog or self.keys_first():
            self._slice_later()  # the rest, or the views once the key read now is shown
        if self.live is not None:
            self.following.tell_news(changes)
        if self.keys_first() or self._backlog and time.monotonic() - self._views_at < self._views_every:
            return  # while a backlog is shown, the views follow now and then (they are O(files))
        if not changes or time.monotonic() - begun < SLICE_SECONDS / 5:
            self._update_views()
        else:  # a key read meanwhile comes first (slice and views held one for 60-100 ms at 20,000 ranks)
            self._views_next = True
            self._slice_later()

    def _update_views(self) -> None:
        """The cursor, panes, tree note and status line (after a slice, in a callback of their own)."""
        views_from = self._views_at = time.monotonic()
        if self.auto_follow and (newest := self.model.newest_compile()) is not None:
            if self.tree.entry is not newest:
                self.tree.select_key(newest.key)
        elif self.tree.entry is None and (entries := self.model.compile_entries()):
            self.tree.select_key(entries[0].key)
        entry = self.tree.entry
        if not self._sync_detail() and entry is not None and (  # (another entry: filled afresh once)
                entry.compile in self._applied or self.detail.active == "run"):
            self.detail.refresh_entry()  # what it shows grew
        self._applied.clear()
        self.tree_filter.show_tree_note()
        self._settler.after_views(self.index, len(self.model.by_key), whole=not (self._backlog or self.filling()))
        self.set_facts(files=len(self.index.sources), totals=self.running.snapshot(),
                        ranks=self.index.numbered_ranks(),
                        filter=self.flt.describe(), shown_all=not self._backlog)
        # at most a tenth of the main thread's time: 20,000 rank files took 15-30 ms each time
        self._views_every = max(VIEWS_EVERY, VIEWS_SHARE * (time.monotonic() - views_from))

    def _slice_later(self) -> None:
        if not self._slice_due:
            self._slice_due = True
            self.set_timer(SLICE_PAUSE, self._next_slice)

    def filling(self) -> bool:
        return not self.caught_up if self.live is not None else not self.facts.finished

    def _next_slice(self) -> None:
        self._slice_due = False
        try:
            if self._views_next and not self.keys_first():  # the views' turn, after a slice
                self._views_next = False
                self._update_views()
                if self._backlog:
                    self._slice_later()
            else:
                self.refresh_views()
        except NoMatches:  # the app is ending: its screen went before this timer fired
            pass

    def set_facts(self, **changes) -> None:
        if self.live is not None and self.facts.live != "ended":
            changes.setdefault("live", "live" if self.auto_follow else "paused")
        self.facts = replace(self.facts, **changes)
        self.query_one(StatusLine).facts = self.facts

    def show_model(self, model: TreeModel) -> None:
        """A new tree (a filter, a rank, a re-indexed folder, the end of the input): the cursor
        stays on its compile id, and the panes show that entry of the new model."""
        self.model = model
        self.tree.show_model(model)
        self._sync_detail()

    def _sync_detail(self) -> bool:
        """The panes show the entry under the cursor (True: another one). A rebuilt tree keeps its
        cursor row, so no highlight message tells that the entry under it changed: compare."""
        selection = self._selection(self.tree.entry)
        if selection != self.detail.selection:
            self.detail.show(selection)
            return True
        return False

    def _selection(self, entry: TreeEntry | None) -> Selection:
        return Selection(self.index, entry, self.flt.rank if self.flt.rank is not None else ..., self.sources)

    # ---- selection and moving ------------------------------------------------------------------

    @on(Tree.NodeHighlighted, "#tree")
    @while_shown
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        if event.node is not self.tree.cursor_node:
            return  # the cursor moved on since (its entry is shown, or its message comes): 0/0 came after 0/1
        entries = self.model.compile_entries()
        if entries and event.node.data is entries[-1]:
            self.new_unseen = 0
        self.detail.show(self._selection(event.node.data))

    # ---- keys first (keys_first.KeysFirst) --------------------------------------------------------

    @property
    def key_at(self) -> float:
        return self.key_moment.key_at

    @key_at.setter
    def key_at(self, at: float) -> None:
        self.key_moment.key_at = at

    @property
    def held_until(self) -> float:
        return self.key_moment.held_until

    def user_input(self) -> None:
        """A key or click was read (the driver's input thread calls it where it reads one)."""
        self.key_moment.user_input()

    def keys_first(self) -> bool:
        return self.key_moment.keys_first()

    def reading(self) -> bool:
        return self.key_moment.reading()

    def hold_back(self, seconds: float) -> None:
        self.key_moment.hold_back(seconds)

    def steps_back(self) -> bool:
        """Whether the other threads step back now: a key comes first, or the UI holds them. Only
        while the logs are read (`filling`) is there a thread to step back for keys (a pane's own
        loader, after the key that opened it, waited 150 ms for nothing)."""
        return self.filling() and (self.keys_first() or self.key_moment.holding())

    def get_default_screen(self) -> KeyFrameScreen:
        return KeyFrameScreen(self.key_moment, id="_default")

    async def on_event(self, event: events.Event) -> None:
        if is_user_input(event):  # (also where no driver of ours reads them: tests, other drivers)
            self.user_input()
            self.following.user_event(event)
        await super().on_event(event)
        if isinstance(event, events.Key):
            self.key_moment.frame_for_key = True

    # ---- the filter (filtering.ExplorerFilter; its keys: LogsApp) --------------------------------

    def apply_filter(self, flt: Filter) -> None:
        self.tree_filter.apply(flt)

    def action_cycle_rank(self, step: int) -> None:
        self.tree_filter.cycle_rank(step)

    @while_shown
    def on_payload_matches(self, message: PayloadMatches) -> None:
        self.tree_filter.payload_matches(message)

    # ---- following a live job (following.Following) -----------------------------------------------

    @while_shown
    def on_index_replaced(self, message: IndexReplaced) -> None:
        self.following.index_replaced(message)

    @while_shown
    def on_follow_state(self, message: FollowState) -> None:
        self.following.follow_state(message)

    def on_job_ended(self, message: JobEnded) -> None:
        self.following.job_ended(message)

    def watch_auto_follow(self) -> None:
        self.set_facts()  # live / paused

    def action_toggle_follow(self) -> None:
        self.following.toggle()

    # ---- jumps (jumping.Jumps) -----------------------------------------------------------------

    def action_jump(self, kind: str, step: int) -> None:
        self.jumps.jump(kind, step)

    def action_toggle_bookmark(self) -> None:
        entry = self.tree.entry
        if entry is None or entry.node is None:
            self.notify("M bookmarks a compile id: move to one first", timeout=2)
            return
        marked = self.bookmarks.toggle(entry.key)
        self.tree.relabel(entry.key)
        if marked:
            shown = self.bookmarks.shown(self.model)
            self.notify(f"bookmarked {entry.title}: bookmark {shown.index(entry) + 1} of {len(shown)} "
                        "(' and \" go to them)", timeout=2, markup=False)
        else:
            self.notify(f"bookmark of {entry.title} removed", timeout=2, markup=False)

    def action_jump_to_time(self) -> None:
        """`t`: the run's compile ids over time; the cursor goes to the first begun at the time chosen."""
        times = run_times(self.index)

        def chosen(offset_s: float | None) -> None:
            if offset_s is not None:
                self.jumps.to_time(times, offset_s)

        self.push_screen(TimeJumpScreen(times), chosen)

    def open_entry(self, entry: TreeEntry) -> None:
        """Enter in the tree (FrameTree.open_node)."""
        self.jumps.open_entry(entry)

    def on_jump_to_compile(self, message: JumpToCompile) -> None:
        self.jumps.jump_to_node(message.node)
