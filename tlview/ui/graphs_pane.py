"""Graphs and code of the selected compile id: pick one from the list, read it from disk, show it."""

from __future__ import annotations

from typing import cast

from rich.text import Text
from textual import on, work
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList, Select, Static
from textual.widgets.option_list import Option

from tlview.domain.artifacts import Artifact
from tlview.domain.compile_node import CompileNode
from tlview.domain.ddp_split import ddp_split
from tlview.domain.role import Role
from tlview.index.kinds import RecordKind
from tlview.textsafe import visible
from tlview.ui.pane import Pane, Selection
from tlview.ui.payload_view import PayloadView, first_block
from tlview.ui.text_size import SteadyOptionList
from tlview.views.tree import TreeEntry


def graphs_node(entry: TreeEntry) -> CompileNode | None:
    """The node whose graphs an entry shows: a compile's, those of its attempt that traced."""
    if entry.node is None:
        return None
    if entry.kind == "compile":
        assert entry.compile is not None  # a compile entry has its Compile (views/tree.py)
        return entry.compile.attempt_with_graphs()
    return entry.node


def kind_order(artifact: Artifact) -> int:
    """Where the artifact's kind comes in the Graphs pane. Each kind is the index's RecordKind,
    which has an order; the domain's ArtifactKind does not declare it."""
    return cast(RecordKind, artifact.kind).order


def graph_artifacts(entry: TreeEntry) -> list[Artifact]:
    """Graphs and code first, in the order a user walks a compile, then the other artifacts."""
    node = graphs_node(entry)
    arts = [a for a in node.artifacts if a.kind.role.in_graphs_pane] if node else []
    return sorted(arts, key=lambda a: (kind_order(a), a.rec))


SIDE_LIST_FROM = 100  # terminal columns from which the list stands beside the code
NARROW = 60  # ... and pane columns below which it never does (a wide tree)


def same_or_nearest(artifacts: list[Artifact], chosen: tuple[str, int, int] | None) -> int:
    """The index of the artifact to show: the one chosen before (its name, its place among those
    of that name, its kind's order), else the first of that name, else the nearest kind (an AOT
    graph for an Inductor one); the first when nothing was chosen."""
    if chosen is None or not artifacts:
        return 0
    name, nth, order = chosen
    same = [i for i, a in enumerate(artifacts) if a.name == name]
    if same:
        return same[min(nth, len(same) - 1)]
    return min(range(len(artifacts)), key=lambda i: (abs(kind_order(artifacts[i]) - order), i))


def choice_of(artifacts: list[Artifact], index: int) -> tuple[str, int, int]:
    art = artifacts[index]
    return art.name, sum(1 for a in artifacts[:index] if a.name == art.name), kind_order(art)


def _split_said(node: CompileNode | None, artifact: Artifact) -> str:
    """Beside a graph DDPOptimizer made: why one graph became several (and this one's bucket)."""
    if node is None or not artifact.name.startswith("optimize_ddp_split"):
        return ""
    split = ddp_split([node])
    if split is None:
        return ""
    mine = next((line for b, line in zip(split.buckets, split.bucket_lines(), strict=True)
                 if artifact.ident == b.graph), None)
    return visible(f"  {split.sentence()}" + (f"; {mine}" if mine else ""))


class GraphSelect(Select):
    """The narrow pane's list. Mounted as the app ends (a signal just after the first screen),
    it finds its overlay gone: nothing to set up then (Select's own setup asks for it)."""

    def _on_mount(self, event) -> None:
        if not self.query("SelectOverlay"):
            event.prevent_default()


class GraphsPane(Horizontal, Pane):
    """The list of graphs and code beside the one shown; in a narrow pane (80 columns) the list
    is a Select above the code, so the code keeps its width."""

    DEFAULT_CSS = """
    GraphsPane > OptionList { width: 34; }
    GraphsPane #graph-info { height: auto; max-height: 3; color: $text-muted; }
    GraphsPane #graph-select { display: none; }
    GraphsPane.-narrow > OptionList { display: none; }
    GraphsPane.-narrow #graph-select { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._artifacts: list[Artifact] = []
        self._from = ""  # the attempt the graphs come from, when not the entry's own
        self._node: CompileNode | None = None  # the node whose graphs are listed
        self._chosen: tuple[str, int, int] | None = None  # what the user picked: kept across compile ids
        self._placed: int | None = None  # what show() highlighted (not the user's choice)

    def compose(self):
        yield SteadyOptionList(id="graph-list")
        with Vertical():
            yield GraphSelect([], id="graph-select", prompt="no graphs", compact=True)
            yield Static(id="graph-info")
            yield PayloadView(id="graph-view")

    def on_resize(self) -> None:
        narrow = self.app.size.width < SIDE_LIST_FROM or self.size.width < NARROW
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
        if entry is None:
            self._artifacts, self._from, self._node = [], "", None
        else:
            self._artifacts = graph_artifacts(entry)
            source = self._node = graphs_node(entry)
            self._from = f"[{source.id}] " if source is not None and source is not entry.node else ""
        options = self.query_one("#graph-list", OptionList)
        options.clear_options()
        options.add_options([Option(Text(visible(a.label), no_wrap=True, overflow="ellipsis"), id=str(i))
                             for i, a in enumerate(self._artifacts)])
        if self.has_class("-narrow"):
            self._fill_select()
        if self._artifacts:
            self._placed = options.highlighted = same_or_nearest(self._artifacts, self._chosen)
        else:
            self.query_one("#graph-view", PayloadView).set_text("", None)
            self.query_one("#graph-info", Static).update(
                Text("no graphs for this entry" if entry is not None else "", style="dim"))

    def choose(self, role: Role, entry) -> None:
        """Make the first artifact of `role` the choice before `entry` is shown (`o`): it is then
        the one loaded, not another first, cancelled by it."""
        artifacts = graph_artifacts(entry) if entry is not None else []
        found = next((i for i, a in enumerate(artifacts) if a.kind.role is role), None)
        if found is not None:
            self._chosen = choice_of(artifacts, found)

    def pick(self, role: Role) -> bool:
        """Show the first artifact of `role` (the output code: `o`); False when there is none."""
        found = next((i for i, a in enumerate(self._artifacts) if a.kind.role is role), None)
        if found is not None:
            self.query_one("#graph-list", OptionList).highlighted = found
        return found is not None

    @on(OptionList.OptionHighlighted, "#graph-list")
    def _picked(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index < len(self._artifacts):
            if event.option_index != self._placed:  # the user's choice (a nearest one is not)
                self._chosen = choice_of(self._artifacts, event.option_index)
            self._placed = None
            select = self.query_one("#graph-select", Select)
            if self.has_class("-narrow") and select.value != event.option_index:
                select.value = event.option_index
            self.loading_started(self.load(self._artifacts[event.option_index]))

    @on(Select.Changed, "#graph-select")
    def _selected(self, event: Select.Changed) -> None:
        options = self.query_one("#graph-list", OptionList)
        if isinstance(event.value, int) and options.highlighted != event.value:
            options.highlighted = event.value  # which loads it

    def loading_view(self) -> PayloadView:
        return self.query_one("#graph-view", PayloadView)

    # a failure is shown (app._worker_changed)
    @work(thread=True, exclusive=True, group="graph-load", exit_on_error=False)
    def load(self, artifact: Artifact) -> None:
        payload = artifact.load()  # a big one is read and hashed in steps
        info = Text(f"{self._from}{visible(artifact.label)}  {len(payload.lines):,} lines")
        if payload.problems:
            info.append("  ⚠ " + "; ".join(payload.problems), style="bold red")
        info.append(_split_said(self._node, artifact), style="dim")
        head = first_block(payload.lines, artifact.language)
        self.app.call_from_thread(self._loaded, payload.lines, artifact.language, info, head)

    def _loaded(self, lines: list[str], language: str | None, info: Text, head=None) -> None:
        self.query_one("#graph-view", PayloadView).set_lines(lines, language, head)
        self.query_one("#graph-info", Static).update(info)

    def copy_text(self) -> str:
        return self.query_one("#graph-view", PayloadView).text
