"""`tlview --compare BEFORE AFTER`: the problems gone, new and the same, each opening its compile
in its run (the detail panes of the explorer, on that run's index)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Static, Tree
from textual.worker import Worker, WorkerState

from tlview.ui.no_color import readable_no_color
from tlview.diagnose.compare import Comparison, Problem, compare
from tlview.model.indexing import open_index
from tlview.model.look import short_path
from tlview.model.tree import TreeModel
from tlview.textsafe import one_line
from tlview.ui.detail import DetailPane
from tlview.ui.messages import ComparisonReady
from tlview.ui.pane import Selection

GROUPS = (("gone", "Gone", "green"), ("new", "New", "red"), ("same", "Same", "yellow"))


class CompareApp(App[int]):
    TITLE = "tlview compare"
    CSS = """
    #compare-tree { width: 45%; border-right: solid $primary-darken-2; }
    #compare-head { height: auto; max-height: 8; padding: 0 1; background: $boost; }
    """
    BINDINGS = [("q", "quit", "Quit"), ("ctrl+c", "quit", "Quit"),
                Binding("ctrl+z", "suspend_process", "Suspend", show=False)]  # a job's Ctrl+Z

    def __init__(self, before: str, after: str, latest: bool = False, keep=None) -> None:
        super().__init__()
        readable_no_color(self._filters)
        self.paths = (before, after)
        self.latest, self.keep = latest, keep  # --latest, and --rank/--filter as a test of a compile id
        self.comparison: Comparison | None = None
        self._entries: dict = {}  # node -> its tree entry, per run

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Tree("reading both runs…", id="compare-tree")
            with Vertical():
                yield Static("", id="compare-head")
                yield DetailPane(Selection(None, None), id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.run_worker(self._compare, name="compare", thread=True, exit_on_error=False)
        self.query_one(Tree).focus()

    def _compare(self) -> None:
        """(a worker thread) no fork here: threads run"""
        before, after = (open_index(path, latest=self.latest, parallel_ok=False) for path in self.paths)
        self.post_message(ComparisonReady(compare(before, after, *self.paths, keep=self.keep), before, after))

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR:
            error = event.worker.error
            self.query_one(Tree).root.set_label(f"could not compare: {type(error).__name__}: {error}")
            self.notify(f"{event.worker.name} failed: {error}", severity="error", timeout=10)

    def on_comparison_ready(self, message: ComparisonReady) -> None:
        self.comparison = comparison = message.comparison
        for index in (message.before, message.after):
            for entry in TreeModel(index).compile_entries():
                self._entries[entry.node] = (index, entry)
        tree = self.query_one(Tree)
        tree.clear()
        before, after = comparison.before_totals, comparison.after_totals
        tree.root.set_label(f"{comparison.before_name} → {comparison.after_name}: "
                            f"recompiles {before['recompiles']} → {after['recompiles']}, graph breaks "
                            f"{before['graph_breaks']} → {after['graph_breaks']}, failures "
                            f"{before['errors']} → {after['errors']}")
        for group, title, style in GROUPS:
            problems = getattr(comparison, group)
            branch = tree.root.add(Text(f"{title} ({len(problems)})", style=f"bold {style}"),
                                   data=group, expand=True)
            for problem in problems:
                item = branch.add(_problem_label(problem), data=problem, expand=group != "same")
                for run, found in (("before", problem.before), ("after", problem.after)):
                    for o in found:
                        item.add_leaf(f"{run}: [{o.compile_id}]", data=(run, o))
        tree.root.expand()
        tree.move_cursor(tree.root)

    @on(Tree.NodeHighlighted, "#compare-tree")
    def _highlighted(self, event: Tree.NodeHighlighted) -> None:
        data = event.node.data
        head = self.query_one("#compare-head", Static)
        if isinstance(data, Problem):
            head.update(_problem_text(data))
            first = (data.after or data.before)[0]
            self._open(first)
        elif isinstance(data, tuple):
            run, occurrence = data
            head.update(Text(f"{run} run: [{occurrence.compile_id}]  {one_line(occurrence.why, 300)}"))
            self._open(occurrence)

    def _open(self, occurrence) -> None:
        """Its compile, in its own run, in the detail panes."""
        found = self._entries.get(occurrence.node)
        if found is not None:
            index, entry = found
            self.query_one(DetailPane).show(Selection(index, entry))


def _problem_label(problem: Problem) -> Text:
    label = Text(f"{problem.kind} ", style="bold")
    label.append(f"{problem.cause} ")
    label.append(f"{problem.function} {short_path(problem.location)} ", style="dim")
    label.append(f"{len(problem.before)} → {len(problem.after)}")
    return label


def _problem_text(problem: Problem) -> Text:
    text = Text(f"{problem.kind} ({problem.cause}) in {problem.function}", style="bold")
    where = short_path(problem.location)
    if problem.location_before and problem.location_after and problem.location_before != problem.location_after:
        where += f" (was {short_path(problem.location_before)})"
    text.append(f" at {where}\n")
    text.append(f"why: {one_line(problem.why, 300)}\n")
    text.append(f"fix: {one_line(problem.fix, 300)}", style="dim")
    return text
