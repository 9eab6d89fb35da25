"""Graphs and code of the selected compile id: pick one from the list, read it from disk, show it."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList, Select, Static
from textual.widgets.option_list import Option

from tlview.model.artifacts import Artifact
from tlview.model.tree import TreeEntry
from tlview.textsafe import visible
from tlview.ui.pane import Pane, Selection
from tlview.ui.payload_view import PayloadView


def graphs_node(entry: TreeEntry):
    """The node whose graphs an entry shows: a compile's, those of its attempt that traced."""
    if entry.node is None:
        return None
    return entry.compile.attempt_with_graphs() if entry.kind == "compile" else entry.node


def graph_artifacts(entry: TreeEntry) -> list[Artifact]:
    """Graphs and code first, in the order a user walks a compile, then the other artifacts."""
    node = graphs_node(entry)
    arts = [a for a in node.artifacts if a.kind.role.in_graphs_pane] if node else []
    return sorted(arts, key=lambda a: (a.kind.order, a.rec))


NARROW = 90  # columns of the pane below which the list becomes a one-line selector


class GraphsPane(Pane, Horizontal):
    """The list of graphs and code beside the one shown; in a narrow pane (80 columns) the list
    is a Select above the code, so the code keeps its width."""

    DEFAULT_CSS = """
    GraphsPane > OptionList { width: 34; }
    GraphsPane #graph-info { height: 1; color: $text-muted; }
    GraphsPane #graph-select { display: none; }
    GraphsPane.-narrow > OptionList { display: none; }
    GraphsPane.-narrow #graph-select { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._artifacts: list[Artifact] = []
        self._from = ""  # the attempt the graphs come from, when not the entry's own

    def compose(self):
        yield OptionList(id="graph-list")
        with Vertical():
            yield Select([], id="graph-select", prompt="no graphs", compact=True)
            yield Static(id="graph-info")
            yield PayloadView(id="graph-view")

    def on_resize(self) -> None:
        narrow = self.size.width < NARROW
        if narrow and not self.has_class("-narrow"):
            self._fill_select()
        self.set_class(narrow, "-narrow")

    def _fill_select(self) -> None:
        """The selector is filled only while it is shown: a pane switch pays for one list."""
        select = self.query_one("#graph-select", Select)
        select.set_options((visible(a.label), i) for i, a in enumerate(self._artifacts))
        highlighted = self.query_one("#graph-list", OptionList).highlighted
        if highlighted is not None and highlighted < len(self._artifacts):
            select.value = highlighted

    def show(self, selection: Selection) -> None:
        entry = selection.entry
        self._artifacts = graph_artifacts(entry) if entry is not None else []
        source = graphs_node(entry) if entry is not None else None
        self._from = f"[{source.id}] " if source is not None and source is not entry.node else ""
        options = self.query_one("#graph-list", OptionList)
        options.clear_options()
        options.add_options([Option(Text(visible(a.label), no_wrap=True, overflow="ellipsis"), id=str(i))
                             for i, a in enumerate(self._artifacts)])
        if self.has_class("-narrow"):
            self._fill_select()
        if self._artifacts:
            options.highlighted = 0
        else:
            self.query_one("#graph-view", PayloadView).set_text("", None)
            self.query_one("#graph-info", Static).update(
                Text("no graphs for this entry" if entry is not None else "", style="dim"))

    @on(OptionList.OptionHighlighted, "#graph-list")
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index < len(self._artifacts):
            select = self.query_one("#graph-select", Select)
            if self.has_class("-narrow") and select.value != event.option_index:
                select.value = event.option_index
            self.load(self._artifacts[event.option_index])

    @on(Select.Changed, "#graph-select")
    def _selected(self, event: Select.Changed) -> None:
        options = self.query_one("#graph-list", OptionList)
        if isinstance(event.value, int) and options.highlighted != event.value:
            options.highlighted = event.value  # which loads it

    @work(thread=True, exclusive=True, group="graph-load", exit_on_error=False)  # a failure is shown (app._worker_changed)
    def load(self, artifact: Artifact) -> None:
        payload = artifact.load()  # a big one is read and hashed in steps
        info = Text(f"{self._from}{visible(artifact.label)}  {len(payload.lines):,} lines")
        if payload.problems:
            info.append("  ⚠ " + "; ".join(payload.problems), style="bold red")
        self.app.call_from_thread(self._loaded, payload.lines, artifact.language, info)

    def _loaded(self, lines: list[str], language: str | None, info: Text) -> None:
        self.query_one("#graph-view", PayloadView).set_lines(lines, language)
        self.query_one("#graph-info", Static).update(info)

    def copy_text(self) -> str:
        return self.query_one("#graph-view", PayloadView).text
