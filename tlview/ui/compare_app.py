"""`tlview --compare BEFORE AFTER`: the explorer on two runs. Its tree holds the problems gone,
new and the same, each opening its compile in its own run in the explorer's panes; the keys, the
help, the footer, the filter and the search are the explorer's (the same objects and key table),
and its first lines tell the totals before → after."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static, Tree
from textual.worker import Worker, WorkerState

from tlview.diagnose.compare import ComparedProblem, Comparison, compare
from tlview.domain.verdict import Kind
from tlview.index import gc_pauses
from tlview.index.index import Index
from tlview.index.indexing import open_index
from tlview.textsafe import one_line
from tlview.ui.compare_head import CompareHead
from tlview.ui.compare_tree import CompareTree, Seen, problem_text, seen_text
from tlview.ui.detail import DetailPane
from tlview.ui.filter_bar import FilterBar
from tlview.ui.jumping import KEYS, NAMES
from tlview.ui.key_hints import KeyHints
from tlview.ui.keys import COMPARE_BINDINGS, compare_key_table
from tlview.ui.logs_app import LogsApp
from tlview.ui.messages import ComparisonReady, while_shown
from tlview.ui.pane import Selection
from tlview.ui.search import SearchBar
from tlview.ui.tree_note import TreeNote
from tlview.views.filters import Filter, missing_rank
from tlview.views.tree import TreeModel

# The kinds each jump stops at: the explorer's (views.tree.JUMPS), of one problem, not a compile.
JUMP_KINDS = {"break": (Kind.GRAPH_BREAK,), "recompile": (Kind.RECOMPILE,),
              "error": (Kind.FAILURE, Kind.FRAME_SKIPPED), "perf": (Kind.PERF,)}

NOT_HERE = {
    "follow": "f follows a live run: here both runs are read once",
    "ranks": "[ ] step one run's ranks: here, / rank:N keeps one rank of both",
    "bookmarks": "M ' \" bookmark the explorer's compile ids: not in the compare view",
    "time": "t jumps to a time of one run: not in the compare view",
}


class CompareApp(LogsApp):
    """The compare view: the explorer's footer voice, filter keys, pane keys, payload actions and
    `m`/`o` (LogsApp's, as the explorer's), on a tree of problems."""

    CSS_PATH = Path(__file__).parent / "tlview.tcss"
    CSS = """
    #left { width: 40%; }
    #problem { height: auto; padding: 0 1; }
    """
    TITLE = "tlview compare"
    BINDINGS = COMPARE_BINDINGS
    ALLOW_IN_MAXIMIZED_VIEW = "KeyHints, CompareHead, SearchBar"  # what it says, the totals, a search

    def __init__(self, before: str, after: str, latest: bool = False, flt: Filter | None = None) -> None:
        super().__init__(flt, compare_key_table)  # flt: which compile ids of both runs count
        self.paths = (before, after)
        self.latest = latest
        self.comparison: Comparison | None = None
        self.runs: tuple[Index, Index] | None = None  # both runs, once read
        self._entries: dict = {}  # a compile node -> (its run's index, its tree entry)
        self._stopped_at_end: tuple | None = None  # (kind, step, node) after "the last ...": wrap next

    @property
    def tree(self) -> CompareTree:  # type: ignore[override]  # (DOMNode.tree: a rich Tree of the DOM, unused here)
        return self.query_one(CompareTree)

    @property
    def index(self) -> Index:
        """The second run (the palette's ranks)."""
        return self.runs[1] if self.runs is not None else Index()

    def compose(self) -> ComposeResult:
        yield CompareHead(*self.paths)
        with Horizontal(id="main"):
            with Vertical(id="left"):
                yield CompareTree(id="tree")
                yield TreeNote(id="tree-note")
            with Vertical():
                yield Static(id="problem")
                yield DetailPane(Selection(None, None), id="detail")  # type: ignore[arg-type]  # (no run read yet: nothing shown)
        yield FilterBar(self.flt, id="filter-input")
        yield SearchBar(id="search-input")
        yield KeyHints()

    def on_mount(self) -> None:
        if not self.query(CompareTree):
            return  # ended before it was composed (Textual mounts nothing once exiting): a signal
        self.tree.focus()
        self.call_after_refresh(gc_pauses.started, True)  # (cli.main paused the GC)
        self.watch(self.screen, "maximized", self.pane_reading.maximized_changed, init=False)
        self._start_compare()

    def _start_compare(self) -> None:
        self.run_worker(partial(self._compare, self.flt, self.runs), name="compare", group="compare",
                        thread=True, exclusive=True, exit_on_error=False)

    def _compare(self, flt: Filter, runs: tuple[Index, Index] | None) -> None:
        """(a worker thread) Both runs read once (no fork here: threads run), then matched."""
        (before_path, after_path) = self.paths
        if runs is None:
            runs = (open_index(before_path, latest=self.latest, parallel_ok=False),
                    open_index(after_path, latest=self.latest, parallel_ok=False))
        before, after = runs
        comparison = compare(before, after, before_path, after_path, keep=flt.matches if flt.active else None)
        self.post_message(ComparisonReady(comparison, before, after, flt=flt))

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """A failed comparison is said, on the head and the footer; the app stays."""
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            text = f"{type(error).__name__}: {error}"
            self.query_one(CompareHead).failure = one_line(text, 300)
            self.notify(one_line(f"{event.worker.name} failed: {text}", 300), title="error",
                        severity="error", timeout=15, markup=False)

    @while_shown
    def on_comparison_ready(self, message: ComparisonReady) -> None:
        if message.flt is not self.flt:
            return  # an older filter's
        if self.runs is None:
            self.runs = (message.before, message.after)
            for index in self.runs:
                for entry in TreeModel(index).compile_entries():
                    self._entries[entry.node] = (index, entry)
        self.comparison = message.comparison
        head = self.query_one(CompareHead)
        head.comparison, head.failure = message.comparison, ""
        self.tree.show(message.comparison)
        note = Text()
        if self.flt.active:
            note.append(f"filter {self.flt.describe()}", style="cyan")
            for problem in filter(None, (missing_rank(self.flt.rank, i.ranks()) for i in self.runs)):
                note.append(f" · {problem}", style="yellow")
        self.query_one(TreeNote).update(note)
        self._show_selected()

    # ---- the selection ---------------------------------------------------------------------------

    @on(Tree.NodeHighlighted, "#tree")
    @while_shown
    def _highlighted(self, _event: Tree.NodeHighlighted) -> None:
        self._show_selected()

    def _show_selected(self) -> None:
        """The problem under the cursor above the panes; its compile (a leaf's, or the problem's
        first), in its own run, in the panes."""
        data = self.tree.cursor_node.data if self.tree.cursor_node is not None else None
        said = (problem_text(data) if isinstance(data, ComparedProblem)
                else seen_text(data) if isinstance(data, Seen) else "")
        self.query_one("#problem", Static).update(said)
        seen = self.tree.seen
        found = self._entries.get(seen.occurrence.node) if seen is not None else None
        # (no occurrence chosen: nothing shown, as before the runs were read)
        selection = Selection(*found) if found is not None else Selection(None, None)  # type: ignore[arg-type]
        if selection != self.detail.selection:
            self.detail.show(selection)

    # ---- keys the explorer has, on two runs ------------------------------------------------------

    def apply_filter(self, flt: Filter) -> None:
        """`/` (FilterKeys): the comparison again, of the compile ids the filter keeps in both runs."""
        self.flt = flt
        self._start_compare()

    def action_not_here(self, what: str) -> None:
        """f, [ and ]: keys of one run, said why they do nothing here."""
        self.notify(NOT_HERE[what], timeout=4, markup=False)

    def action_jump(self, kind: str, step: int) -> None:
        """b/r/x: the next occurrence that is a graph break, recompile or error (its own kind, not
        its compile's: a compile that broke and recompiled is one stop of each), as in the
        explorer: it stops once at the last before wrapping. It says which of its run's problems
        of that kind it is: the head's count (what the totals count: `counted_as`)."""
        words = {k.word for k in JUMP_KINDS[kind]}
        seen_at = {leaf: leaf.data for leaf in self.tree.leaves()
                   if isinstance(leaf.data, Seen) and leaf.data.occurrence.counted_as in words}
        stops = list(seen_at)
        name = NAMES[kind]
        if not stops:
            self.notify(f"no {name}s in these problems", timeout=2)
            return
        order = self.tree.in_order()
        here = self.tree.cursor_node
        at = order.index(here) if here in order else -1
        ahead = [leaf for leaf in stops if (order.index(leaf) - at) * step > 0]
        if ahead:
            target = ahead[0] if step > 0 else ahead[-1]
        elif self._stopped_at_end == (kind, step, here):
            target = stops[0] if step > 0 else stops[-1]
        else:
            self._stopped_at_end = (kind, step, here)
            edge, again = ("last", "first") if step > 0 else ("first", "last")
            key = KEYS[kind][0 if step > 0 else 1]
            self.notify(f"that was the {edge} {name}: {key} again goes to the {again}", timeout=3)
            return
        self._stopped_at_end = None
        self.tree.select(target)
        self.screen.set_focus(self.tree)
        seen = seen_at[target]
        counted = seen.occurrence.counted_as
        alike = [leaf for leaf, other in seen_at.items()
                 if other.run == seen.run and other.occurrence.counted_as == counted]
        noun = next(k.noun for k in Kind if k.word == counted)
        self.notify(f"{noun} {alike.index(target) + 1} of {len(alike)}: {seen.run} "
                    f"[{seen.occurrence.compile_id}]", timeout=1.5, markup=False)
