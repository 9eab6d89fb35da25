"""The tlview TUI: a frame tree on the left, the selected compile id's panes on the right.

The index is filled by a thread worker in chunks (the first screen comes at once, a 1 GB trace
fills in behind it with a progress bar); a timer re-renders the tree when the index grew.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterable

from rich.text import Text
from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Input, ProgressBar, Static, Tree
from textual.worker import get_current_worker

from tlview.model.filters import CATEGORIES, Filter, FilterError
from tlview.model.index import Index
from tlview.model.live import LiveIndex
from tlview.model.parallel import index_with_pool
from tlview.model.search import search_payloads
from tlview.model.tree import TreeEntry, TreeModel, build_tree
from tlview.source.discover import find_logs
from tlview.source.trace_file import TraceFile

from tlview.textsafe import one_line, visible
from tlview.ui.detail import TABS, DetailPane
from tlview.ui.frame_tree import FrameTree
from tlview.ui.help_screen import HelpScreen
from tlview.ui.messages import IndexProgress, JumpToCompile

CHUNK = 16 << 20  # bytes indexed between two progress reports (about 30 ms)
POOL_BYTES = 64 << 20  # trace files from this size are indexed by a process pool
USER_MOVES = {"up", "down", "j", "k", "pageup", "pagedown", "home", "end", "g", "G", "left",
              "right", "h", "l", "b", "B", "r", "R", "x", "X", "enter"}
TICK = 0.25  # seconds between re-renders of a growing index


def is_break(entry: TreeEntry) -> bool:
    node = entry.node
    return bool(node.effective_graph_breaks()) or (entry.kind == "compile" and entry.status == "break")


def is_recompile(entry: TreeEntry) -> bool:
    return entry.kind == "compile" and entry.node.cid.is_recompile


def is_error(entry: TreeEntry) -> bool:
    return entry.kind == "compile" and entry.status == "error"


JUMPS = {"break": is_break, "recompile": is_recompile, "error": is_error}


class TlviewApp(App[int]):
    CSS_PATH = Path(__file__).parent / "tlview.tcss"
    TITLE = "tlview"
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", key_display="?", id="help"),
        Binding("slash", "filter", "Filter", key_display="/", id="filter"),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="clear-filter"),
        Binding("b", "jump('break', 1)", "Next break", id="next-break"),
        Binding("B", "jump('break', -1)", "Prev break", show=False, id="prev-break"),
        Binding("r", "jump('recompile', 1)", "Next recompile", id="next-recompile"),
        Binding("R", "jump('recompile', -1)", "Prev recompile", show=False, id="prev-recompile"),
        Binding("x", "jump('error', 1)", "Next error", id="next-error"),
        Binding("X", "jump('error', -1)", "Prev error", show=False, id="prev-error"),
        Binding("f", "toggle_follow", "Follow", id="toggle-follow"),
        Binding("right_square_bracket", "cycle_rank(1)", "Next rank", key_display="]", show=False,
                id="next-rank"),
        Binding("left_square_bracket", "cycle_rank(-1)", "Prev rank", key_display="[", show=False,
                id="prev-rank"),
        Binding("y", "copy_payload", "Copy", id="copy"),
        Binding("e", "open_external", "Pager", id="open-external"),
        *[Binding(str(i + 1), f"show_tab('{tab_id}')", title, show=False, id=f"tab-{tab_id}")
          for i, (tab_id, title, _) in enumerate(TABS)],
    ]

    def __init__(self, path: str, flt: Filter | None = None, latest: bool = False,
                 index: Index | None = None, follow: bool = False, poll: bool = False,
                 kind: str | None = None, job=None) -> None:
        super().__init__()
        self.path = path
        self.latest = latest
        self.follow = follow
        self.live = LiveIndex(path, force_polling=poll, kind=kind) if follow else None
        self.index = self.live.index if self.live else (index or Index())
        self.job = job  # a --run job: its end is announced
        self.flt = flt or Filter()
        self.auto_follow = follow  # the cursor goes to the newest compile id as they come
        self._waiting = ""
        self._caught_up = not follow
        self._seen_keys: set = set()
        self._announced: set = set()
        self._quiet_once = False  # after a rebuild, what is there again is not news
        self._new_unseen = 0
        self._selected_signature = None
        self._run_generation = -1
        self.model: TreeModel | None = None
        self._generation = -1
        self._progress = (0, 0, False)
        self._search_note = ""
        self._filter_dirty = True
        self._status_key = None

    # ---- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield FrameTree(id="tree")
                yield Static(id="tree-note")
            yield DetailPane(self.index, id="detail")
        yield Input(placeholder="filter: recompiles graph_breaks errors rank:N or text  (Enter: keep, Esc: clear)",
                    id="filter-input")
        with Horizontal(id="status-line"):
            yield Static(id="status")
            yield ProgressBar(id="progress", show_eta=False, show_percentage=True)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#filter-input").display = False
        if self.flt.active:
            self.query_one("#filter-input", Input).value = self.flt.describe().replace("'", "")
        self.query_one(FrameTree).focus()
        self.set_interval(TICK, self._tick)
        if self.follow:
            self.follow_logs()
        else:
            self.index_logs()

    # ---- indexing --------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def index_logs(self) -> None:
        worker = get_current_worker()
        found, notes = find_logs(self.path, latest=self.latest)
        self.index.notes.extend(notes)
        for log in found:
            self.index.add_log(log)
        total = sum(os.path.getsize(s.path) for s in self.index.sources) or 1

        def progress() -> None:
            self.post_message(IndexProgress(self.index.bytes_read, total))

        for source in list(self.index.sources):
            # Big trace files are indexed by a process pool: faster, and this process's GIL stays
            # with the UI. The rest is read here in chunks.
            if isinstance(source, TraceFile) and os.path.getsize(source.path) >= POOL_BYTES:
                source.size = os.path.getsize(source.path)
                try:
                    index_with_pool(self.index, source, progress, lambda: worker.is_cancelled)
                except (OSError, RuntimeError) as exc:  # e.g. no processes allowed: go on here
                    self.index.notes.append(f"{source.path}: indexed in one process ({exc})")
        while not worker.is_cancelled:
            read = self.index.refresh(limit=CHUNK)
            progress()
            if read == 0:
                break
        self.index.finish()
        self.post_message(IndexProgress(total, total, finished=True))

    @work(thread=True, exclusive=True, group="index", exit_on_error=False)
    def follow_logs(self) -> None:
        """Follow the path: new files, appends, replaced files; wake on file events or a poll."""
        worker = get_current_worker()
        live = self.live
        live.follower.start()
        pooled: set[str] = set()
        job_done = False
        try:
            while not worker.is_cancelled:
                update = live.step(read=False)
                if update.rebuilt:
                    pooled.clear()
                    self.call_from_thread(self._use_index, live.index, update.messages)
                self._waiting = update.waiting
                for source in list(live.index.sources):
                    if (isinstance(source, TraceFile) and source.scanned_to == 0
                            and source.path not in pooled and os.path.getsize(source.path) >= POOL_BYTES):
                        pooled.add(source.path)
                        source.size = os.path.getsize(source.path)
                        try:
                            index_with_pool(live.index, source, lambda: None, lambda: worker.is_cancelled)
                        except (OSError, RuntimeError) as exc:
                            live.index.notes.append(f"{source.path}: indexed in one process ({exc})")
                read = live.index.refresh(limit=CHUNK)
                if read or update.new_files or update.rebuilt:
                    self.post_message(IndexProgress(live.index.bytes_read, live.index.bytes_total))
                if read >= CHUNK:
                    continue  # more is there now: no waiting
                if not self._caught_up:
                    self._caught_up = True
                    self.post_message(IndexProgress(live.index.bytes_read, live.index.bytes_total))
                if self.job is not None and not job_done and (code := self.job.poll()) is not None:
                    job_done = True
                    self.call_from_thread(self.notify, f"the job exited with code {code}; its logs stay "
                                          f"in {self.job.folder}", title="job finished", timeout=10,
                                          markup=False)
                live.follower.wait()
        finally:
            live.follower.stop()

    def _use_index(self, index: Index, messages: list[str]) -> None:
        """The live index was rebuilt (a file was truncated or replaced)."""
        self.index = index
        self.query_one(DetailPane).index = index
        self._generation = -1
        self._filter_dirty = True
        self._seen_keys.clear()
        self._announced.clear()
        self._quiet_once = True
        for message in messages:
            self.notify(message, title="indexed again", severity="warning", timeout=6, markup=False)

    def on_index_progress(self, message: IndexProgress) -> None:
        self._progress = (message.done, message.total, message.finished)
        bar = self.query_one(ProgressBar)
        bar.update(total=message.total, progress=message.done)
        if message.finished or (self.follow and self._caught_up):
            bar.display = False
            ranks = [r for r in self.index.ranks() if r is not None]
            if message.finished and self.flt.rank is not None and self.flt.rank not in ranks:
                self.notify(f"rank {self.flt.rank} is not in these logs; ranks: "
                            f"{', '.join(map(str, ranks)) or 'none'}", severity="error", timeout=8)
            self._tick()
        elif self.follow or self.model is None or not self.model.roots:
            self._tick()  # new compile ids: show them now, not at the next tick

    def _tick(self) -> None:
        try:
            self._update_views()
        except NoMatches:  # a timer or message arriving while the app shuts down
            pass

    def _update_views(self) -> None:
        generation = self.index.generation
        if generation != self._generation or self._filter_dirty:
            rebuild = self._filter_dirty
            self._generation = generation
            self._filter_dirty = False
            self._render_tree(rebuild)
        self._render_status()

    def _render_tree(self, rebuild: bool) -> None:
        tree = self.query_one(FrameTree)
        self.model = build_tree(self.index, self.flt, live=self.follow)
        tree.show_model(self.model, rebuild=rebuild)
        entries = self.model.compile_entries()
        if self.follow:
            self._announce_new(entries)
        note = self.query_one("#tree-note", Static)
        text = Text()
        if self.flt.active:
            text.append(f"filter: {self.flt.describe()} — {self.model.shown} shown, "
                        f"{self.model.hidden} hidden{self._search_note}", style="cyan")
        elif self.model.shown == 0 and (self._progress[2] or self._caught_up):
            text.append(self._waiting or "no compile ids in these logs", style="yellow")
        if self._new_unseen and not self.auto_follow:
            text.append(f"{' · ' if text else ''}+{self._new_unseen} new — f: follow the newest",
                        style="bold green")
        note.update(text)
        if self.auto_follow and entries:
            newest = max((e for e in entries if e.kind == "compile"), key=lambda e: e.node.seq,
                         default=None)
            cursor_key = tree.cursor_node.data.key if tree.cursor_node and tree.cursor_node.data else None
            if newest is not None and cursor_key != newest.key:
                tree.select_key(newest.key)
        elif (tree.cursor_node is None or tree.cursor_node.data is None) and entries:
            tree.select_key(entries[0].key, move_only=True)
        detail = self.query_one(DetailPane)
        if detail.active == "run" and self._progress_changed():
            detail.refresh_entry()  # the run's costs and rank divergence, kept live
        cursor = tree.cursor_node.data if tree.cursor_node is not None else None
        if detail.entry is not None and cursor is not None:
            signature = _signature(cursor)
            # The detail pane is re-filled only when what it shows grew: reading is not disturbed.
            if cursor is not detail.entry and signature != self._selected_signature:
                detail.entry = cursor
                detail.refresh_entry()
            elif cursor is not detail.entry:
                detail.entry = cursor
            self._selected_signature = signature

    def _progress_changed(self) -> bool:
        seen, self._run_generation = self._run_generation, self.index.generation
        return seen != self._run_generation

    def _announce_new(self, entries: list[TreeEntry]) -> None:
        """Toast recompiles, graph breaks and failures as they arrive (after the first catch-up).
        A compile id often shows up before its reason does: each (compile id, event) is told once."""
        fresh = [e for e in entries if e.kind == "compile" and e.key not in self._seen_keys]
        self._seen_keys.update(e.key for e in entries if e.kind == "compile")
        if not self.auto_follow and self._caught_up:
            self._new_unseen += len(fresh)
        events_ = []
        for entry in entries:
            if entry.kind != "compile":
                continue
            node = entry.node
            what = ("failed" if entry.status == "error" else
                    "recompiled" if node.effective_recompile_reasons() else
                    "graph break" if is_break(entry) else None)
            if what is None or (entry.key, what) in self._announced:
                continue
            self._announced.add((entry.key, what))
            if self._caught_up and not self._quiet_once:
                events_.append((("failed", "recompiled", "graph break").index(what), what, node))
        self._quiet_once = False
        events_.sort(key=lambda item: item[0])  # failures first: at most three toasts at once
        shown = len(events_)
        for _, what, node in events_[:3]:
            reason = node.effective_recompile_reasons()[:1]
            detail = reason[0].summary if reason and what == "recompiled" else (node.function() or "")
            self.notify(one_line(f"[{node.id}] {what}: {detail}", 200), title=what, markup=False,
                        severity="error" if what == "failed" else "warning", timeout=5)
        if shown > 3:
            self.notify(f"and {shown - 3} more", timeout=5)

    def _render_status(self) -> None:
        index = self.index
        key = (index.generation, self._progress, self.flt.describe(), self.auto_follow, self._waiting)
        if key == self._status_key:
            return  # Static.update re-lays out the screen: only when something changed
        self._status_key = key
        totals = index.totals()
        done, total, finished = self._progress
        files = len(index.sources)
        ranks = [r for r in index.ranks() if r is not None]
        text = Text()
        text.append(f" {visible(os.path.basename(os.path.normpath(self.path)))}", style="bold")
        text.append(f" · {files} file{'s' if files != 1 else ''}")
        if ranks:
            text.append(f" · ranks {','.join(map(str, ranks))}")
        text.append(f" · {totals.records:,} records · {totals.compile_ids} compile ids")
        text.append(f" · {totals.recompiles} recompiles", style="cyan" if totals.recompiles else "")
        text.append(f" · {totals.graph_breaks} graph breaks", style="yellow" if totals.graph_breaks else "")
        text.append(f" · {totals.errors} errors", style="bold red" if totals.errors else "")
        if totals.problems:
            text.append(f" · {totals.problems} bad lines/md5", style="red")
        if self.flt.active:
            text.append(f" · filter: {self.flt.describe()}", style="cyan")
        if self.follow:
            if self._waiting and not files:
                text.append(f" · {self._waiting}", style="bold yellow")
            else:
                text.append(" · ● LIVE" if self.auto_follow else " · ● live (paused: f)",
                            style="bold green" if self.auto_follow else "green")
        elif not finished and total:
            text.append(f" · indexing {done * 100 // total}%", style="bold")
        self.query_one("#status", Static).update(text)

    # ---- selection -------------------------------------------------------------------------

    @on(Tree.NodeHighlighted, "#tree")
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        if event.node.data is not None and event.node.data.kind == "compile":
            entries = self.model.compile_entries() if self.model else []
            if entries and event.node.data is entries[-1]:
                self._new_unseen = 0
        self._selected_signature = _signature(event.node.data)
        try:
            self.query_one(DetailPane).show(event.node.data)
        except NoMatches:  # a highlight that arrives while the app shuts down
            pass

    async def on_event(self, event: events.Event) -> None:
        # A user who moves in the tree is reading: stop moving the cursor to the newest compile id.
        if self.auto_follow and self._caught_up and (
                (isinstance(event, events.Key) and event.key in USER_MOVES) or isinstance(event, events.Click)):
            self.auto_follow = False
            self._status_key = None
        await super().on_event(event)

    def action_toggle_follow(self) -> None:
        if not self.follow:
            self.notify("not following: open with --follow to watch a running job", timeout=3)
            return
        self.auto_follow = not self.auto_follow
        self._new_unseen = 0
        self._status_key = None
        self._filter_dirty = True
        self._tick()

    @on(Tree.NodeSelected, "#tree")
    def _selected(self, event: Tree.NodeSelected) -> None:
        if event.node.data is not None and event.node.data.node is not None:
            self.query_one(DetailPane).query_one(f"#{self.query_one(DetailPane).active}-pane").focus()

    def on_jump_to_compile(self, message: JumpToCompile) -> None:
        tree = self.query_one(FrameTree)
        if not tree.select_key(message.key):
            self.notify(f"[{message.key[2]}] is hidden by the filter", severity="warning", markup=False)
            return
        tree.focus()

    def action_jump(self, kind: str, step: int) -> None:
        tree = self.query_one(FrameTree)
        current = tree.cursor_node.data if tree.cursor_node else None
        target = self.model.next_matching(current, JUMPS[kind], step) if self.model else None
        if target is None:
            self.notify(f"no {kind}s" + (" under this filter" if self.flt.active else ""), timeout=2)
            return
        tree.select_key(target.key)
        tree.focus()

    def action_cycle_rank(self, step: int) -> None:
        """The rank switcher: all ranks -> rank 0 -> rank 1 -> ... -> all ranks."""
        ranks = [r for r in self.index.ranks() if r is not None]
        if len(ranks) < 2:
            self.notify("these logs have one rank", timeout=2)
            return
        choices = [None, *ranks]
        at = choices.index(self.flt.rank) if self.flt.rank in choices else 0
        rank = choices[(at + step) % len(choices)]
        self.flt = Filter(list(self.flt.categories), rank, self.flt.text, self.flt.payload_matches)
        self._filter_dirty = True
        self._status_key = None
        self._tick()
        self.query_one(DetailPane).refresh_entry()
        self.notify("all ranks" if rank is None else f"rank {rank}", timeout=1.5)

    def action_show_tab(self, tab_id: str) -> None:
        self.query_one(DetailPane).active = tab_id

    # ---- filter ----------------------------------------------------------------------------

    def action_filter(self) -> None:
        box = self.query_one("#filter-input", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#filter-input")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.apply_filter(event.value)

    @on(Input.Submitted, "#filter-input")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        self.query_one(FrameTree).focus()

    def apply_filter(self, expression: str) -> None:
        try:
            flt = Filter.parse(expression, strict_words=False)
        except FilterError as exc:  # e.g. "rank:" while it is being typed
            self.query_one("#tree-note", Static).update(Text(str(exc), style="yellow"))
            return
        self.flt = flt
        self._search_note = ""
        self._filter_dirty = True
        self._tick()
        if self.flt.text:
            self.search_payloads(self.flt)

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter-input", Input)
        if not self.flt.active and not box.display:
            return
        box.value = ""
        box.display = False
        self.apply_filter("")
        self.query_one(FrameTree).focus()

    @work(thread=True, exclusive=True, group="search", exit_on_error=False)
    def search_payloads(self, flt: Filter) -> None:
        worker = get_current_worker()
        last = 0.0
        found = 0
        for node, done, total in search_payloads(self.index, flt.text, lambda n: flt.matches(self.index, n),
                                                 lambda: worker.is_cancelled or flt is not self.flt):
            if node is not None:
                flt.payload_matches.add(id(node))
                found += 1
            if time.monotonic() - last > TICK or done == total:
                last = time.monotonic()
                note = f" · searching payloads {done * 100 // max(total, 1)}%" if done < total else \
                    f" · {found} more by payload"
                self.call_from_thread(self._search_progress, flt, note)

    def _search_progress(self, flt: Filter, note: str) -> None:
        if flt is self.flt:
            self._search_note = note
            self._filter_dirty = True

    # ---- payload actions -------------------------------------------------------------------

    def action_copy_payload(self) -> None:
        text = self.query_one(DetailPane).payload_text()
        if not text:
            self.notify("nothing to copy here", timeout=2)
            return
        self.copy_to_clipboard(text)
        self.notify(f"copied {text.count(chr(10)) + 1:,} lines (OSC 52)", timeout=2)

    def action_open_external(self) -> None:
        text = self.query_one(DetailPane).payload_text()
        if not text:
            self.notify("nothing to open here", timeout=2)
            return
        command = os.environ.get("PAGER") or os.environ.get("EDITOR") or "less"
        # In the system temp folder: tlview never writes next to the logs it reads.
        with tempfile.NamedTemporaryFile("w", suffix=".py", prefix="tlview-", delete=False) as f:
            f.write(text)
        try:
            with self.suspend():
                subprocess.call([*command.split(), f.name])
        except (OSError, Exception) as exc:  # noqa: BLE001 - a missing pager is a message, not a crash
            self.notify(f"could not run {command}: {exc}", severity="error", markup=False)
        finally:
            os.unlink(f.name)

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    # ---- command palette -------------------------------------------------------------------

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for word in CATEGORIES:
            yield SystemCommand(f"Filter: {word}", f"show only compile ids with {word}",
                                lambda w=word: self._set_filter(w))
        yield SystemCommand("Filter: clear", "show every compile id", self.action_clear_filter)
        for kind in JUMPS:
            yield SystemCommand(f"Jump: next {kind}", f"select the next compile id with a {kind}",
                                lambda k=kind: self.action_jump(k, 1))
        for tab_id, title, _ in TABS:
            yield SystemCommand(f"Show: {title[2:]}", f"open the {title[2:]} pane",
                                lambda t=tab_id: self.action_show_tab(t))
        for rank in [r for r in self.index.ranks() if r is not None]:
            yield SystemCommand(f"Rank: {rank}", f"show rank {rank} only", lambda r=rank: self._set_filter(f"rank:{r}"))
        yield SystemCommand("Copy payload", "copy the shown payload to the clipboard", self.action_copy_payload)
        yield SystemCommand("Keys", "list every key", self.action_help)

    def _set_filter(self, expression: str) -> None:
        box = self.query_one("#filter-input", Input)
        box.display = True
        box.value = expression


def _signature(entry: TreeEntry | None) -> tuple | None:
    """What the detail pane shows of an entry, in a few numbers: it changes when the node grew."""
    if entry is None or entry.node is None:
        return None
    node = entry.node
    return (id(node), len(node.artifacts), node.metrics is None, len(node.graph_breaks),
            len(node.recompile_reasons), len(node.text_records), len(node.dynamic), entry.status)


def run_app(path: str, flt: Filter, latest: bool = False) -> int:
    app = TlviewApp(path, flt, latest=latest)
    app.run()
    return app.return_code or 0


def run_live(flt: Filter, path: str | None = None, demo: bool = False, run: list[str] | None = None,
             poll: bool = False, logs: str = "") -> int:
    """`--follow PATH`, `--follow -` (stdin), `--demo` and `--run -- COMMAND`."""
    kind = None
    cleanup = []
    job = None
    if demo:
        from tlview.source.replay import Replay

        path = tempfile.mkdtemp(prefix="tlview-demo-")
        replay = Replay(path).start()
        cleanup += [replay.stop, lambda: shutil.rmtree(path, ignore_errors=True)]
    elif run is not None:
        from tlview.source.job import Job

        job = Job(run, logs)
        path = job.folder
        cleanup.append(job.stop)
    elif path == "-":
        from tlview.source.discover import TEXT
        from tlview.source.stdin_log import StdinCopy

        copy = StdinCopy()
        path, kind = copy.path, TEXT
        cleanup.append(copy.remove)
    app = TlviewApp(path, flt, follow=True, poll=poll, kind=kind, job=job)
    try:
        app.run()
    finally:
        for step in cleanup:
            step()
    if job is not None:
        print(f"tlview: the job's logs are in {job.folder}")
    return app.return_code or 0


