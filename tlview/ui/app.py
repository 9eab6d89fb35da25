"""The tlview TUI: a frame tree on the left, the selected compile id's panes on the right.

The index is filled by a thread worker in chunks (the first screen comes at once, a 1 GB trace
fills in behind it with a progress bar); a timer re-renders the tree when the index grew.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Iterable

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, Input, ProgressBar, Static, Tree
from textual.worker import get_current_worker

from tlview.model.filters import CATEGORIES, Filter, FilterError
from tlview.model.index import Index
from tlview.model.parallel import index_with_pool
from tlview.model.search import search_payloads
from tlview.model.tree import TreeEntry, TreeModel, build_tree
from tlview.source.discover import find_logs
from tlview.source.trace_file import TraceFile

from tlview.ui.detail import TABS, DetailPane
from tlview.ui.frame_tree import FrameTree
from tlview.ui.help_screen import HelpScreen
from tlview.ui.messages import IndexProgress, JumpToCompile

CHUNK = 16 << 20  # bytes indexed between two progress reports (about 30 ms)
POOL_BYTES = 64 << 20  # trace files from this size are indexed by a process pool
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
        Binding("y", "copy_payload", "Copy", id="copy"),
        Binding("e", "open_external", "Pager", id="open-external"),
        *[Binding(str(i + 1), f"show_tab('{tab_id}')", title, show=False, id=f"tab-{tab_id}")
          for i, (tab_id, title, _) in enumerate(TABS)],
    ]

    def __init__(self, path: str, flt: Filter | None = None, latest: bool = False,
                 index: Index | None = None) -> None:
        super().__init__()
        self.path = path
        self.latest = latest
        self.index = index or Index()
        self.flt = flt or Filter()
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

    def on_index_progress(self, message: IndexProgress) -> None:
        self._progress = (message.done, message.total, message.finished)
        bar = self.query_one(ProgressBar)
        bar.update(total=message.total, progress=message.done)
        if message.finished:
            bar.display = False
            self._tick()
        elif self.model is None or not self.model.roots:
            self._tick()  # the first compile ids: show them now, not at the next tick

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
        self.model = build_tree(self.index, self.flt)
        tree.show_model(self.model, rebuild=rebuild)
        note = self.query_one("#tree-note", Static)
        if self.flt.active:
            note.update(Text(f"filter: {self.flt.describe()} — {self.model.shown} shown, "
                             f"{self.model.hidden} hidden{self._search_note}", style="cyan"))
        elif self.model.shown == 0 and self._progress[2]:
            note.update(Text("no compile ids in these logs", style="yellow"))
        else:
            note.update("")
        if tree.cursor_node is None or tree.cursor_node.data is None:
            entries = self.model.compile_entries()
            if entries:
                tree.select_key(entries[0].key, move_only=True)
        detail = self.query_one(DetailPane)
        if detail.entry is not None and tree.cursor_node is not None and tree.cursor_node.data is not None:
            if tree.cursor_node.data is not detail.entry:
                detail.entry = tree.cursor_node.data
                detail.refresh_entry()

    def _render_status(self) -> None:
        index = self.index
        key = (index.generation, self._progress, self.flt.describe())
        if key == self._status_key:
            return  # Static.update re-lays out the screen: only when something changed
        self._status_key = key
        totals = index.totals()
        done, total, finished = self._progress
        files = len(index.sources)
        ranks = [r for r in index.ranks() if r is not None]
        text = Text()
        text.append(f" {os.path.basename(os.path.normpath(self.path))}", style="bold")
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
        if not finished and total:
            text.append(f" · indexing {done * 100 // total}%", style="bold")
        self.query_one("#status", Static).update(text)

    # ---- selection -------------------------------------------------------------------------

    @on(Tree.NodeHighlighted, "#tree")
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        self.query_one(DetailPane).show(event.node.data)

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
        yield SystemCommand("Copy payload", "copy the shown payload to the clipboard", self.action_copy_payload)
        yield SystemCommand("Keys", "list every key", self.action_help)

    def _set_filter(self, expression: str) -> None:
        box = self.query_one("#filter-input", Input)
        box.display = True
        box.value = expression


def run_app(path: str, flt: Filter, latest: bool = False) -> int:
    app = TlviewApp(path, flt, latest=latest)
    app.run()
    return app.return_code or 0


